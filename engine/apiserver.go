package engine

// API-server tokenisation. A client that sends text prompts to vLLM's OpenAI server (as
// InferenceX's benchmark_serving.py does with its random dataset) waits while the server
// tokenises the prompt before the engine core sees the request. From 0.10 vLLM's server does
// this in AsyncMicrobatchTokenizer (vllm/utils/async_utils.py, vllm#19334): one batcher task
// takes the first queued prompt, collects whatever else arrives within 2 ms (at most 32
// prompts) and tokenises the batch in one call on a one-thread executor; it collects the next
// batch only once that call has returned, and every prompt of the batch is released when it
// returns. So a burst of long prompts waits for the whole call, and a lone prompt first waits
// out the window. How long the call takes depends on the release (model.TokenizeBatchingOf):
// from 0.16 a completion prompt's encode arguments (vllm#31366's truncation guard) file it
// under ("encode", "other"), which the batcher cannot batch, and the call tokenises the
// prompts one after another (model.TokenizeSerial: the sum of their shares); in 0.10 to 0.15
// they are batchable and the call is one tokenizer(prompts), which HF tokenizers encodes on
// its Rayon pool, a prompt per thread (model.TokenizeParallel: the longest prompt's share).
// SGLang's TokenizerManager has no batcher (model.TokenizeEach): it tokenises each prompt
// inline on its event loop as the request arrives, so prompts wait only for the ones before
// them. The cost grows with the prompt and does not shrink with tensor parallelism. TTFT
// counts from the request's arrival. Dynamo's frontend and its replay hand workers token ids, so
// fleet experiments leave this off.

const (
	tokenizerWindowUS = 2000 // AsyncMicrobatchTokenizer batch_wait_timeout_s = 0.002
	tokenizerMaxBatch = 32   // AsyncMicrobatchTokenizer max_batch_size
)

// apiServer is one worker's tokenizer thread and its batcher.
type apiServer struct {
	collecting bool    // a batch is being collected
	windowEnd  int64   // when that batch is handed to the thread
	work       int64   // µs its prompts take, one after another
	longest    int64   // µs its longest prompt takes
	batch      []int32 // its requests
	seq        uint32  // batches opened; a close event of an earlier batch is stale
	free       int64   // when the thread has tokenised every batch handed to it
}

// tokenize queues request i, routed at t, on its worker's tokenizer.
func (s *Sim) tokenize(i int, t int64) {
	d := (int64(s.reqs[i].isl)*s.tokenizeNS + 999) / 1000
	wi := s.reqs[i].worker
	a := &s.workers[wi].api
	if s.tokenizeEach {
		a.free = max(t, a.free) + d
		s.heap.push(event{time: a.free, phase: phaseTokenized, id: int32(i)})
		return
	}
	if !a.collecting || t >= a.windowEnd {
		// The batcher picks the prompt up when the thread is idle and collects for 2 ms.
		a.collecting = true
		a.windowEnd = max(t, a.free) + tokenizerWindowUS
		a.work, a.longest, a.batch = 0, 0, a.batch[:0]
		a.seq++
		s.heap.push(event{time: a.windowEnd, phase: phaseTokenizerClose, gen: a.seq, id: wi})
	}
	a.batch = append(a.batch, int32(i))
	a.work += d
	a.longest = max(a.longest, d)
	if len(a.batch) == tokenizerMaxBatch {
		s.closeTokenizerBatch(a, t) // full: handed over at once
	}
}

// closeTokenizerBatch hands the batch being collected to the thread at t; its prompts reach
// their engine together when the call has tokenised them all.
func (s *Sim) closeTokenizerBatch(a *apiServer, t int64) {
	a.collecting = false
	call := a.work
	if s.tokenizeParallel {
		call = a.longest
	}
	a.free = t + call
	for _, i := range a.batch {
		s.heap.push(event{time: a.free, phase: phaseTokenized, id: i})
	}
}
