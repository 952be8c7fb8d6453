package silicon

import (
	"math/rand/v2"

	"github.com/routerlab/routerlab/trace"
)

// The client of AIConfigurator's aic-auto-gap-analysis rows, as its source says it ran.
//
// AIConfigurator's runner (src/aiconfigurator/eval/benchmarks/genai_perf_runner.py: genai-perf
// from 961028348, 2025-08-22; aiperf from 4361371a6, 2025-10-14, to its removal in c0c44d911,
// 2026-03-03) runs, per concurrency c, `aiperf profile --endpoint-type chat --endpoint
// /v1/chat/completions --streaming --synthetic-input-tokens-mean ISL
// --synthetic-input-tokens-stddev 0 --output-tokens-mean OSL --output-tokens-stddev 0
// --extra-inputs max_tokens:OSL min_tokens:OSL ignore_eos:true --concurrency c
// --request-count 10c --warmup-request-count 2c --num-dataset-entries 12c`. aiperf at
// db4f6397 (2025-10-10, four days before the runner switched to it)
// then does this:
//   - prompts: each of the 12c entries is a slice of exactly ISL tokens of its tokenised
//     Shakespeare corpus from a random offset, decoded to text (dataset/generator/prompt.py,
//     _sample_tokens; stddev 0 makes sample_positive_normal_integer return ISL). It is sent
//     as one user message to the chat endpoint, so Dynamo's frontend applies the model's chat
//     template and tokenises it (lib/llm/src/preprocessor.rs): the engine sees ISL tokens plus
//     the template's (8 for Qwen3: <|im_start|>user\n … <|im_end|>\n<|im_start|>assistant\n;
//     Llama 3.1's adds its default system header), give or take the tokens a slice boundary
//     re-tokenises into. Not priced: the replay prefills ISL tokens.
//   - output: max_tokens = min_tokens = OSL with ignore_eos: exactly OSL tokens. Dynamo's
//     frontend reads the top-level ignore_eos and min_tokens (lib/llm/src/protocols/openai/
//     common_ext.rs, read at 0d98a95c) into the request's stop conditions, and its SGLang
//     worker hands max_new_tokens and ignore_eos to the engine
//     (components/backends/sglang/src/dynamo/sglang/request_handlers/decode_handler.py at
//     5cde2407, _build_sampling_params), so no request ends early at an EOS.
//   - issue timing: the concurrency mode is CONCURRENCY_BURST (timing/request_rate_strategy.py:
//     next_interval 0) behind an asyncio.Semaphore(c) released when a worker returns a credit
//     (workers/worker.py returns it once the stream has ended and its record is pushed); the
//     warm-up phase's credits all return before the profiling phase starts
//     (timing/credit_issuing_strategy.py, _execute_phases). So the profiling phase opens with a
//     burst of c and each finished request is followed at once by the next — the replay's
//     closed loop. Nothing in it spreads a wave's requests apart but each worker fetching its
//     next conversation from the dataset manager and parsing the finished stream.
//   - dataset: each credit takes a conversation uniformly at random with replacement from the
//     12c entries (dataset/dataset_manager.py, _return_any_conversation: random.choice), warm-up
//     and profiling alike; later releases added --dataset-sampling-strategy (shuffle for
//     synthetic data: no repeats within 12c draws). The SGLang and TRT-LLM rows are undated,
//     so which ran is not known: the replay keeps distinct prompts by default and
//     --dataset-entries-per-slot replays the with-replacement draws (datasetDraws).
//   - metrics: TTFT is the first SSE response after the request's start; ITL is (latency −
//     TTFT) / (output tokens − 1) with the output tokens counted by re-tokenising the streamed
//     text on the client (parsers/inference_result_parser.py), which is not the OSL the
//     engine ran when the detokenised text re-tokenises differently (special tokens an
//     ignore_eos run emits are skipped by the detokeniser): not modelled, it needs the text.
//
// (Before 2025-10-14 the runner called genai-perf with the same arguments; genai-perf's
// perf_analyzer is not modelled apart from them.)

// datasetDraws are row r's warm-up and timed requests under aiperf's synthetic dataset at
// db4f6397: DatasetEntriesPerSlot × concurrency distinct prompts, each request drawing one
// uniformly with replacement (warm-up first, then the timed ones, from one stream), so a
// prompt drawn twice repeats its every block. The warm-up runs on a fleet of its own
// (benchmarkRun), so repeats of warm-up prompts do not hit the timed phase's cache.
func datasetDraws(warm, timed int, r Row, b Benchmark, blockSize int, seed uint64) (warmup, measured []trace.Request) {
	pool := distinctPrompts(r.Concurrency*b.DatasetEntriesPerSlot, r, b, blockSize, seed)
	rng := rand.New(rand.NewPCG(seed, 0xa1be4f))
	draw := func(n int) []trace.Request {
		out := make([]trace.Request, n)
		for i := range out {
			out[i] = pool[rng.IntN(len(pool))]
		}
		return out
	}
	return draw(warm), draw(timed)
}
