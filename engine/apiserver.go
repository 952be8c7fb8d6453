package engine

// API-server tokenisation. A client that sends text prompts to vLLM's OpenAI server (as
// InferenceX's benchmark_serving.py does with its random dataset) waits while the server
// tokenises the prompt before the engine core sees the request. vLLM 0.19's server does this in
// AsyncMicrobatchTokenizer (vllm/utils/async_utils.py, vllm#19334): one batcher task takes the
// first queued prompt, collects whatever else arrives within 2 ms (at most 32 prompts) and
// tokenises the batch on a one-thread executor; it collects the next batch only once that call
// has returned. A completion request's encode arguments carry truncation with max_length =
// max_model_len − max_tokens + 1 (vllm#31366's early-fail guard, renderers/params.py
// get_encode_kwargs), which is not the tokenizer's model_max_length, so the batcher files it
// under ("encode", "other") and cannot batch it: the executor call tokenises the batch's prompts
// one after another, and every prompt of the batch is released when the call returns. So a
// burst of long prompts waits for all of them, and a lone prompt first waits out the window.
// The cost grows with the prompt and does not shrink with tensor parallelism. TTFT counts from
// the request's arrival. Dynamo's frontend and its replay hand workers token ids, so fleet
// experiments leave this off.

const (
	tokenizerWindowUS = 2000 // AsyncMicrobatchTokenizer batch_wait_timeout_s = 0.002
	tokenizerMaxBatch = 32   // AsyncMicrobatchTokenizer max_batch_size
)

// apiServer is one worker's tokenizer thread and its batcher.
type apiServer struct {
	collecting bool    // a batch is being collected
	windowEnd  int64   // when that batch is handed to the thread
	work       int64   // µs its prompts take, one after another
	batch      []int32 // its requests
	seq        uint32  // batches opened; a close event of an earlier batch is stale
	free       int64   // when the thread has tokenised every batch handed to it
}

// tokenize queues request i, routed at t, on its worker's tokenizer.
func (s *Sim) tokenize(i int, t int64) {
	d := (int64(s.reqs[i].isl)*s.tokenizeNS + 999) / 1000
	wi := s.reqs[i].worker
	a := &s.workers[wi].api
	if !a.collecting || t >= a.windowEnd {
		// The batcher picks the prompt up when the thread is idle and collects for 2 ms.
		a.collecting = true
		a.windowEnd = max(t, a.free) + tokenizerWindowUS
		a.work, a.batch = 0, a.batch[:0]
		a.seq++
		s.heap.push(event{time: a.windowEnd, phase: phaseTokenizerClose, gen: a.seq, id: wi})
	}
	a.batch = append(a.batch, int32(i))
	a.work += d
	if len(a.batch) == tokenizerMaxBatch {
		s.closeTokenizerBatch(a, t) // full: handed over at once
	}
}

// closeTokenizerBatch hands the batch being collected to the thread at t; its prompts reach
// their engine together when the thread has tokenised them all.
func (s *Sim) closeTokenizerBatch(a *apiServer, t int64) {
	a.collecting = false
	a.free = t + a.work
	for _, i := range a.batch {
		s.heap.push(event{time: a.free, phase: phaseTokenized, id: i})
	}
}
