package model

import (
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
)

// tablesFS holds the derived step-time tables, gzipped JSON; see tables/PROVENANCE.md for
// their sources.
//
//go:embed tables/*.json.gz
var tablesFS embed.FS

// tableFormat is bumped whenever the JSON layout of a Table changes.
const tableFormat = 5

// Layout is a worker's parallel layout: the four sizes the operator tables are keyed on.
type Layout struct {
	TP          int `json:"tp"`
	AttentionDP int `json:"attention_dp"`
	MoETP       int `json:"moe_tp"`
	MoEEP       int `json:"moe_ep"`
}

func (l Layout) String() string {
	return fmt.Sprintf("tp%d-adp%d-moetp%d-moeep%d", l.TP, l.AttentionDP, l.MoETP, l.MoEEP)
}

// LLMSpec is the architecture the step and memory models need, from the model's config.json.
// A dense model has Experts 0 and prices its MLP from Inter; a mixture-of-experts model has
// Experts > 0 routed experts of ExpertInter each (plus SharedInter of always-on shared
// experts); both families run the same attention. Quantisation is the checkpoint's: how its
// projection and expert weights are stored (a GEMM dtype of AIConfigurator's tables).
type LLMSpec struct {
	Architecture   string `json:"architecture"` // config.json model_type, e.g. llama, qwen3_moe, minimax_m2
	Layers         int    `json:"layers"`
	Hidden         int    `json:"hidden"`
	Heads          int    `json:"heads"`
	KVHeads        int    `json:"kv_heads"`
	HeadDim        int    `json:"head_dim"`
	Inter          int    `json:"inter,omitempty"` // dense MLP intermediate size (0: every layer is MoE)
	Experts        int    `json:"experts,omitempty"`
	TopK           int    `json:"top_k,omitempty"`
	ExpertInter    int    `json:"expert_inter,omitempty"`
	SharedInter    int    `json:"shared_inter,omitempty"` // shared experts' total intermediate size
	Vocab          int    `json:"vocab"`
	QKNorm         bool   `json:"qk_norm,omitempty"`          // RMSNorm on q and k (Qwen3, MiniMax-M2)
	QKNormPerLayer bool   `json:"-"`                          // ...over the layer's heads, not each head (qk_norm_type per_layer: MiniMax-M2); import pricing only
	FP32RouterGate bool   `json:"fp32_router_gate,omitempty"` // the MoE gate is an FP32 linear layer (MiniMax-M2)
	WeightQuant    string `json:"weight_quant"`               // GEMM dtype of the quantised weights: bfloat16, fp8, fp8_block, nvfp4, w4a16_mxfp4
	WeightBlock    int    `json:"weight_block,omitempty"`     // FP8 block-quantisation tile edge (fp8_block)
	ExpertQuant    string `json:"expert_quant,omitempty"`     // the experts' dtype when it is not WeightQuant (gpt-oss: w4a16_mxfp4)
	// AttentionQuant is the attention projections' GEMM dtype when it is not WeightQuant
	// (NVIDIA's NVFP4 Kimi-K2.5 keeps self_attn in BF16).
	AttentionQuant string `json:"attention_quant,omitempty"`
	// OProjQuant is the attention output projection's GEMM dtype when it is not
	// AttentionQuant: NVIDIA's NVFP4 DeepSeek checkpoints exclude MLA's down- and
	// up-projections from quantisation but not o_proj (hf_quant_config.json exclude_modules).
	OProjQuant string `json:"o_proj_quant,omitempty"`
	// DenseLayers is how many leading layers of a MoE model run a dense MLP of Inter instead
	// of the experts (DeepSeek-V3's first_k_dense_replace).
	DenseLayers int `json:"dense_layers,omitempty"`
	// Multi-head latent attention (DeepSeek-V3, Kimi-K2): queries through a q_lora_rank
	// bottleneck, keys and values from one cached latent of KVLoRARank plus a shared RoPE key
	// of QKRopeDim per token; HeadDim is then the query/key head size (nope + rope).
	KVLoRARank int `json:"kv_lora_rank,omitempty"`
	QLoRARank  int `json:"q_lora_rank,omitempty"`
	QKNopeDim  int `json:"qk_nope_head_dim,omitempty"`
	QKRopeDim  int `json:"qk_rope_head_dim,omitempty"`
	VHeadDim   int `json:"v_head_dim,omitempty"`
	// DeepSeek sparse attention (sparse.go): an indexer of IndexHeads × IndexHeadDim keeps
	// IndexTopK tokens per query for the latent attention.
	IndexTopK     int `json:"index_topk,omitempty"`
	IndexHeads    int `json:"index_n_heads,omitempty"`
	IndexHeadDim  int `json:"index_head_dim,omitempty"`
	SlidingLayers int `json:"sliding_layers,omitempty"` // layers attending to the last SlidingWindow tokens only
	SlidingWindow int `json:"sliding_window,omitempty"`
	// Hybrid linear attention (hybrid.go): LinearLayers of the Layers are gated DeltaNet
	// layers of LinearKeyHeads × LinearKeyHeadDim query/key and LinearValueHeads ×
	// LinearValueHeadDim value heads, a short convolution of LinearConvKernel taps and a
	// recurrent state of LinearStateBytes per element (mamba_ssm_dtype); the others attend.
	LinearLayers       int `json:"linear_layers,omitempty"`
	LinearKeyHeads     int `json:"linear_key_heads,omitempty"`
	LinearKeyHeadDim   int `json:"linear_key_head_dim,omitempty"`
	LinearValueHeads   int `json:"linear_value_heads,omitempty"`
	LinearValueHeadDim int `json:"linear_value_head_dim,omitempty"`
	LinearConvKernel   int `json:"linear_conv_kernel,omitempty"`
	LinearStateBytes   int `json:"linear_state_bytes,omitempty"`
	// AttnOutputGate: the full-attention layers' q_proj also yields a sigmoid gate per query
	// element applied to the attention output (Qwen3.5's attn_output_gate).
	AttnOutputGate  bool `json:"attn_output_gate,omitempty"`
	KVCacheBytes    int  `json:"kv_cache_bytes"`   // bytes per KV element in the model's own dtype (2 = BF16)
	UnquantBytes    int  `json:"unquant_bytes"`    // bytes per weight left unquantised (router, embeddings)
	ActivationBytes int  `json:"activation_bytes"` // bytes per activation element (2 = BF16)
}

