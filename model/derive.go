package model

// Deriving a table from AIConfigurator's rows: the composition of one forward pass per batch
// shape, stage by stage (the GEMM curves at a layer's shapes in derivegemm.go, the experts in
// derivemoe.go, the all-reduces in deriveallreduce.go, the element-wise kernels in
// deriveelementwise.go, attention in deriveattention.go, the words of t.Kernels in
// derivekernels.go).

// deriver prices one table's operators: the table it fills, the rows (and their files) it
// reads, the facts of the layer its stages share, and what each stage prices for the grids and
// the words of t.Kernels.
type deriver struct {
	t          *Table
	s          LLMSpec
	l          Layout
	mk         MoEKernel
	peaks      gatePeaks
	gemms      []gemmRow
	fp8        *staticFP8
	moes       []moeRow
	ctxs, gens []attentionRow
	mla        mlaInputs
	ars        []allreduceRow

	gemmRel, moeRel, ctxRel, genRel, arRel string

	// The layer's facts the stages share.
	fused       elementwiseFusion
	fusedShared int
	fp8In       fp8Inputs
	headsPerGPU int
	kvPerGPU    int
	attnQuant   string

	perLayerQKNorm  bool
	qkVarianceElems float64 // bfloat16 elements of the all-reduce per token: 2 FP32 variances
	latentNorms     bool
	sharedAdd       bool
	sglangKernels   bool

	// attnDtypes caches the attention dtype priced per table and KV-cache dtype.
	attnDtypes map[[2]string]string

	// What the stages price (µs) and the words that state it in t.Kernels.
	attnProj, mlaKVB, logits, linearProj func(float64) float64
	mlp, shared, moe                     func(float64) float64
	gate                                 func(tokens, flops float64) float64
	allreduce, allreduceEagerly          func(float64) float64

	attnWords, mlaBMM, mlpWords, sharedWords, moeWords, gateWords string
	dsaWords                                                      string // the DSA backends the module rows were measured with
}

// derive fills t's grids, t.Kernels and t.Extrapolated from AIConfigurator's rows.
func derive(t *Table, mk MoEKernel, vllmQKNorm bool, peaks gatePeaks, gemms []gemmRow, fp8 *staticFP8, moes []moeRow, ctxs, gens []attentionRow, mla mlaInputs,
	ars []allreduceRow, gemmRel, moeRel, ctxRel, genRel, arRel string) error {
	s, l := t.LLM, t.Layout
	d := &deriver{t: t, s: s, l: l, mk: mk, peaks: peaks, gemms: gemms, fp8: fp8, moes: moes, ctxs: ctxs, gens: gens, mla: mla, ars: ars,
		gemmRel: gemmRel, moeRel: moeRel, ctxRel: ctxRel, genRel: genRel, arRel: arRel,
		headsPerGPU: s.Heads / l.TP, kvPerGPU: max(1, s.KVHeads/l.TP), attnQuant: s.attentionQuant(t.GEMMQuant),
		attnDtypes: map[[2]string]string{}}
	d.fused = fusedElementwise(t.Backend, s.Architecture, s.Hidden, l.TP)
	d.fusedShared = sglangFusedSharedExperts(t.Backend, s, mk, l)
	d.fp8In = trtllmFP8Inputs(d.fused)
	d.perLayerQKNorm, d.qkVarianceElems = perLayerQKNorm(t, vllmQKNorm)
	d.latentNorms = mlaLatentNormsUnmeasured(t.Backend, s, mla.ops)
	d.sharedAdd = sglangDeepSeekSharedAdd(t.Backend, s, d.fusedShared)
	// SGLang's own element-wise kernels (sglangelementwise.go), except around MLA.
	d.sglangKernels = d.fused.sglang && !s.MLA() && t.TimingReference != ReferenceDynosim

	// The stages in this order: each states what it extrapolated in t.Extrapolated as it
	// prices, so the order is the table's text.
	for _, stage := range []func() error{d.projections, d.mlps, d.moeLayer, d.allReduces} {
		if err := stage(); err != nil {
			return err
		}
	}
	d.tokenGrids()
	if err := d.attention(); err != nil {
		return err
	}
	d.kernels()
	return nil
}

func (d *deriver) note(what string) { d.t.Extrapolated = append(d.t.Extrapolated, what) }

func zero(float64) float64 { return 0 }

// tokenGrids samples the per-step operators over the tokens of a step (and the logits over
// the sequences).
func (d *deriver) tokenGrids() {
	t, s := d.t, d.s
	layers := float64(s.Layers)
	fullLayers, linearLayers := float64(s.FullAttentionLayers()), float64(s.LinearLayers)
	nt := axisNodes(tokenOctaves)
	moeLayers := float64(s.MoELayers())
	denseLayers := float64(s.DenseMLPLayers())
	t.GEMM = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 {
		if d.linearProj != nil {
			return fullLayers*d.attnProj(x) + linearLayers*d.linearProj(x) + denseLayers*d.mlp(x)
		}
		return layers*d.attnProj(x) + denseLayers*d.mlp(x)
	}))}
	if s.SharedInter > 0 && d.fusedShared == 0 {
		t.SharedExperts = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return moeLayers * d.shared(x) }))}
	}
	for _, g := range []struct {
		precision string
		flops     float64
	}{{PrecisionHighest, d.peaks.fp32}, {PrecisionHigh, d.peaks.tf32}} {
		t.RouterGate = append(t.RouterGate, RouterGate{Float32MatmulPrecision: g.precision, Grid: Grid{Cols: nt,
			Values: round(sample(nt, func(x float64) float64 { return moeLayers * d.gate(x, g.flops) }))}})
	}
	t.MoE = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return moeLayers * d.moe(x) }))}
	t.Collective = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * d.allreduce(x) }))}
	if d.allreduceEagerly != nil {
		t.CollectiveEager = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * d.allreduceEagerly(x) }))}
	}
	t.Elementwise = Grid{Cols: nt, Values: round(sample(nt, d.elementwiseUS))}
	ns := axisNodes(seqOctaves)
	t.Logits = Grid{Cols: ns, Values: round(sample(ns, d.logits))}
}
