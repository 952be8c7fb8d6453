package model

import "math"

// A step under MTP speculative decoding (package specdec), as TensorRT-LLM's one-model MTP
// Eagle path runs it for DeepSeek-V3/R1, whose checkpoint holds one MTP module
// (tensorrt_llm/_torch/speculative/mtp.py, MTPEagleWorker.forward, and llmapi/llm_args.py,
// MTPDecodingConfig.spec_dec_mode, at 1.1.0rc2 and 1.2.0rc6):
//
//   - the target model runs every prompt chunk and 1 + k tokens of each generation request
//     (its last accepted token and k drafts), and its LM head every one of those k + 1 rows
//     (the verification samples each) and the prompts' last rows;
//   - the MTP module — one decoder layer with the model's shared embedding and head — runs
//     k times: first on the same tokens as the target, then k − 1 times on one token per
//     request, each followed by the shared head on one row per request.
//
// One layer is priced as the model's non-attention work and attention divided by its layers
// (the tables hold all layers; the MTP layer is a MoE layer like most of them). The decode
// attention of a request's 1 + k query tokens is priced as one query's: the MLA generation
// kernel reads the request's KV once for all of them (causal mask over the drafts, blog
// "DeepSeek R1 MTP Implementation and Optimization", Attention for MTP), which the q-len-1
// grids measure. CUDA graphs are captured by generation batch size (cuda_graph_config), so a
// decode-only step of up to the capture size runs under its graph whatever its token count.
func (w *Worker) mtpStepUS(b *Batch) int64 {
	k := w.d.Speculative.DraftLen
	prefill := len(b.Prefill) > 0
	ctxTokens := 0
	var work, full float64
	for i := range b.Prefill {
		c := &b.Prefill[i]
		ctxTokens += c.NewTokens
		f, cached := float64(c.NewTokens+c.CachedTokens), float64(c.CachedTokens)
		work += f*f - cached*cached
		full += f
	}
	seqs := len(b.Prefill) + b.Decodes
	if seqs == 0 {
		return 1
	}
	tokens := ctxTokens + b.Decodes*(1+k)
	graphs := w.nonAttention
	if b.Decodes > w.graphTokens || prefill && w.decodeOnlyGraphs {
		graphs = w.eager
	}
	var attn float64
	if prefill {
		attn += w.context.at(float64(len(b.Prefill)), math.Sqrt(work/float64(len(b.Prefill))))
	}
	if b.Decodes > 0 {
		attn += w.decode.at(float64(b.Decodes), float64(b.DecodeContextTokens)/float64(b.Decodes))
	}
	layers := float64(max(1, w.table.LLM.Layers))
	body := graphs.at(float64(tokens)) // the target's layers but attention, on the step's tokens
	target := body + w.logits.at(float64(len(b.Prefill)+b.Decodes*(1+k))) + attn
	first := (body+attn)/layers + w.logits.at(float64(seqs))
	// The later drafts: every request, prompts included, is one generation token on its
	// context (the prompt's, or the decode's plus its accepted tokens).
	ctx := (float64(b.DecodeContextTokens) + full) / float64(seqs)
	later := (graphs.at(float64(seqs))+w.decode.at(float64(seqs), ctx))/layers + w.logits.at(float64(seqs))
	return int64(math.Ceil(target + first + float64(k-1)*later))
}