// MoE reports whether the model has routed experts.
func (s LLMSpec) MoE() bool { return s.Experts > 0 }

// MLA reports whether the model attends through multi-head latent attention.
func (s LLMSpec) MLA() bool { return s.KVLoRARank > 0 }

// MoELayers is how many layers run the experts.
func (s LLMSpec) MoELayers() int {
	if !s.MoE() {
		return 0
	}
	return s.Layers - s.DenseLayers
}

// DenseMLPLayers is how many layers run a dense MLP of Inter: DeepSeek-V3's leading
// DenseLayers, otherwise every layer alike (a dense model's MLP; none where Inter is 0).
func (s LLMSpec) DenseMLPLayers() int { return cmp.Or(s.DenseLayers, s.Layers) }

// attentionQuant is the GEMM dtype of the attention projections under a served GEMM dtype.
func (s LLMSpec) attentionQuant(gemmQuant string) string { return cmp.Or(s.AttentionQuant, gemmQuant) }

// oProjQuant is the GEMM dtype of the attention output projection under a served GEMM dtype.
func (s LLMSpec) oProjQuant(gemmQuant string) string {
	return cmp.Or(s.OProjQuant, s.attentionQuant(gemmQuant))
}

// checkLayout says why a layout cannot serve the architecture, or nil.
func (s LLMSpec) checkLayout(l Layout) error {
	switch {
	case !s.MoE() && l.AttentionDP != 1:
		return fmt.Errorf("layout %s: attention data parallelism is modelled for MoE models (a dense model's data parallelism is its replicas)", l)
	case !s.MoE() && l.MoEEP != 1:
		return fmt.Errorf("layout %s: a dense model has no experts to place (moe_ep must be 1)", l)
	case l.TP*l.AttentionDP != l.MoETP*l.MoEEP:
		return fmt.Errorf("layout %s: tp×attention_dp (%d) must equal moe_tp×moe_ep (%d)", l, l.TP*l.AttentionDP, l.MoETP*l.MoEEP)
	case s.Heads%l.TP != 0:
		return fmt.Errorf("layout %s: tp %d does not divide %d attention heads", l, l.TP, s.Heads)
	}
	return s.checkLinearLayout(l)
}

