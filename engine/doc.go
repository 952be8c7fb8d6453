// Package engine is routerlab's discrete-event simulation of a fleet of vLLM workers behind
// a router, replaying a Mooncake trace.
//
// # Clock and events
//
// Time is integer microseconds. One event heap orders everything by (time, phase, id):
// at one instant, steps ending then finish first, then arrivals are sent and requests
// reaching the server routed, then workers start their next step, then the snapshot is
// taken (see the phase constants, events.go, for the phases between). Ties inside
// a phase go by worker or trace index, never by insertion order, so the order of events
// does not depend on how the loop reached them. There are no goroutines, no wall clock
// and no randomness in the engine itself (the router owns the only RNG, seeded from
// Config.Seed). A worker's step is one event: its start (scheduling, pricing) and its end
// (tokens, completions).
//
// # One worker: vLLM V1 scheduling
//
// Each step, with a token budget of max_num_batched_tokens:
//  1. Running requests in admission order: a decode takes 1 token, a request in (chunked)
//     prefill takes min(remaining, budget). If its blocks cannot be allocated, the most
//     recently admitted running request is preempted (blocks freed, back to the front of
//     the waiting queue, recomputed later from scratch: prompt plus generated tokens), until
//     it fits or it is itself the victim.
//  2. Unless something was preempted this step, waiting requests FIFO while budget, a
//     sequence slot (max_num_seqs) and blocks allow; the first that does not fit stops
//     admission. Its prefix hit is the longest run of cached full blocks of its prompt,
//     capped so at least its last token is computed.
//  3. The step lasts timer.StepTimeUS(batch) for exactly the scheduled work: one Chunk per
//     prefilling request (new tokens, cached context before them) and the decodes with the
//     sum of their context lengths.
//
// With async scheduling (Deployment.AsyncScheduling, vLLM's --async-scheduling) a step that
// directly follows another was scheduled when that one started: waiting requests that
// arrived after that instant, or at it, wait for the next step. An idle worker schedules at
// once. The decode fast path, which plans steps ahead without arrivals, is off then.
//
// At the step's end every scheduled request adds its tokens to its computed tokens; prompt
// blocks that became full enter the prefix cache (one BlocksStored KV event per step); a
// request whose computed tokens caught up with its tokens samples one token (its first
// token, TTFT, at the end of the step finishing prefill). A request is done after
// output_length tokens; its blocks are freed tail first.
//
// Block pool: num_gpu_blocks blocks of block_size tokens. Free blocks without cache content
// are used first; cached unreferenced blocks are evicted in LRU order only when none is
// left, each eviction publishing BlocksRemoved before the step runs. Only full prompt blocks
// are cached (generated tokens have no content in a trace). Engine block hashes chain the
// trace's hash ids (see hash.go), so sharing follows the trace's 512-token blocks.
//
// # Fleet and replay
//
// A request is sent at its arrival (its TTFT counts from there) and reaches the server then,
// or Deployment.RequestPathUS later in a phase of its own (the client's HTTP request path);
// in a closed loop the next request is sent Deployment.StreamEndUS after a completion. On
// reaching the server a request is routed (router.Route with its block hashes) and queued on the
// chosen worker; FirstToken and Finished follow its progress, and the router's indexer sees
// the pools only through the KV events. With API-server tokenisation
// (Deployment.APIServerTokenizeNS, apiserver.go) the request reaches the worker's engine once
// that worker's one tokenizer thread, done with earlier windows, has collected it (2 ms
// window) and tokenised its window's prompts (input_length × ns each: one after another, or
// as long as the longest under Deployment.APIServerTokenizeBatching parallel), in its own
// phase between arrivals and step starts.
//
// Under the dynosim timing reference (Deployment.TimingReference, Dynamo's mocker) a step's
// prompt blocks enter the prefix cache and reach the router (BlocksStored) when the step
// starts, not when it ends, and the batch names the prompts the step completes
// (Batch.FirstTokens) so the timer can price their first token in its decode pass. Closed loop (ReplayConcurrency N): N requests at
// t = 0, and each completion sends the next trace request at that instant. Open loop:
// request i arrives at timestamp_i / ArrivalSpeedupRatio.
//
// # Invariants (property_test.go checks them on random workloads after every event)
//
//   - Every request completes exactly once, with exactly output_length tokens (so
//     Σ (output_length − 1) inter-token gaps); a worker's running requests never exceed
//     max_num_seqs and a step's tokens never exceed max_num_batched_tokens.
//   - Blocks in use never exceed num_gpu_blocks; every block is exactly one of in use,
//     cached free or plain free, and its reference count equals the number of running
//     requests holding it.
//   - The KV events, replayed, equal each pool's cached hashes; the router's overlap for
//     any prompt equals the pool's longest cached prefix.
//   - The clock never goes backwards; the decode fast path (fast.go) and RunUntil in slices
//     give byte-identical reports to the step-by-step loop and to Run.
//   - Same config, trace and seed: byte-identical report JSON apart from wall_time_ms.
package engine
