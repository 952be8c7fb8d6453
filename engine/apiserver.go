package engine

// API-server tokenisation. A client that sends text prompts to vLLM's OpenAI server (as
// InferenceX's benchmark_serving.py does with its random dataset) waits while the server
// tokenises the prompt before the engine core sees the request: the server runs the tokenizer
// off its event loop on a one-thread executor (vllm#10635, vllm#25301), batching concurrent
// prompts into one call (vllm#19334). The cost grows with the prompt and does not shrink with
// tensor parallelism. A request routed at t reaches its worker's engine at
// t + ⌈input_length × tokenizeNS / 1000⌉ µs; TTFT counts from t. Dynamo's frontend and its
// replay hand workers token ids, so fleet experiments leave this off.

// tokenize delays request i, routed at t, by its tokenisation.
func (s *Sim) tokenize(i int, t int64) {
	d := (int64(s.reqs[i].isl)*s.tokenizeNS + 999) / 1000
	s.heap.push(event{time: t + d, phase: phaseTokenized, id: int32(i)})
}