// GPUSpec is the memory side of the system file (b200_sxm.yaml).
type GPUSpec struct {
	MemCapacity   int64         `json:"mem_capacity"`
	MemBW         float64       `json:"mem_bw"`
	MemBWScaling  float64       `json:"mem_bw_scaling"`
	MemConstantUS float64       `json:"mem_constant_us"`
	NCCLMem       map[int]int64 `json:"nccl_mem"`
	OtherMem      int64         `json:"other_mem"`
}

// Source is one input file of the importer with its digest.
type Source struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Grid is a table sampled on the log-spaced axis (see grid.go), row-major when 2-D.
type Grid struct {
	Rows   int       `json:"rows,omitempty"`
	Cols   int       `json:"cols"`
	Values []float64 `json:"values_us"`
}

// Table is everything a Worker needs for one (model, GPU, backend version, layout), derived
// once from the operator tables by Import. All times are microseconds per engine step, summed
// over the model's layers where the operator repeats per layer.
type Table struct {
	Format         int     `json:"format"`
	Model          string  `json:"model"`
	HardwareSKU    string  `json:"hardware_sku"`
	Backend        Backend `json:"backend"`
	BackendVersion string  `json:"backend_version"`
	Quantization   string  `json:"quantization,omitempty"` // serving precision other than the checkpoint's ("": its own)
	GEMMQuant      string  `json:"gemm_quant_mode"`        // kernels of the attention projections
	MoEQuant       string  `json:"moe_quant_mode"`         // moe_dtype of the expert rows
	MoEKernel      string  `json:"moe_kernel"`             // kernel_source of the expert rows
	// MoEBackend is TensorRT-LLM's moe_config.backend or SGLang's --moe-runner-backend the
	// table prices when not the release's default (Deployment.MoEBackend); "" the default.
	MoEBackend string  `json:"moe_backend,omitempty"`
	Layout     Layout  `json:"layout"`
	LLM        LLMSpec `json:"llm"`
	GPU        GPUSpec `json:"gpu"`
	// TimingReference is ReferenceDynosim for the tables of that reference (AIConfigurator's
	// own operator choice); empty for the silicon tables.
	TimingReference string   `json:"timing_reference,omitempty"`
	Kernels         []string `json:"kernels"` // which measured rows were used, in words
	// MLAModule says which collection of AIConfigurator's MLA module rows prices multi-head
	// latent attention, and why (mla.go); empty for other attention.
	MLAModule string `json:"mla_module,omitempty"`
	// Extrapolated names every price derived beyond the measured shapes on purpose (e.g. a
	// head count between two measured ones); model info and the fingerprint's table digest
	// carry it.
	Extrapolated []string `json:"extrapolated,omitempty"`
	Sources      []Source `json:"sources"`

	// Non-attention work, functions of the step's total scheduled tokens.
	GEMM Grid `json:"gemm"` // qkv + output projection, all layers
	MoE  Grid `json:"moe"`  // fused experts, all layers
	// SharedExperts is the MoE layers' shared experts (a gate_up and a down GEMM each), kept
	// apart from GEMM because vLLM overlaps them with the routed experts in small steps
	// (worker.go); absent for a model without shared experts.
	SharedExperts Grid `json:"shared_experts,omitzero"`
	Collective    Grid `json:"collective"` // all-reduces of the layout, all layers, under CUDA graphs
	// CollectiveEager is Collective measured without CUDA graphs, the price of steps above
	// vLLM's CUDA-graph capture size (cudagraph.go); absent when there is no all-reduce.
	CollectiveEager Grid `json:"collective_eager,omitzero"`
	Elementwise     Grid `json:"elementwise"` // norms/residual adds (all layers) + embedding
	// RouterGate prices the MoE router gate, all layers, once per float32 matmul precision.
	RouterGate []RouterGate `json:"router_gate"`
	// Logits is the LM head, a function of the number of sequences in the step.
	Logits Grid `json:"logits"`
	// Attention holds one entry per KV-cache dtype, sorted by dtype.
	Attention []Attention `json:"attention"`
	// LinearAttention prices a hybrid model's gated DeltaNet layers (hybrid.go); nil otherwise.
	LinearAttention *LinearAttention `json:"linear_attention,omitempty"`

	// digest names the embedded file the table was read from with the SHA-256 of its bytes
	// (empty for a table built in memory), so results can say which tables priced them.
	digest string
}

