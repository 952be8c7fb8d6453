package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// ResolveModel is the embedded model a name means: its Hugging Face id as given
// (MiniMaxAI/MiniMax-M2.5), or the name without its organisation in any case (MiniMax-M2.5,
// as the explorer shows it) when exactly one embedded model has it. A name no table is keyed
// by is an "unknown model" error naming the closest embedded ones.
func ResolveModel(name string) (string, error) {
	short := shortName(name)
	var ids []string
	for _, n := range EmbeddedTables() {
		if !strings.HasPrefix(n, short+"_") {
			continue
		}
		if strings.Contains(name, "/") {
			// An id whose file names exist: the table lookup checks its organisation, and a
			// replay need not read any table head to start.
			return name, nil
		}
		h, err := sharedHead(n)
		if err != nil {
			return "", err
		}
		if shortName(h.Model) == short && !slices.Contains(ids, h.Model) {
			ids = append(ids, h.Model)
		}
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	if len(ids) > 1 {
		return "", fmt.Errorf("model %q is ambiguous: %s (give the organisation too)", name, strings.Join(ids, ", "))
	}
	all, err := Models()
	if err != nil {
		return "", err
	}
	return "", fmt.Errorf("unknown model %q; closest embedded: %s (all: routerlab model list)", name, strings.Join(closestModels(name, all, 3), ", "))
}

// shortName is a model id without its organisation, lower-cased as table file names are.
func shortName(id string) string { return strings.ToLower(id[strings.LastIndex(id, "/")+1:]) }

// Models lists the embedded models by id, sorted.
func Models() ([]string, error) {
	hs, err := EmbeddedHeads()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range hs {
		out = append(out, h.Model)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ContextLimit is the longest context (prompt + output tokens) vLLM serves a model with:
// the max_model_len it derives from the model's config.json, 0 when not known here. vLLM
// (vllm/config/model.py _get_and_verify_max_len, commit 0052a5b8) takes max_position_embeddings,
// or for YaRN RoPE original_max_position_embeddings × factor — the same number for every
// model below — and refuses a --max-model-len above it. Values from the config.json files in
// AIConfigurator's model_configs (commit 095f58a5).
func ContextLimit(id string) int {
	return map[string]int{
		"MiniMaxAI/MiniMax-M2.5":           196608,
		"Qwen/Qwen3-235B-A22B-FP8":         40960,
		"Qwen/Qwen3-32B":                   40960,
		"deepseek-ai/DeepSeek-V3":          163840, // YaRN: 4096 × 40
		"deepseek-ai/DeepSeek-R1":          163840, // V3's architecture and YaRN
		"meta-llama/Llama-3.1-70B":         131072,
		"moonshotai/Kimi-K2.5":             262144, // YaRN: 4096 × 64
		"nvidia/Llama-3.1-8B-Instruct-FP8": 131072, // Meta-Llama-3.1-8B's config
		"meta-llama/Llama-3.1-8B-Instruct": 131072, // Meta-Llama-3.1-8B's config
		"openai/gpt-oss-120b":              131072, // YaRN: 4096 × 32
		"Qwen/Qwen3.5-397B-A17B":           262144, // text_config's max_position_embeddings
		"zhipuai/GLM-5":                    202752, // zai-org/GLM-5's config, no RoPE scaling
	}[id]
}

// closestModels is up to n of ids nearest to name by edit distance, with or without the
// organisation, nearest first.
func closestModels(name string, ids []string, n int) []string {
	dist := func(id string) int {
		return min(levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(id)),
			levenshtein.ComputeDistance(shortName(name), shortName(id)))
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(dist(a), dist(b)) })
	return out[:min(n, len(out))]
}

// modelGPUs lists the GPUs an embedded model has tables for under backend, from the tables'
// file names (<model>_<gpu>_<backend>-<version>_…), sorted.
func modelGPUs(id, backend string) []string {
	var out []string
	for _, n := range EmbeddedTables() {
		rest, ok := strings.CutPrefix(n, shortName(id)+"_")
		if gpu, _, found := strings.Cut(rest, "_"+backend+"-"); ok && found && !slices.Contains(out, gpu) {
			out = append(out, gpu)
		}
	}
	slices.Sort(out)
	return out
}
