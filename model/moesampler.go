package model

// Where AIConfigurator's first power-law sampler put a small step's tokens (issue 34).
//
// The TRT-LLM 1.2.0rc5 expert rows were drawn by collector/helper.py as it stood when they
// were collected (ai-dynamo/aiconfigurator 13669a172 and 217a5739b, 2025-12-22;
// _generate_power_law_distribution, which power_law_logits_v3 calls): each expert's weight
// from a power law on [0.01, 2] when tokens × top-k is at most the experts, its share of
// tokens × top-k rounded, and the shortfall added one token at a time to the experts in
// descending order of their rounded counts (torch.argsort(descending=True), sorted_indices[i]).
// At a step so small that every share rounds to zero, all counts tie at zero and the whole
// step lands on the experts the sort lists first, the lowest-numbered ones, which expert
// parallelism places on rank 0, the rank the row measures. The row then times one rank
// holding every one of the step's token-expert pairs, where TensorRT-LLM's ranks each hold
// their own share of a real step's experts: DeepSeek-V3's fp8_block rows on H200 at moe_ep 8
// cost 0.144 ms at 1 token and 0.214 ms at 2 (8 and 16 experts on rank 0; the balanced rows
// 0.054 and 0.065), against 0.089 ms at 4 tokens, where the shares no longer all round to zero.
// The import's running maximum would carry the 2-token row onto every larger step up to 32
// tokens. AIConfigurator replaced that fill by a round-robin over the ranks in 13dadba3b
// (#876, 2026-04-19, _round_robin_adjust_per_rank), after these rows were collected.
//
// SGLang's expert-parallel rows of before 13dadba3b came from a later version of that fill
// and are not repriced by this rule. Its collector measured moe_ep 1 only until c7ddbd307
// (#684, 2026-04-13; collector/sglang/collect_moe.py asserted moe_ep_size == 1), and from
// 39bf0f6c1 (#753) times rank 0's share of a global draw (power_law_logits_v3 with moe_ep,
// return_rank0_info, build_rank0_local_workload). helper.py then (2b97693fd, 2026-02-10, to
// 13dadba3b) added the shortfall from the bottom of the descending sort ("start from
// smallest") and swapped the most-loaded rank's experts onto rank 0, so the fill lands on
// rank 0 at every narrow-range step, not only at an all-zero one: a replica of that draw
// (256 experts top-8, moe_ep 4, alpha 1.2, ties in index order) puts 8, 15.7, 18.0 and 27.9 of
// 8, 16, 32 and 64 pairs on rank 0 at 1, 2, 4 and 8 tokens (balanced 2, 4, 8, 16). Leaving out
// the all-zero rows would price 1 and 2 tokens at the 4-token row, more experts than either.
// Those rows are SGLang 0.5.9's (89995c0c4 and 507f0fb07, 2026-04-18 and 21) but for the
// marlin int4_wo path, which draws with moe_ep 1 and no rank-0 projection; 0.5.10's
// (feebdae3d onward) and 0.5.14's (e23be5a79) use the round-robin; H200's 0.5.6.post2 has
// no expert-parallel rows. Of the embedded tables only SGLang's seed (MiniMax-M2.5, B200, TEP 4)
// reads the 0.5.9 expert-parallel rows; no validated group does. vLLM's are not examined here.
//
// One rank holds every expert when moe_ep is 1: there the rows measure as many experts as
// the step's pairs, which a real step of distinct requests reaches too, and they are kept.

import (
	"math"
	"strconv"
	"strings"
)

// Bounds of the sampler's narrow range (collector/helper.py, sample_power_law(…, 0.01, 2)).
const (
	narrowWeightMin = 0.01
	narrowWeightMax = 2.0
)

// firstExpertsFillRel is the expert table whose rows that sampler drew: TensorRT-LLM
// 1.2.0rc5's collection, the one TRT-LLM release the embedded tables hold (SGLang's and
// vLLM's are not repriced: see above).
func firstExpertsFillRel(rel string) bool {
	return strings.Contains(rel, "/moe/trtllm/1.2.0rc5/")
}

// powerLawAlpha is the exponent of a moe_perf power-law distribution name (power_law_1.2).
func powerLawAlpha(distribution string) (float64, bool) {
	s, ok := strings.CutPrefix(distribution, "power_law_")
	if !ok {
		return 0, false
	}
	a, err := strconv.ParseFloat(s, 64)
	return a, err == nil && a != 1 && a != 2
}

// narrowMeanWeight is the mean of a power law of exponent alpha on the narrow range.
func narrowMeanWeight(alpha float64) float64 {
	pw, lo, hi := math.Pow, narrowWeightMin, narrowWeightMax
	return (1 - alpha) / (2 - alpha) * (pw(hi, 2-alpha) - pw(lo, 2-alpha)) / (pw(hi, 1-alpha) - pw(lo, 1-alpha))
}

// fillsMeasuredRank tells whether the sampler's draw of a step of tokens put all its
// token-expert pairs on the measured rank: the narrow range, and even the largest weight the
// range allows, over the weights' expected sum, gives less than half a pair, so every share
// rounds to zero; with moe_ep > 1 only.
func fillsMeasuredRank(tokens, experts, topK, ep int, alpha float64) bool {
	pairs := float64(tokens * topK)
	if ep <= 1 || !narrowBranch(tokens, experts, topK) {
		return false
	}
	return narrowWeightMax*pairs/(float64(experts)*narrowMeanWeight(alpha)) < 0.5
}