// Attention is the price of the attention kernels over all layers with one KV-cache dtype.
// Context (rows: prefill chunks in the step, cols: equivalent causal length) and Decode (rows:
// decoding requests, cols: mean context).
type Attention struct {
	KVCacheDtype string `json:"kv_cache_dtype"` // KVFP8 or KVBF16
	Context      Grid   `json:"context"`
	Decode       Grid   `json:"decode"`
}

// RouterGate is the price of the FP32 router gate at one float32 matmul precision, a function
// of the step's total scheduled tokens.
type RouterGate struct {
	Float32MatmulPrecision string `json:"float32_matmul_precision"` // PrecisionHighest or PrecisionHigh
	Grid
}

// ValidateOnly reports whether only model validate selects t: its experts are priced by the
// MoE kernel backend a measured run chose (MoEBackend), or it prices an SGLang release other
// than the embedded one (a measured run's, SGLangTablesVersion), which no experiment key
// names, so the digest's canonical replays and the mutation judge leave it out.
func (t *Table) ValidateOnly() bool {
	return t.MoEBackend != "" || (t.Backend == BackendSGLang && t.BackendVersion != sglangVersion)
}

// RouterGateFor returns the router gate grid of a float32 matmul precision.
func (t *Table) RouterGateFor(precision string) (*RouterGate, error) {
	return entryFor(t, t.RouterGate, func(g *RouterGate) string { return g.Float32MatmulPrecision },
		precision, "router gate", "float32_matmul_precision")
}

// AttentionFor returns the attention grids of a KV-cache dtype.
func (t *Table) AttentionFor(kvDtype string) (*Attention, error) {
	return entryFor(t, t.Attention, func(a *Attention) string { return a.KVCacheDtype }, kvDtype, "attention", "kv_cache_dtype")
}

// entryFor finds the entry of a per-setting list whose setting is want, or names what the table has.
func entryFor[T any](t *Table, entries []T, setting func(*T) string, want, prices, name string) (*T, error) {
	var have []string
	for i := range entries {
		if setting(&entries[i]) == want {
			return &entries[i], nil
		}
		have = append(have, setting(&entries[i]))
	}
	return nil, fmt.Errorf("model: table %s has no %s prices for %s %q (have %s; re-run model import)",
		TableFileName(t), prices, name, want, strings.Join(have, ", "))
}

