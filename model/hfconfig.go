package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// hfConfig is the part of a Hugging Face config.json the model needs. Families spell the
// same fact differently (num_local_experts, num_experts, n_routed_experts); each alias is read.
type hfConfig struct {
	ModelType    string          `json:"model_type"`
	Layers       int             `json:"num_hidden_layers"`
	Hidden       int             `json:"hidden_size"`
	Heads        int             `json:"num_attention_heads"`
	KVHeads      int             `json:"num_key_value_heads"`
	HeadDim      int             `json:"head_dim"`
	Inter        int             `json:"intermediate_size"`
	MoEInter     int             `json:"moe_intermediate_size"`
	Vocab        int             `json:"vocab_size"`
	TopK         int             `json:"num_experts_per_tok"`
	TopKAlt      int             `json:"experts_per_token"`
	LocalExp     int             `json:"num_local_experts"`
	NumExperts   int             `json:"num_experts"`
	Routed       int             `json:"n_routed_experts"`
	SharedInter  int             `json:"shared_intermediate_size"`
	SharedExp    int             `json:"shared_expert_intermediate_size"`
	NShared      int             `json:"n_shared_experts"`
	SparseStep   int             `json:"decoder_sparse_step"`
	MLPOnly      []int           `json:"mlp_only_layers"`
	FirstDense   int             `json:"first_k_dense_replace"`
	MoELayerFreq int             `json:"moe_layer_freq"`
	KVLoRARank   int             `json:"kv_lora_rank"`
	QLoRARank    int             `json:"q_lora_rank"`
	IndexTopK    int             `json:"index_topk"`
	IndexHeads   int             `json:"index_n_heads"`
	IndexHeadDim int             `json:"index_head_dim"`
	Compress     json.RawMessage `json:"compress_ratios"`
	LinearAttn   json.RawMessage `json:"linear_attn_config"`
	QKNopeDim    int             `json:"qk_nope_head_dim"`
	QKRopeDim    int             `json:"qk_rope_head_dim"`
	VHeadDim     int             `json:"v_head_dim"`
	QKNorm       bool            `json:"use_qk_norm"`
	QKNormType   string          `json:"qk_norm_type"`
	SlidingWin   bool            `json:"use_sliding_window"`
	Window       int             `json:"sliding_window"`
	LayerTypes   []string        `json:"layer_types"`
	Quant        *quantConfig    `json:"quantization_config"`
	// Hybrid linear attention (Qwen3.5, Qwen3-Next: "linear_attention" layer types).
	LinearKHeads   int    `json:"linear_num_key_heads"`
	LinearVHeads   int    `json:"linear_num_value_heads"`
	LinearKDim     int    `json:"linear_key_head_dim"`
	LinearVDim     int    `json:"linear_value_head_dim"`
	ConvKernel     int    `json:"linear_conv_kernel_dim"`
	AttnOutputGate bool   `json:"attn_output_gate"`
	MambaSSMDtype  string `json:"mamba_ssm_dtype"`
}

// quantConfig is a checkpoint's quantization_config: its method, and for compressed-tensors
// and ModelOpt the quantised groups and the modules left unquantised.
type quantConfig struct {
	Method       string   `json:"quant_method"`
	QuantAlgo    string   `json:"quant_algo"`
	BlockSize    []int    `json:"weight_block_size"`
	Ignore       []string `json:"ignore"`
	ConfigGroups map[string]struct {
		Weights *struct {
			NumBits   int    `json:"num_bits"`
			Type      string `json:"type"`
			Strategy  string `json:"strategy"`
			GroupSize int    `json:"group_size"`
		} `json:"weights"`
		InputActivations *struct {
			NumBits int `json:"num_bits"`
		} `json:"input_activations"`
	} `json:"config_groups"`
}

// int4WeightOnly reports whether every quantised group stores 4-bit integer weights with
// group-wise scales and leaves activations unquantised (W4A16).
func (q *quantConfig) int4WeightOnly() bool {
	for _, g := range q.ConfigGroups {
		if g.Weights == nil || g.Weights.NumBits != 4 || g.Weights.Type != "int" || g.Weights.Strategy != "group" || g.InputActivations != nil {
			return false
		}
	}
	return len(q.ConfigGroups) > 0
}

