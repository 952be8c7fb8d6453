package engine

// API-server tokenisation. A client that sends text prompts to vLLM's OpenAI server (as
// InferenceX's benchmark_serving.py does with its random dataset) waits while the server
// tokenises the prompt before the engine core sees the request. vLLM's server does this in
// AsyncMicrobatchTokenizer (vllm/utils/async_utils.py, vllm#19334): one batcher task takes the
// first queued prompt, collects whatever else arrives within 2 ms (at most 32 prompts), and
// tokenises the batch on a one-thread executor; it collects the next batch only once that call
// has returned. So prompts queue behind each other (a burst of 32 long prompts waits for all of
// them), and a lone prompt first waits out the 2 ms window. The prompts of a batch are priced
// one after another, each released when its own share is done (HF's batch encode may spread a
// batch over threads; one thread is the bound). The cost grows with the prompt and does not
// shrink with tensor parallelism. TTFT counts from the request's arrival. Dynamo's frontend
// and its replay hand workers token ids, so fleet experiments leave this off.

const (
	tokenizerWindowUS = 2000 // AsyncMicrobatchTokenizer batch_wait_timeout_s = 0.002
	tokenizerMaxBatch = 32   // AsyncMicrobatchTokenizer max_batch_size
)

// apiServer is one worker's tokenizer thread and its batcher.
type apiServer struct {
	windowEnd int64 // when the batch being collected is handed to the thread
	batch     int   // prompts in that batch
	free      int64 // when the thread has tokenised everything handed to it
}

// tokenize queues request i, routed at t, on its worker's tokenizer and schedules its arrival
// at the engine.
func (s *Sim) tokenize(i int, t int64) {
	d := (int64(s.reqs[i].isl)*s.tokenizeNS + 999) / 1000
	a := &s.workers[s.reqs[i].worker].api
	if t < a.windowEnd && a.batch < tokenizerMaxBatch {
		a.batch++ // joins the batch being collected
	} else {
		// The batcher picks it up when the thread is idle and collects for 2 ms.
		a.windowEnd = max(t, a.free) + tokenizerWindowUS
		a.batch = 1
		a.free = a.windowEnd
	}
	a.free += d
	s.heap.push(event{time: a.free, phase: phaseTokenized, id: int32(i)})
}