// tableFileName is the embedded file holding the table of a combination; quant is "" for
// the checkpoint's own quantisation, else the precision it was served in; the dynosim
// reference's tables carry a "_dynosim" suffix, and a table of a MoE backend other than the
// release's default "_moe-<backend>".
func tableFileName(model, sku string, backend Backend, version string, l Layout, quant, timingReference, moeBackend string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if quant != "" {
		quant = "_" + quant
	}
	if timingReference == ReferenceDynosim {
		quant += "_" + ReferenceDynosim
	}
	if moeBackend != "" {
		quant += "_moe-" + strings.ToLower(moeBackend)
	}
	return fmt.Sprintf("%s_%s_%s-%s_%s%s"+tableExt, m, sku, backend, version, l, quant)
}

// loadTable finds the embedded table of d's combination or says what is missing. A deployment
// without a quantisation takes the checkpoint's, or else the one precision embedded.
func loadTable(d Deployment) (*Table, error) {
	l := d.Layout()
	ref := ""
	if d.Dynosim() {
		ref = ReferenceDynosim
	}
	own := tableFileName(d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, l, "", "", "")
	stem := strings.TrimSuffix(own, tableExt)
	// Candidates are chosen by their heads; only the chosen table's grids are decoded.
	var cands []string
	var heads []tableHead
	for _, n := range EmbeddedTables() {
		if n != own && !strings.HasPrefix(n, stem+"_") {
			continue
		}
		h, err := sharedHead(n)
		if err != nil {
			return nil, err
		}
		if h.Model == d.ModelName && h.TimingReference == ref && h.MoEBackend == d.MoEBackend { // not another model's lower-cased name
			cands, heads = append(cands, n), append(heads, h)
		}
	}
	// A precision family (fp8, fp4) selects the table served in it: one named for it (nvfp4),
	// else the checkpoint's own when its projections or experts are stored in it (fp8 for a
	// block-FP8 checkpoint, fp4 for gpt-oss's MXFP4 experts).
	family := func(t tableHead) bool {
		return strings.Contains(t.Quantization, d.Quantization) ||
			(t.Quantization == "" && (strings.HasPrefix(t.GEMMQuant, d.Quantization) || strings.Contains(t.MoEQuant, d.Quantization)))
	}
	for i, t := range heads {
		if d.Quantization == t.Quantization || (d.Quantization == "" && len(heads) == 1) {
			return sharedTable(cands[i])
		}
	}
	for i, t := range heads {
		if d.Quantization != "" && family(t) {
			return sharedTable(cands[i])
		}
	}
	q := "the checkpoint's quantisation"
	if d.Quantization != "" {
		q = "quantization " + d.Quantization
	}
	if ref != "" {
		q += ", timing reference " + ref
	}
	if d.MoEBackend != "" {
		q += ", MoE backend " + d.MoEBackend
	}
	have := strings.Join(cands, ", ")
	if len(cands) == 0 { // name what this model does have on this GPU, by file name
		prefix := strings.TrimSuffix(own, l.String()+tableExt)
		for _, n := range EmbeddedTables() {
			if rest, ok := strings.CutPrefix(n, prefix); ok {
				cands = append(cands, strings.TrimSuffix(rest, tableExt))
			}
		}
		have = "no table of this layout; embedded for this model and GPU: none"
		if gpus := modelGPUs(d.ModelName, string(d.Backend)); len(cands) == 0 && len(gpus) > 0 {
			have = fmt.Sprintf("no table of this model on %s; it has tables on %s", d.HardwareSKU, strings.Join(gpus, ", "))
		}
		if len(cands) > 0 {
			have = "no table of this layout; embedded for this model and GPU: " + strings.Join(cands, ", ")
		}
	}
	return nil, fmt.Errorf("model: no step-time table for %s on %s with %s %s, layout %s, %s (%s); "+
		"derive it with `routerlab model import --aic DIR --out model/tables` from the AIConfigurator operator data for that GPU and version, or see `routerlab model list`",
		d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, l, q, have)
}

// tableExt ends every table file's name.
const tableExt = ".json.gz"