// excludesOProj reports whether an exclusion pattern covers the attention's output
// projection, matched as TensorRT-LLM matches exclude_modules (fnmatch): one naming it or a
// self_attn pattern ending in a wildcard (model.layers.3.self_attn*).
func (q *quantConfig) excludesOProj() bool {
	for _, p := range q.Ignore {
		if i := strings.Index(p, "self_attn"); i >= 0 {
			if ok, _ := path.Match(p, p[:i]+"self_attn.o_proj"); ok {
				return true
			}
		}
	}
	return false
}

// ignores reports whether the checkpoint leaves a module family unquantised: an ignore
// pattern naming it (self_attn, shared_experts, mlp. for the dense MLP's projections).
func (q *quantConfig) ignores(module string) bool {
	for _, p := range q.Ignore {
		if strings.Contains(p, module) {
			return true
		}
	}
	return false
}

// qkNormFamilies have an RMSNorm on q and k of every head in every (full-attention) layer
// (Qwen3's attention, kept by Qwen3.5's text models).
var qkNormFamilies = []string{"qwen3", "qwen3_moe", "qwen3_5_text", "qwen3_5_moe_text"}

// qk_norm_type's values: an RMSNorm over each head's q and k (Qwen3's, the default), or over
// all heads of the layer at once (MiniMax-M2's), whose variance sums across the TP ranks.
const (
	qkNormPerHead  = "per_head"
	qkNormPerLayer = "per_layer"
)

// fp32GateFamilies build the MoE router gate as an FP32 linear layer (vLLM's MiniMaxM2MoE:
// params_dtype float32, hidden_states.to(float32)).
var fp32GateFamilies = []string{"minimax_m2"}

func parseLLMSpec(path string, b []byte) (LLMSpec, error) { return parseLLMSpecWith(path, b, nil) }

// hfQuantConfig is a ModelOpt checkpoint's hf_quant_config.json, which holds the quantisation
// its config.json leaves out (NVIDIA's NVFP4 DeepSeek-V3.1: config.json without
// quantization_config).
type hfQuantConfig struct {
	Quantization *struct {
		QuantAlgo string   `json:"quant_algo"`
		Exclude   []string `json:"exclude_modules"`
	} `json:"quantization"`
}

// parseHFQuantConfig reads an hf_quant_config.json as the quantization_config of a ModelOpt
// checkpoint: its algorithm and the modules it leaves unquantised.
func parseHFQuantConfig(path string, b []byte) (*quantConfig, error) {
	var h hfQuantConfig
	if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\ufeff")), &h); err != nil {
		return nil, fmt.Errorf("model import: %s: %w", path, err)
	}
	if h.Quantization == nil || h.Quantization.QuantAlgo == "" {
		return nil, fmt.Errorf("model import: %s: field quantization.quant_algo: missing", path)
	}
	return &quantConfig{Method: "modelopt", QuantAlgo: h.Quantization.QuantAlgo, Ignore: h.Quantization.Exclude}, nil
}

