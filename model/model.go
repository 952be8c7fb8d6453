// Package model prices one forward step of a vLLM worker from silicon-measured operator
// tables and sizes its KV cache from memory arithmetic.
package model

// Chunk is the prefill work of one request inside a step: NewTokens prompt tokens computed
// now, attending to CachedTokens tokens of context already in the KV cache (prefix-cache hits
// plus earlier chunks of the same prompt).
type Chunk struct {
	NewTokens    int
	CachedTokens int
}

// Batch is everything one engine step computes. Non-attention work (GEMMs, MoE, collectives)
// is priced once at the step's total token count; attention is priced per prefill chunk and
// for the decode batch as a whole.
type Batch struct {
	Prefill []Chunk
	// Decodes is the number of requests generating one token in this step.
	Decodes int
	// DecodeContextTokens is the sum over decoding requests of their context length
	// (prompt plus tokens generated so far) at the start of the step.
	DecodeContextTokens int64
	// FirstTokens is how many prefill chunks complete their prompt in this step (their
	// request samples its first token at the step's end), and FirstTokenContextTokens the
	// sum of those prompts' lengths. The silicon reference prices them inside the chunks;
	// the dynosim reference adds them to its separate decode pass, as Dynamo's mocker does.
	FirstTokens             int
	FirstTokenContextTokens int64
}

// StepTimer returns the wall duration of one engine step in integer microseconds (>= 1).
// Implementations must be pure functions of the batch: the engine's determinism relies on it.
type StepTimer interface {
	StepTimeUS(b *Batch) int64
}

// DecodeStepTimer is a StepTimer that prices a stretch of decode-only steps in one call
// (the engine's decode fast path): out[j] must equal StepTimeUS of the batch of decodes
// decoding requests with ctx + j·decodes context tokens.
type DecodeStepTimer interface {
	StepTimer
	DecodeStepsUS(decodes int, ctx int64, out []int64)
}