// sharedTables holds the tables loadTable has read, by file name: a process builds workers
// again and again (the simulator digest's canonical replays, every sweep evaluation, every
// explorer re-run), and decoding a table's JSON costs milliseconds. Tables are never
// modified once read, so workers share them.
var sharedTables sync.Map // string → *Table

// sharedTable is readTable, once per table file and process.
func sharedTable(name string) (*Table, error) {
	if t, ok := sharedTables.Load(name); ok {
		return t.(*Table), nil
	}
	t, err := readTable(name)
	if err != nil {
		return nil, err
	}
	got, _ := sharedTables.LoadOrStore(name, t)
	return got.(*Table), nil
}

// tableHead is what loadTable chooses a table by. Its fields come before the grids in a
// table's JSON (MarshalTable writes Table's fields in order), so reading them inflates and
// scans the first kilobytes of a file, not its 170 KB of grids: a deployment's layout has
// up to three tables (its own, nvfp4, dynosim) and needs one. The explorer lists every
// table's deployment from the heads alone (EmbeddedHeads).
type tableHead struct {
	Format                                                    int
	Model, Quantization, GEMMQuant, MoEQuant, TimingReference string
	HardwareSKU, BackendVersion, MoEBackend                   string
	Layout                                                    Layout
	LLM                                                       LLMSpec
}

// TableHead is an embedded table's deployment: what it prices, without its grids.
type TableHead struct {
	Model, HardwareSKU, BackendVersion string
	Quantization                       string // "": the checkpoint's own
	TimingReference                    string // "": silicon
	MoEBackend                         string // "": the backend release's default MoE kernels
	Layout                             Layout
	MoE                                bool // the model has routed experts
}

// EmbeddedHeads lists every embedded table's deployment in EmbeddedTables' order, reading
// only the first kilobytes of each file.
func EmbeddedHeads() ([]TableHead, error) {
	var out []TableHead
	for _, n := range EmbeddedTables() {
		h, err := sharedHead(n)
		if err != nil {
			return nil, err
		}
		out = append(out, TableHead{Model: h.Model, HardwareSKU: h.HardwareSKU, BackendVersion: h.BackendVersion,
			Quantization: h.Quantization, TimingReference: h.TimingReference, MoEBackend: h.MoEBackend, Layout: h.Layout, MoE: h.LLM.MoE()})
	}
	return out, nil
}

// sharedHeads holds the heads loadTable has read, by file name (tableHead).
var sharedHeads sync.Map

// sharedHead is readHead, once per table file and process.
func sharedHead(name string) (tableHead, error) {
	if h, ok := sharedHeads.Load(name); ok {
		return h.(tableHead), nil
	}
	h, err := readHead(name)
	if err != nil {
		return tableHead{}, err
	}
	sharedHeads.Store(name, h)
	return h, nil
}

// readHead reads an embedded table's head: its top-level keys up to "kernels", the first
// key after the fields a head holds.
func readHead(name string) (tableHead, error) {
	var h tableHead
	fail := func(err error) (tableHead, error) {
		return tableHead{}, fmt.Errorf("model: embedded tables/%s: %w", name, err)
	}
	f, err := tablesFS.Open("tables/" + name)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fail(err)
	}
	dec := json.NewDecoder(zr)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(fmt.Errorf("not a JSON object (%v)", err))
	}
	fields := map[string]any{"format": &h.Format, "model": &h.Model, "quantization": &h.Quantization,
		"gemm_quant_mode": &h.GEMMQuant, "moe_quant_mode": &h.MoEQuant, "timing_reference": &h.TimingReference,
		"hardware_sku": &h.HardwareSKU, "backend_version": &h.BackendVersion, "moe_backend": &h.MoEBackend, "layout": &h.Layout, "llm": &h.LLM}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		if key == "kernels" {
			break
		}
		v, ok := fields[key]
		if !ok {
			v = new(json.RawMessage)
		}
		if err := dec.Decode(v); err != nil {
			return fail(fmt.Errorf("%s: %w", key, err))
		}
	}
	if h.Format != tableFormat {
		return fail(fmt.Errorf("format %d, want %d (re-run model import)", h.Format, tableFormat))
	}
	return h, nil
}