// parseLLMSpecWith parses a config.json; hfQuant, when config.json has no quantization_config,
// is the checkpoint's from its hf_quant_config.json.
func parseLLMSpecWith(path string, b []byte, hfQuant *quantConfig) (LLMSpec, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff")) // a UTF-8 editor's byte-order mark, as YAML and traces allow
	var wrap struct {
		Text  json.RawMessage `json:"text_config"` // a multimodal checkpoint's language model
		Quant *quantConfig    `json:"quantization_config"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return LLMSpec{}, fmt.Errorf("model import: %s: %w", path, err)
	}
	if len(wrap.Text) > 0 && string(wrap.Text) != "null" {
		b = wrap.Text
	}
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return LLMSpec{}, fmt.Errorf("model import: %s: %w", path, err)
	}
	if c.Quant == nil { // a multimodal checkpoint may quantise at the top level (NVIDIA's NVFP4 Kimi)
		c.Quant = wrap.Quant
	}
	if c.Quant == nil {
		c.Quant = cmp.Or(hfQuant, &quantConfig{})
	}
	bad := func(field, format string, a ...any) (LLMSpec, error) {
		return LLMSpec{}, fmt.Errorf("model import: %s: field %s: %s", path, field, fmt.Sprintf(format, a...))
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads // multi-head attention
	}
	if c.HeadDim == 0 && c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	experts := cmp.Or(c.LocalExp, c.NumExperts, c.Routed)
	c.TopK = cmp.Or(c.TopK, c.TopKAlt)
	hybrid := slices.Contains(c.LayerTypes, linearAttentionLayer)
	if hybrid && experts > 0 && c.Inter == 0 {
		c.Inter = c.MoEInter // Qwen3.5's MoE configs name no dense MLP size: every layer is MoE
	}
	// Attention families the tables cannot price, named before any size they lack.
	switch {
	case c.IndexTopK > 0 && len(c.Compress) > 0 && string(c.Compress) != "null":
		return bad("compress_ratios", "DeepSeek-V4's compressed sparse attention is not priced: only DeepSeek-V3.2's sparse attention over the whole latent cache")
	case c.IndexTopK > 0 && (c.KVLoRARank <= 0 || c.IndexHeads <= 0 || c.IndexHeadDim <= 0):
		return bad("index_topk", "DeepSeek sparse attention (an indexer keeping %d tokens) needs multi-head latent attention and positive index_n_heads and index_head_dim (have kv_lora_rank %d, %d, %d)",
			c.IndexTopK, c.KVLoRARank, c.IndexHeads, c.IndexHeadDim)
	case len(c.LinearAttn) > 0 && string(c.LinearAttn) != "null":
		return bad("linear_attn_config", "linear-attention layers are not priced")
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"num_hidden_layers", c.Layers}, {"hidden_size", c.Hidden}, {"num_attention_heads", c.Heads},
		{"num_key_value_heads", c.KVHeads}, {"head_dim", c.HeadDim}, {"intermediate_size", c.Inter},
		{"vocab_size", c.Vocab}} {
		if f.v <= 0 {
			return bad(f.name, "missing or not positive")
		}
	}
	switch {
	case c.KVLoRARank > 0 && (c.QKRopeDim <= 0 || c.QKNopeDim <= 0 || c.VHeadDim <= 0):
		return bad("kv_lora_rank", "multi-head latent attention needs positive qk_rope_head_dim, qk_nope_head_dim and v_head_dim (have %d, %d, %d)",
			c.QKRopeDim, c.QKNopeDim, c.VHeadDim)
	case c.KVLoRARank > 0 && c.Window > 0 && (c.SlidingWin || len(c.LayerTypes) > 0):
		return bad("sliding_window", "sliding windows with multi-head latent attention are not priced")
	case c.SlidingWin:
		return bad("use_sliding_window", "sliding windows on the first max_window_layers layers are not priced (only layer_types)")
	case slices.Contains(c.LayerTypes, "sliding_attention") && (c.Window <= 0 || len(c.LayerTypes) != c.Layers):
		return bad("layer_types", "sliding_attention layers need a positive sliding_window and one type per layer (have %d types for %d layers, window %d)",
			len(c.LayerTypes), c.Layers, c.Window)
	case c.Heads%c.KVHeads != 0:
		return bad("num_key_value_heads", "%d does not divide num_attention_heads %d", c.KVHeads, c.Heads)
	case experts < 0 || c.TopK < 0 || c.MoEInter < 0:
		return bad("num_experts", "negative")
	case c.MoELayerFreq > 1:
		return bad("moe_layer_freq", "MoE every %d layers is not priced (only every layer after first_k_dense_replace)", c.MoELayerFreq)
	}
	if c.QKNormType != "" && c.QKNormType != qkNormPerHead && c.QKNormType != qkNormPerLayer {
		return bad("qk_norm_type", "%q is not priced (want %s or %s)", c.QKNormType, qkNormPerHead, qkNormPerLayer)
	}
	for _, lt := range c.LayerTypes {
		if lt != "sliding_attention" && lt != "full_attention" && lt != linearAttentionLayer {
			return bad("layer_types", "%q is not priced (want sliding_attention, full_attention or linear_attention)", lt)
		}
	}
	if hybrid {
		if err := checkHybridConfig(c); err != nil {
			return bad("layer_types", "%v", err)
		}
	}
	s := LLMSpec{Architecture: c.ModelType, Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.KVHeads,
		HeadDim: c.HeadDim, Inter: c.Inter, Vocab: c.Vocab, KVCacheBytes: 2, UnquantBytes: 2, ActivationBytes: 2,
		QKNorm: c.QKNorm || slices.Contains(qkNormFamilies, c.ModelType)}
	s.QKNormPerLayer = s.QKNorm && c.QKNormType == qkNormPerLayer
	if experts > 0 {
		switch {
		case c.TopK <= 0 || c.TopK > experts:
			return bad("num_experts_per_tok", "want 1..%d experts per token, have %d", experts, c.TopK)
		case len(c.MLPOnly) > 0 || c.SparseStep > 1:
			return bad("mlp_only_layers", "dense layers between MoE layers are not priced (mlp_only_layers %v, decoder_sparse_step %d; only the first_k_dense_replace leading ones)",
				c.MLPOnly, c.SparseStep)
		case c.FirstDense < 0 || c.FirstDense >= c.Layers:
			return bad("first_k_dense_replace", "%d leading dense layers of %d", c.FirstDense, c.Layers)
		}
		s.Experts, s.TopK = experts, c.TopK
		s.ExpertInter = cmp.Or(c.MoEInter, c.Inter)
		s.Inter = 0 // every layer's MLP is the MoE, but for the leading dense layers (DeepSeek-V3's first_k_dense_replace)
		if c.FirstDense > 0 {
			s.DenseLayers, s.Inter = c.FirstDense, c.Inter
		}
		s.SharedInter = cmp.Or(c.SharedInter, c.SharedExp, c.NShared*s.ExpertInter)
		s.FP32RouterGate = slices.Contains(fp32GateFamilies, c.ModelType)
	}
	for _, lt := range c.LayerTypes {
		if lt == "sliding_attention" {
			s.SlidingLayers++
		}
	}
	if s.SlidingLayers > 0 {
		s.SlidingWindow = c.Window
	}
	if hybrid {
		s.setHybrid(c)
	}
	if c.KVLoRARank > 0 {
		// Multi-head latent attention: every token caches one latent of kv_lora_rank plus its
		// shared RoPE key (qk_rope_head_dim), whatever the head count.
		s.KVLoRARank, s.QLoRARank, s.QKNopeDim, s.QKRopeDim, s.VHeadDim = c.KVLoRARank, c.QLoRARank, c.QKNopeDim, c.QKRopeDim, c.VHeadDim
		s.HeadDim = c.QKNopeDim + c.QKRopeDim
		s.IndexTopK, s.IndexHeads, s.IndexHeadDim = c.IndexTopK, c.IndexHeads, c.IndexHeadDim
	}
	switch q := c.Quant; {
	case q.Method == "":
		s.WeightQuant = "bfloat16"
	case q.Method == "fp8" && len(q.BlockSize) == 2 && q.BlockSize[0] > 0 && q.BlockSize[0] == q.BlockSize[1]:
		s.WeightQuant, s.WeightBlock = "fp8_block", q.BlockSize[0]
	case q.Method == "fp8" && len(q.BlockSize) == 0, q.Method == "modelopt" && q.QuantAlgo == "FP8":
		s.WeightQuant = "fp8"
	case q.Method == "modelopt" && q.QuantAlgo == "NVFP4":
		s.WeightQuant = "nvfp4"
		if q.ignores("self_attn") {
			s.AttentionQuant = "bfloat16" // NVIDIA's NVFP4 DeepSeek-style checkpoints keep attention in BF16
			if !q.excludesOProj() {
				// ...but for o_proj where the exclusions name the other projections only
				// (DeepSeek-V3.1-NVFP4, and DeepSeek-R1-0528-FP4-v2, which "additionally
				// quantizes the wo module" over its v1).
				s.OProjQuant = "nvfp4"
			}
		}
	case q.Method == "compressed-tensors" && experts > 0 && q.int4WeightOnly() && q.ignores("self_attn") && q.ignores("shared_expert") &&
		(s.DenseLayers == 0 || q.ignores("mlp")):
		// Kimi-K2's INT4 release: routed experts in 4-bit integer weights (W4A16, group-wise
		// scales), attention, shared experts, dense MLPs and the LM head in BF16.
		s.WeightQuant, s.ExpertQuant = "bfloat16", "int4_wo"
	case q.Method == "mxfp4" && experts > 0:
		// gpt-oss: MXFP4 experts, everything else (attention, router, embeddings) BF16.
		s.WeightQuant, s.ExpertQuant = "bfloat16", "w4a16_mxfp4"
	default:
		return bad("quantization_config", "quant_method %q (weight_block_size %v) is not priced (want none, fp8 per-tensor or with square weight_block_size, modelopt FP8/NVFP4, mxfp4 experts, or compressed-tensors INT4 weight-only experts with attention, shared experts and dense MLPs ignored)",
			q.Method, q.BlockSize)
	}
	return s, nil
}