// readTable reads one embedded table and records its digest (of its JSON, so the compressor
// does not enter the experiment fingerprint).
func readTable(name string) (*Table, error) {
	b, err := embeddedJSON(name)
	if err != nil {
		return nil, err
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("model: embedded tables/%s: %w", name, err)
	}
	if t.Format != tableFormat {
		return nil, fmt.Errorf("model: embedded tables/%s: format %d, want %d (re-run model import)", name, t.Format, tableFormat)
	}
	sum := sha256.Sum256(b)
	t.digest = name + " sha256:" + hex.EncodeToString(sum[:])
	return &t, nil
}

// embeddedJSON is the JSON of one embedded table file.
func embeddedJSON(name string) ([]byte, error) {
	f, err := tablesFS.Open("tables/" + name)
	if err != nil {
		return nil, fmt.Errorf("model: embedded tables/%s: %w", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("model: embedded tables/%s: %w", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("model: embedded tables/%s: %w", name, err)
	}
	return b, nil
}

// NearestVersion is the backend version of the embedded tables of a model on a GPU closest to
// version (by major, minor, patch; an unparsable version such as a nightly takes the newest),
// or "" when none is embedded.
func NearestVersion(model, sku, version string) string {
	want, ok := releaseNumber(version)
	prefix := tableFileName(model, sku, BackendVLLM, "", Layout{}, "", "", "")
	prefix = prefix[:strings.Index(prefix, "vllm-")+len("vllm-")]
	best, bestDist := "", 0
	for _, n := range EmbeddedTables() {
		rest, found := strings.CutPrefix(n, prefix)
		if !found {
			continue
		}
		tv, _, _ := strings.Cut(rest, "_")
		v, _ := releaseNumber(tv)
		dist := -v // an unparsable version: the newest
		if ok {
			dist = max(want-v, v-want)
		}
		if best == "" || dist < bestDist {
			best, bestDist = tv, dist
		}
	}
	return best
}

// Embedded reads every embedded table, sorted by model, GPU, precision and layout. The tables
// are the ones workers share (do not modify): the simulator digest probes every table and
// then builds workers on them, which would otherwise decode each twice.
func Embedded() ([]*Table, error) {
	var out []*Table
	for _, n := range EmbeddedTables() {
		t, err := sharedTable(n)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b *Table) int {
		return cmp.Or(strings.Compare(a.Model, b.Model), strings.Compare(a.HardwareSKU, b.HardwareSKU),
			strings.Compare(a.Quantization, b.Quantization), cmp.Compare(a.Layout.TP, b.Layout.TP), cmp.Compare(a.Layout.MoEEP, b.Layout.MoEEP))
	})
	return out, nil
}

// EmbeddedTables lists the embedded table files, sorted.
func EmbeddedTables() []string {
	ents, _ := fs.ReadDir(tablesFS, "tables")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// EmbeddedTableDigests names every embedded table file with the SHA-256 of its bytes
// ("file sha256:HEX"), sorted: the data side of a build's identity.
func EmbeddedTableDigests() []string {
	var out []string
	h, buf := sha256.New(), make([]byte, 32<<10)
	for _, name := range EmbeddedTables() {
		// Streamed into the hash: every process computes these for the simulator digest, and
		// reading the 3 MB of tables into fresh buffers cost more than hashing them.
		h.Reset()
		if f, err := tablesFS.Open("tables/" + name); err == nil {
			_, _ = io.CopyBuffer(h, f, buf)
			f.Close()
		}
		out = append(out, name+" sha256:"+hex.EncodeToString(h.Sum(nil)))
	}
	return out
}
