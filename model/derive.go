package model

// Deriving a table from AIConfigurator's rows: the GEMM curves at a layer's shapes and the
// composition of one forward pass per batch shape.

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// gemmCurve is the measured latency (µs) of an m×k by k×n GEMM as a function of m. An n
// between two measured n (same k) is interpolated linearly in n, and beyond the widest held at
// its utilisation. A k the tables never measured is interpolated linearly between the nearest
// measured k (or above the largest scaled by k, holding its utilisation); note records that.
func gemmCurve(rows []gemmRow, dtype string, n, k int, note func(string)) (func(m float64) float64, error) {
	ks := map[int64]bool{}
	for _, r := range rows {
		if r.Dtype == dtype {
			ks[r.K] = true
		}
	}
	c, lo, hi, err := acrossK(ks, int64(k), func(x int64) (func(float64) float64, error) { return gemmCurveAtK(rows, dtype, n, int(x)) })
	switch {
	case err != nil:
		return nil, err
	case lo == 0:
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (no measured k at or below it)", dtype, n, k))
	case hi == 0:
		note(fmt.Sprintf("gemm_perf: %s n=%d k=%d extrapolated from the measured k=%d (× %.3g)", dtype, n, k, lo, float64(k)/float64(lo)))
	case lo != int64(k):
		note(fmt.Sprintf("gemm_perf: %s n=%d k=%d interpolated between the measured k=%d and k=%d", dtype, n, k, lo, hi))
	}
	return c, nil
}

// acrossK is a curve of m at inner dimension k from the curves measured at other k (at): at a
// measured k that one; between the nearest measured k below and above it, linearly in k; above
// the largest measured, that one scaled by k (its utilisation held). lo and hi are the k it
// read: lo == hi == k where k was measured, hi 0 where it scaled lo; lo 0 (and no curve) where
// no k at or below it was measured.
func acrossK[V any](measured map[int64]V, k int64, at func(int64) (func(float64) float64, error)) (c func(float64) float64, lo, hi int64, err error) {
	if _, ok := measured[k]; ok {
		c, err = at(k)
		return c, k, k, err
	}
	lo, hi = neighbours(measured, k)
	if lo == 0 {
		return nil, 0, hi, nil
	}
	a, err := at(lo)
	if err != nil {
		return nil, lo, hi, err
	}
	if hi == 0 {
		r := float64(k) / float64(lo)
		return func(m float64) float64 { return a(m) * r }, lo, 0, nil
	}
	b, err := at(hi)
	if err != nil {
		return nil, lo, hi, err
	}
	w := float64(k-lo) / float64(hi-lo)
	return func(m float64) float64 { x := a(m); return x + (b(m)-x)*w }, lo, hi, nil
}

// neighbours are the largest measured key below x and the smallest above it, 0 where there is
// none.
func neighbours[V any](measured map[int64]V, x int64) (lo, hi int64) {
	for v := range measured {
		if v < x && v > lo {
			lo = v
		} else if v > x && (hi == 0 || v < hi) {
			hi = v
		}
	}
	return lo, hi
}

func gemmCurveAtK(rows []gemmRow, dtype string, n, k int) (func(m float64) float64, error) {
	byN := map[int64][]point{}
	for _, r := range rows {
		if r.Dtype == dtype && r.K == int64(k) {
			byN[r.N] = append(byN[r.N], point{float64(r.M), msToUS(r.Latency)})
		}
	}
	if pts, ok := byN[int64(n)]; ok {
		s := newSeries(pts)
		return func(m float64) float64 { return s.at(m, 1) }, nil
	}
	var ns []int64
	for x := range byN {
		ns = append(ns, x)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	i := sort.Search(len(ns), func(i int) bool { return ns[i] > int64(n) })
	if i == 0 {
		return nil, missing("gemm_perf", fmt.Sprintf("%s n=%d k=%d (measured n at this k: %v)", dtype, n, k, ns))
	}
	if i == len(ns) {
		// Above the widest measured n the measured utilisation is held, as on the other axes:
		// the work (and the weight bytes) grow as n.
		top := ns[len(ns)-1]
		s, r := newSeries(byN[top]), float64(n)/float64(top)
		return func(m float64) float64 { return s.at(m, 1) * r }, nil
	}
	lo, hi := newSeries(byN[ns[i-1]]), newSeries(byN[ns[i]])
	w := float64(int64(n)-ns[i-1]) / float64(ns[i]-ns[i-1])
	return func(m float64) float64 { a := lo.at(m, 1); return a + (hi.at(m, 1)-a)*w }, nil
}

// transferMoE maps expert rows measured at shape `at` onto shape `own`: a step of N tokens
// gives each expert N × topk / experts of them, so a row of N' tokens at the other shape is
// read as N' × (topk' / experts') / (topk / experts) tokens here, where each expert GEMM sees
// the same rows; its latency scales by the layer's expert work, experts × hidden × inter (the
// weights read and, at equal rows per expert, the FLOPs). This is an assumption, not a
// measurement: it holds only for the kernel's cost per expert-GEMM element, not for costs
// that do not grow with the shape (launches, routing), which it scales too.
func transferMoE(own, at MoEShape) (tokens, latency float64) {
	tokens = float64(at.TopK) / float64(at.Experts) / (float64(own.TopK) / float64(own.Experts))
	latency = float64(own.Experts) * float64(own.Hidden) * float64(own.Inter) /
		(float64(at.Experts) * float64(at.Hidden) * float64(at.Inter))
	return tokens, latency
}

// gatePeaks are the FLOP/s an FP32 GEMM runs at under each float32 matmul precision.
type gatePeaks struct{ fp32, tf32 float64 }

func derive(t *Table, mk MoEKernel, vllmQKNorm bool, peaks gatePeaks, gemms []gemmRow, fp8 *staticFP8, moes []moeRow, ctxs, gens []attentionRow, mla mlaInputs,
	ars []allreduceRow, gemmRel, moeRel, ctxRel, genRel, arRel string) error {
	s, l := t.LLM, t.Layout
	note := func(what string) { t.Extrapolated = append(t.Extrapolated, what) }
	fused := fusedElementwise(t.Backend, s.Architecture, s.Hidden, l.TP)
	fusedShared := sglangFusedSharedExperts(t.Backend, s, mk, l)
	// A per-tensor FP8 GEMM under a static input scale (fp8static.go): the row less the
	// quantisation the run does not do.
	fp8In := trtllmFP8Inputs(fused)
	gemmAt := func(dtype string, n, k int, fp8Input bool) (func(float64) float64, error) {
		if dtype != gemmFP8Static {
			return gemmCurve(gemms, dtype, n, k, note)
		}
		c, err := gemmCurve(gemms, "fp8", n, k, note)
		if err != nil {
			return nil, err
		}
		return fp8.gemm(c, n, k, fp8Input)
	}
	layers := float64(s.Layers)
	headsPerGPU := s.Heads / l.TP
	kvPerGPU := max(1, s.KVHeads/l.TP)
	h := s.Hidden
	attnQuant := s.attentionQuant(t.GEMMQuant)

	// The attention projections of one layer: QKV and output, or MLA's down-, up- and output
	// projections.
	var attnProj, mlaKVB func(float64) float64
	var attnWords, mlaBMM string
	if s.MLA() {
		p, words, err := mlaProjections(gemms, attnQuant, s, l.TP, !mla.ops, note)
		if err != nil {
			return err
		}
		attnProj, attnWords = p, "MLA projections: "+words
		if mla.ops {
			n, k := headsPerGPU*(s.QKNopeDim+s.VHeadDim), s.KVLoRARank
			if mlaKVB, err = gemmCurve(gemms, attnQuant, n, k, note); err != nil {
				return err
			}
			mlaBMM = mlaBMMDtype(t.Backend, mla.bmms, headsPerGPU, attnQuant)
			attnWords += fmt.Sprintf("; kv_b n=%d k=%d with the prefill attention, the decode BMMs %s (%s)", n, k, mlaBMM, mla.bmmRel)
		}
	} else {
		qHeads := headsPerGPU
		if s.AttnOutputGate {
			qHeads *= 2 // q_proj yields the query and its output gate
		}
		qkvN := (qHeads + 2*kvPerGPU) * s.HeadDim
		qkv, err := gemmAt(attnQuant, qkvN, h, fp8In.qkv)
		if err != nil {
			return err
		}
		proj, err := gemmAt(attnQuant, h, headsPerGPU*s.HeadDim, fp8In.oProj)
		if err != nil {
			return err
		}
		attnProj = func(x float64) float64 { return qkv(x) + proj(x) }
		attnWords = fmt.Sprintf("%s GEMM qkv n=%d k=%d, proj n=%d k=%d", attnQuant, qkvN, h, h, headsPerGPU*s.HeadDim)
	}
	logits, err := gemmCurve(gemms, unquantGEMMDtype, s.Vocab/l.TP, h, note)
	if err != nil {
		return err
	}
	// A hybrid model's DeltaNet layers have projections of their own; the attention
	// projections, RoPE, KV write and QK-norm belong to its full-attention layers only.
	fullLayers, linearLayers := float64(s.FullAttentionLayers()), float64(s.LinearLayers)
	var linearProj func(float64) float64
	if s.Hybrid() {
		p, words, err := linearProjections(gemms, t.GEMMQuant, s, l.TP, t.BackendVersion, note)
		if err != nil {
			return err
		}
		linearProj, attnWords = p, fmt.Sprintf("%d full-attention layers: %s%s", s.FullAttentionLayers(), attnWords, words)
	}
	// The dense MLP (and a MoE model's shared experts) is column- then row-parallel over tp:
	// one gate_up GEMM of n = 2 × inter / tp and one down GEMM of k = inter / tp.
	zero := func(float64) float64 { return 0 }
	mlpCurve := func(inter int) (func(float64) float64, string, error) {
		if inter == 0 {
			return zero, "", nil
		}
		if inter%l.TP != 0 {
			return nil, "", fmt.Errorf("intermediate size %d is not divisible by tp %d", inter, l.TP)
		}
		up, err := gemmAt(t.GEMMQuant, 2*inter/l.TP, h, fp8In.gateUp)
		if err != nil {
			return nil, "", err
		}
		down, err := gemmAt(t.GEMMQuant, h, inter/l.TP, fp8In.down)
		if err != nil {
			return nil, "", err
		}
		return func(m float64) float64 { return up(m) + down(m) },
			fmt.Sprintf("; MLP gate_up n=%d k=%d, down n=%d k=%d", 2*inter/l.TP, h, h, inter/l.TP), nil
	}
	mlp, mlpWords, err := mlpCurve(s.Inter)
	if err != nil {
		return err
	}
	shared, sharedWords, err := mlpCurve(s.SharedInter)
	if err != nil {
		return err
	}

	moe := zero
	var moeWords, gateWords string
	gate := func(float64, float64) float64 { return 0 }
	if s.MoE() {
		own := MoEShape{Hidden: h, Inter: s.ExpertInter, Experts: s.Experts, TopK: s.TopK}
		at := own
		if mk.Shape != (MoEShape{}) {
			at = mk.Shape
		}
		tokens, latency := transferMoE(own, at)
		dist := cmp.Or(mk.Distribution, moeDistribution)
		// The SGLang collector's routing copies, taken out of its rows (sglangmoecopies.go).
		copies := collectorTopKCopies(moeRel, mk.Source, l.MoEEP)
		measured := func(distribution string) []point { // at the measured shape's tokens and latency
			var pts []point
			var filled []int64 // rows of one rank holding the whole step (moesampler.go)
			alpha, powerLaw := powerLawAlpha(distribution)
			for _, r := range moes {
				if r.Kernel == mk.Source && r.Dtype == mk.Quant && r.Hidden == int64(at.Hidden) && r.Inter == int64(at.Inter) &&
					r.TopK == int64(at.TopK) && r.Experts == int64(at.Experts) && r.MoETP == int64(l.MoETP) &&
					r.MoEEP == int64(l.MoEEP) && r.Distribution == distribution {
					if powerLaw && firstExpertsFillRel(moeRel) && fillsMeasuredRank(int(r.Tokens), at.Experts, at.TopK, l.MoEEP, alpha) {
						filled = append(filled, r.Tokens)
						continue
					}
					us := msToUS(r.Latency)
					if copies {
						us -= t.GPU.topKCopiesUS(float64(r.Tokens), at.TopK, at.Experts)
					}
					pts = append(pts, point{float64(r.Tokens), us})
				}
			}
			if len(filled) > 0 && len(pts) > 0 {
				slices.Sort(filled)
				note(fmt.Sprintf("moe_perf: %s %s moe_ep %d %s: the rows at %v tokens left out, their draw put every token-expert pair on the measured rank (the sampler's fill before aiconfigurator 13dadba3b); below the next measured tokens its row is the floor",
					mk.Source, mk.Quant, l.MoEEP, distribution, slices.Compact(filled)))
			}
			return pts
		}
		var moePts []point
		rowsDist := dist // the distribution whose rows the experts are priced from
		if dist == NarrowIndependent {
			rowsDist = moeDistribution
			moePts = measured(rowsDist)
			if len(moePts) > 0 {
				var unpaired []int
				moePts, unpaired = narrowIndependent(moePts, measured("balanced"), at, l.MoEEP, moePowerLawAlpha)
				if len(unpaired) > 0 {
					note(fmt.Sprintf("moe_perf: %s %s moe_tp %d moe_ep %d: no balanced row at %v tokens, where %s keeps the power-law row as measured",
						mk.Source, mk.Quant, l.MoETP, l.MoEEP, unpaired, NarrowIndependent))
				}
			}
		} else {
			moePts = measured(dist)
		}
		if len(moePts) == 0 {
			return missing("moe_perf", fmt.Sprintf("%s %s hidden %d inter %d top-%d of %d experts moe_tp %d moe_ep %d %s",
				mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP, rowsDist))
		}
		for i := range moePts {
			moePts[i] = point{moePts[i].x * tokens, moePts[i].us * latency}
		}
		ms := newSeries(moePts)
		moe = func(x float64) float64 { return ms.at(x, 1) }
		if fusedShared > 0 {
			// The shared expert as one more expert of the same kernel, holding every token of
			// the step: priced as what this kernel spends on one expert that holds that many,
			// the balanced row at the step whose tokens give each expert as many (tokens ×
			// experts / top-k) divided by the experts. Its GEMMs are not priced apart
			// (SharedExperts stays empty).
			bal := measured("balanced")
			if len(bal) == 0 {
				return missing("moe_perf", fmt.Sprintf("%s %s hidden %d inter %d top-%d of %d experts moe_tp %d moe_ep %d balanced (the fused shared expert's price)",
					mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP))
			}
			for i := range bal {
				bal[i] = point{bal[i].x * tokens, bal[i].us * latency}
			}
			bs, spread, experts := newSeries(bal), float64(s.Experts)/float64(s.TopK), float64(s.Experts)
			moe = func(x float64) float64 { return ms.at(x, 1) + float64(fusedShared)*bs.at(x*spread, 1)/experts }
			note(fmt.Sprintf("moe_perf: SGLang fuses the shared expert into %s as expert %d of top-%d (DeepSeek-V3's shared-experts fusion): priced as the routed rows plus one expert holding every token, the balanced row at tokens × %g over %d experts (beyond its last measured tokens at that row's utilisation)",
				mk.Source, s.Experts+fusedShared, s.TopK+fusedShared, spread, s.Experts))
		}
		moeWords = fmt.Sprintf("%s: %s %s hidden %d inter %d top-%d/%d moe_tp %d moe_ep %d %s",
			moeRel, mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP, dist)
		if v := mk.SmallStepsVersion; v != "" {
			moeWords += fmt.Sprintf(", at steps of at most %d tokens %s's rows (sglangmoereduce.go)", sglangCompiledReduceTokens, v)
		}
		if copies {
			moeWords += ", less the collector's three routing copies (mem_empirical_constant_latency each)"
		}
		if at != own {
			what := fmt.Sprintf("moe_perf: %s measured at hidden %d inter %d top-%d of %d experts, transferred to this model's hidden %d inter %d top-%d of %d at equal tokens per expert (tokens × %.4g) with latency × %.4g (experts × hidden × inter)",
				mk.Source, at.Hidden, at.Inter, at.TopK, at.Experts, h, s.ExpertInter, s.TopK, s.Experts, tokens, latency)
			note(what)
			moeWords += " — " + what
		}
		if s.FP32RouterGate && t.TimingReference != ReferenceDynosim {
			gate = func(x, flops float64) float64 { return fp32GateUS(x, s.Experts, h, flops, t.GPU) }
			gateWords = fmt.Sprintf("router gate: FP32 GEMM n=%d k=%d on its roofline (float32_matmul_precision highest: FP32 CUDA cores, %.0f TFLOPS; high: TF32 tensor cores, %.0f TFLOPS; mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency, plus the FP32 copy of its input",
				s.Experts, h, peaks.fp32/1e12, peaks.tf32/1e12)
		} else {
			// A replicated BF16 linear layer, whatever the float32 matmul precision (and the
			// dynosim reference's price of an FP32 gate: AIConfigurator's router_gemm is BF16).
			g, err := gemmCurve(gemms, unquantGEMMDtype, s.Experts, h, note)
			if err != nil {
				return err
			}
			gate = func(x, _ float64) float64 { return g(x) }
			gateWords = fmt.Sprintf("%s: router gate %s GEMM n=%d k=%d", gemmRel, unquantGEMMDtype, s.Experts, h)
			if s.FP32RouterGate {
				gateWords = fmt.Sprintf("router gate: %s: %s GEMM n=%d k=%d, as AIConfigurator prices it (either float32_matmul_precision)", gemmRel, unquantGEMMDtype, s.Experts, h)
			}
		}
	}

	// vLLM runs a QK-norm over all of a layer's heads (qk_norm_type per_layer) as three kernels:
	// one pass reads q and k for their sums of squares, one all-reduce adds the two FP32
	// variances of every token across the TP group, one pass normalises q and k in place
	// (MiniMaxText01RMSNormTP.forward_qk, vllm#31493, merged by 2026-01: "only a single
	// all_reduce is launched"; the same three in SGLang, sglang#14416). forward_qk is plain
	// torch code inlined into the compiled graph, so Inductor fuses the element-wise work on
	// each side of the all-reduce (priced as one pass each); 0.19 has no pass that replaces it (fuse_minimax_qk_norm came
	// later, off by default, and InferenceX's script sets no pass_config). On request
	// (ImportOptions.QKNormKernels aiconfigurator) and always for the dynosim reference,
	// AIConfigurator's op list prices it instead, as per-head element-wise ops.
	perLayerQKNorm := vllmQKNorm && s.QKNormPerLayer && t.TimingReference != ReferenceDynosim
	qkVarianceElems := 0.0 // bfloat16 elements of the all-reduce per token: 2 FP32 variances
	if perLayerQKNorm {
		qkVarianceElems = 2 * 4 / float64(s.ActivationBytes)
	}

	// vLLM all-reduces the attention output and the MoE output of every layer across the TP group.
	// Steps above vLLM's CUDA-graph capture size launch them eagerly (cudagraph.go); the
	// dynosim reference prices every step with the graph rows, as AIConfigurator does.
	graphMode, eagerMode := allReduceModes(t.Backend)
	allreduce := func(float64) float64 { return 0 }
	var allreduceEagerly func(float64) float64
	if l.TP > 1 {
		measured := func(mode string) (func(float64) float64, error) {
			var pts []point
			for _, r := range ars {
				if r.Dtype == allreduceElemType && r.GPUs == int64(l.TP) && r.Mode == mode {
					pts = append(pts, point{float64(r.Size), msToUS(r.Latency)})
				}
			}
			if len(pts) == 0 {
				return nil, missing("custom_allreduce_perf", fmt.Sprintf("%s %d GPUs %s", allreduceElemType, l.TP, mode))
			}
			s := newSeries(pts)
			if t.Backend.OrDefault() == BackendSGLang { // each side of its kernel switch (sglangallreduce.go)
				return stagedAllReduce(s, l.TP, allreduceElemSize), nil
			}
			return func(x float64) float64 { return s.at(x, 1) }, nil
		}
		ar, err := measured(graphMode)
		if err != nil {
			return err
		}
		layerAllReduces := func(a func(float64) float64, tokens float64) float64 {
			us := 2 * a(tokens*float64(h))
			if qkVarianceElems > 0 {
				us += a(tokens * qkVarianceElems)
			}
			return us
		}
		allreduce = func(tokens float64) float64 { return layerAllReduces(ar, tokens) }
		if t.TimingReference != ReferenceDynosim && eagerMode != "" {
			are, err := measured(eagerMode)
			if err != nil {
				return err
			}
			allreduceEagerly = func(tokens float64) float64 { return layerAllReduces(are, tokens) }
		}
	}

	memOp := t.GPU.memOpUS
	act := float64(s.ActivationBytes)
	latentNorms, sharedAdd := sglangDeepSeekElementwise(t.Backend, s, mla.ops, fusedShared)
	latentNorms = latentNorms || trtllmLatentNorms(t.Backend, s, mla.ops)
	// SGLang's own element-wise kernels (sglangelementwise.go), except around MLA.
	sglangKernels := fused.sglang && !s.MLA() && t.TimingReference != ReferenceDynosim
	qBytes := float64(headsPerGPU*s.HeadDim) * act
	kBytes := float64(kvPerGPU*s.HeadDim) * act
	elementwise := func(tokens float64) float64 {
		addNorm := t.addNormUS(tokens)
		// Around attention, AIConfigurator's op list adds RoPE on q and k, the KV-cache write
		// and, where the architecture has it, QK-norm (two passes over q and k, each an
		// element-wise op and a norm), with a 1.1 correction; vLLM runs these kernels in every
		// step, prefill or decode. A per-layer QK-norm is priced as vLLM runs it instead: a
		// reading pass and a read-write pass over q and k (its all-reduce is in allreduce).
		q, k := tokens*qBytes, tokens*kBytes
		qkNorm, opListQKNorm := 0.0, false
		switch {
		case perLayerQKNorm:
			qkNorm = memOp(q+k) + memOp(2*(q+k))
		case s.QKNorm && fused.qkNormRoPE:
			qkNorm = memOp(2 * (q + k)) // one kernel reads q and k and writes them back
		case s.QKNorm:
			opListQKNorm = true
		}
		var aroundAttn float64
		switch {
		case latentNorms:
			aroundAttn = mlaLatentNormsUS(memOp, s, tokens)
		case s.MLA(): // inside the measured MLA module
		case sglangKernels:
			aroundAttn = sglangAroundAttentionUS(memOp, q, k, s.QKNorm && !perLayerQKNorm)
		default:
			if !fused.ropeInAttention {
				aroundAttn = 2*memOp(q+k) + 2*memOp(k)
			}
			if opListQKNorm {
				aroundAttn += 2 * (2*memOp(q) + 2*memOp(k))
			}
			aroundAttn *= 1.1
		}
		if fused.normInAllReduce {
			addNorm = 0
		}
		embed := memOp(tokens * float64(h) * act)
		if sharedAdd { // reads both outputs, writes the sum
			embed += float64(s.MoELayers()) * memOp(3*tokens*float64(h)*act)
		}
		if s.Hybrid() {
			// The output gate's sigmoid × attention output on the full-attention layers; the
			// DeltaNet layers' gated RMSNorm reads the value output and the gate z, writes one.
			gate := 0.0
			switch {
			case sglangKernels && s.AttnOutputGate:
				aroundAttn, qkNorm = sglangGatedAttentionUS(memOp, q, k), 0
			case s.AttnOutputGate:
				gate = memOp(3 * q)
			}
			gatedNorm := memOp(3 * tokens * float64(s.linearValueDim()/l.TP) * act)
			// From 0.5.10 one Triton kernel splits the fused input projections' outputs.
			if sglangFusedLinearProj(t.BackendVersion) {
				gatedNorm += memOp(s.linearSplitBytes(tokens, l.TP))
			}
			return layers*2*addNorm + fullLayers*(aroundAttn+qkNorm+gate) + linearLayers*gatedNorm + embed
		}
		siluAndMul := 0.0
		if sglangKernels && s.Inter > 0 {
			siluAndMul = float64(s.DenseMLPLayers()) * sglangSiluAndMulUS(memOp, tokens, s.Inter/l.TP, s.ActivationBytes)
		}
		return layers*(2*addNorm+aroundAttn+qkNorm) + siluAndMul + embed
	}

	nt := axisNodes(tokenOctaves)
	moeLayers := float64(s.MoELayers())
	denseLayers := float64(s.DenseMLPLayers())
	t.GEMM = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 {
		if linearProj != nil {
			return fullLayers*attnProj(x) + linearLayers*linearProj(x) + denseLayers*mlp(x)
		}
		return layers*attnProj(x) + denseLayers*mlp(x)
	}))}
	if s.SharedInter > 0 && fusedShared > 0 {
		sharedWords = ""
	} else if s.SharedInter > 0 {
		t.SharedExperts = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return moeLayers * shared(x) }))}
	}
	for _, g := range []struct {
		precision string
		flops     float64
	}{{PrecisionHighest, peaks.fp32}, {PrecisionHigh, peaks.tf32}} {
		t.RouterGate = append(t.RouterGate, RouterGate{Float32MatmulPrecision: g.precision, Grid: Grid{Cols: nt,
			Values: round(sample(nt, func(x float64) float64 { return moeLayers * gate(x, g.flops) }))}})
	}
	t.MoE = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return moeLayers * moe(x) }))}
	t.Collective = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * allreduce(x) }))}
	if allreduceEagerly != nil {
		t.CollectiveEager = Grid{Cols: nt, Values: round(sample(nt, func(x float64) float64 { return layers * allreduceEagerly(x) }))}
	}
	t.Elementwise = Grid{Cols: nt, Values: round(sample(nt, elementwise))}
	ns := axisNodes(seqOctaves)
	t.Logits = Grid{Cols: ns, Values: round(sample(ns, logits))}

	// Attention runs in BF16 whatever the KV-cache dtype (vLLM dequantises an FP8 cache in the
	// kernel), so each KV dtype has its own measured rows with attn_dtype bfloat16.
	// A collection that measures an FP8 cache at a shape only with FP8 attention math (SGLang
	// 0.5.14's head_dim 256 rows on H200) prices it with those rows, stated in t.Extrapolated.
	attnDtypes := map[[2]string]string{}
	attnDtype := func(rows []attentionRow, table, kvDtype string) string {
		key := [2]string{table, kvDtype}
		if ad, ok := attnDtypes[key]; ok {
			return ad
		}
		attnDtypes[key] = attentionDtype
		for _, r := range rows {
			if r.KVDtype == kvDtype && r.AttnDtype == attentionDtype && r.HeadDim == int64(s.HeadDim) && r.KVHeads == int64(kvPerGPU) && r.Heads == int64(headsPerGPU) {
				return attentionDtype
			}
		}
		for _, r := range rows {
			if r.KVDtype == kvDtype && r.AttnDtype == kvDtype && r.HeadDim == int64(s.HeadDim) && r.KVHeads == int64(kvPerGPU) && r.Heads == int64(headsPerGPU) {
				note(fmt.Sprintf("%s: %s KV cache at %d heads, %d KV heads, head_dim %d measured only with %s attention: priced from those rows", table, kvDtype, headsPerGPU, kvPerGPU, s.HeadDim, kvDtype))
				attnDtypes[key] = kvDtype
				return kvDtype
			}
		}
		return attentionDtype
	}
	attnAt := func(rows []attentionRow, table, kvDtype string, stepIsContext bool, heads, window int) surfaceSeries {
		pts := map[float64][]point{}
		ad := attnDtype(rows, table, kvDtype)
		for _, r := range rows {
			if r.Heads == int64(heads) && r.KVHeads == int64(kvPerGPU) && r.HeadDim == int64(s.HeadDim) &&
				r.Beam == 1 && r.Window == int64(window) && r.AttnDtype == ad && r.KVDtype == kvDtype {
				length := r.ISL
				if !stepIsContext {
					length = r.ISL + r.Step // generation rows: context = prompt + generated so far
				}
				pts[float64(r.Batch)] = append(pts[float64(r.Batch)], point{float64(length), msToUS(r.Latency)})
			}
		}
		return newSurfaceSeries(pts)
	}
	// attn prices the layer's attention at its query heads per GPU. A head count the tables
	// never measured (with this many KV heads) is interpolated linearly between the nearest
	// measured counts, or above the largest scaled by heads (the work per head is the same);
	// either is stated in t.Extrapolated.
	attn := func(rows []attentionRow, table, kvDtype string, stepIsContext bool, window int) (func(b, n, pow float64) float64, error) {
		at := func(heads int) surfaceSeries { return attnAt(rows, table, kvDtype, stepIsContext, heads, window) }
		if exact := at(headsPerGPU); len(exact.rows) > 0 {
			return exact.at, nil
		}
		lo, hi := 0, 0
		for _, r := range rows {
			if r.KVHeads == int64(kvPerGPU) && r.HeadDim == int64(s.HeadDim) && r.AttnDtype == attnDtype(rows, table, kvDtype) && r.KVDtype == kvDtype && r.Window == int64(window) {
				if n := int(r.Heads); n < headsPerGPU && n > lo {
					lo = n
				} else if n > headsPerGPU && (hi == 0 || n < hi) {
					hi = n
				}
			}
		}
		what := fmt.Sprintf("%d heads, %d KV heads, head_dim %d, %s attention, %s KV cache", headsPerGPU, kvPerGPU, s.HeadDim, attnDtype(rows, table, kvDtype), kvDtype)
		if window > 0 {
			what += fmt.Sprintf(", window %d", window)
		}
		switch {
		case lo > 0 && hi > 0:
			a, b := at(lo), at(hi)
			w := float64(headsPerGPU-lo) / float64(hi-lo)
			note(fmt.Sprintf("%s: %s interpolated between the measured %d and %d heads", table, what, lo, hi))
			return func(x, n, pow float64) float64 { u := a.at(x, n, pow); return u + (b.at(x, n, pow)-u)*w }, nil
		case lo > 0:
			a, r := at(lo), float64(headsPerGPU)/float64(lo)
			note(fmt.Sprintf("%s: %s extrapolated from the measured %d heads (× %g)", table, what, lo, r))
			return func(x, n, pow float64) float64 { return a.at(x, n, pow) * r }, nil
		}
		return nil, missing(table, what)
	}
	cr, cc := axisNodes(chunkOctaves), axisNodes(equivLenOctaves)
	dr, dc := axisNodes(decodeOctaves), axisNodes(decodeCtxOctaves)
	var dsaWords string // the DSA backends the module rows were measured with
	for _, kv := range []struct{ dtype, aic string }{{KVBF16, attentionDtype}, {KVFP8, "fp8"}} {
		// Full-attention layers, plus the sliding-window layers from the rows measured with
		// that window (each layer one call).
		full, sliding := layers-float64(s.SlidingLayers), float64(s.SlidingLayers)
		var ctxFull, genFull func(b, n, pow float64) float64
		var err error
		if s.DSA() {
			sel := dsaSelect{Architecture: mla.dsaArch, Heads: headsPerGPU, ModelHeads: s.Heads, GEMMType: attnQuant, KVDtype: kv.aic}
			ctxFull, genFull, dsaWords, err = dsaModule(mla.dsaCtxs, mla.dsaGens, ctxRel, genRel, sel, s.IndexTopK, attnProj, note)
		} else if s.MLA() {
			if mla.ops {
				ctxFull, genFull, err = mlaOpAttention(mla, ctxRel, genRel, s, headsPerGPU, kv.aic, mlaBMM, mlaKVB)
			} else {
				ctxFull, genFull, err = mlaAttention(mla.ctxs, mla.gens, ctxRel, headsPerGPU, attnQuant, kv.aic, attnProj, note)
			}
		} else {
			if ctxFull, err = attn(ctxs, "context_attention_perf", kv.aic, true, 0); err == nil {
				genFull, err = attn(gens, "generation_attention_perf", kv.aic, false, 0)
			}
		}
		if err != nil {
			return err
		}
		ctx, gen := ctxFull, genFull
		if s.SlidingLayers > 0 {
			ctxWin, err := attn(ctxs, "context_attention_perf", kv.aic, true, s.SlidingWindow)
			if err != nil {
				return err
			}
			genWin, err := attn(gens, "generation_attention_perf", kv.aic, false, s.SlidingWindow)
			if err != nil {
				return err
			}
			ctx = func(b, n, pow float64) float64 { return (full*ctxFull(b, n, pow) + sliding*ctxWin(b, n, pow)) / layers }
			gen = func(b, n, pow float64) float64 { return (full*genFull(b, n, pow) + sliding*genWin(b, n, pow)) / layers }
		}
		t.Attention = append(t.Attention, Attention{
			KVCacheDtype: kv.dtype,
			Context: Grid{Rows: cr, Cols: cc, Values: round(sample2(cr, cc, func(b, n float64) float64 {
				return fullLayers * ctx(b, n, 2)
			}))},
			Decode: Grid{Rows: dr, Cols: dc, Values: round(sample2(dr, dc, func(b, n float64) float64 {
				return fullLayers * gen(b, n, 1)
			}))},
		})
	}
	// An FP8 cache moves half the bytes of a BF16 one through the same kernels, so it is never
	// slower; where its measured point lies above the BF16 one (up to 20 % at a few short,
	// launch-bound shapes) that is measurement noise, levelled to the BF16 price.
	bf16, fp8KV := &t.Attention[0], &t.Attention[1]
	for _, g := range []struct{ lo, hi []float64 }{{fp8KV.Context.Values, bf16.Context.Values}, {fp8KV.Decode.Values, bf16.Decode.Values}} {
		for i := range g.lo {
			g.lo[i] = min(g.lo[i], g.hi[i])
		}
	}
	sort.Slice(t.Attention, func(i, j int) bool { return t.Attention[i].KVCacheDtype < t.Attention[j].KVCacheDtype })

	if s.DenseLayers > 0 {
		mlpWords = fmt.Sprintf(" (%d dense layers)%s", s.DenseLayers, mlpWords)
	}
	t.Kernels = []string{
		fmt.Sprintf("%s: %s%s%s; %s logits n=%d k=%d (n interpolated)",
			gemmRel, attnWords, mlpWords, strings.Replace(sharedWords, "MLP", "shared experts", 1),
			unquantGEMMDtype, s.Vocab/l.TP, h),
	}
	if fp8 != nil {
		fed := func(in bool) string {
			if in {
				return "FP8"
			}
			return "BF16, quantised with the static scale"
		}
		t.Kernels = append(t.Kernels, fmt.Sprintf("fp8_static GEMMs (TensorRT-LLM's FP8QDQ with the checkpoint's input scales): each fp8 row less %s; less %s where the input arrives in FP8 (qkv: %s, o_proj: %s, gate_up: %s, down: %s)",
			fp8.computeRel, fp8.matrixRel, fed(fp8In.qkv), fed(fp8In.oProj), fed(fp8In.gateUp), fed(fp8In.down)))
	}
	if s.MoE() {
		t.Kernels = append(t.Kernels, gateWords, moeWords)
	}
	qkNorm := ""
	switch {
	case perLayerQKNorm:
		qkNorm = " per-layer QK-norm as 2 passes over q and k,"
	case s.QKNorm && fused.qkNormRoPE:
		qkNorm = " QK-norm with RoPE as one pass over q and k,"
	case s.QKNorm:
		qkNorm = " QK-norm,"
	}
	if s.DSA() {
		t.Kernels = append(t.Kernels,
			fmt.Sprintf("%s, %s: the measured DSA module (%s at %d heads per GPU, %s projections, %s attention; %s) less its MLA projections priced above, decode beyond the measured context growing by the indexer alone (index_topk %d); KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
				ctxRel, genRel, mla.dsaArch, headsPerGPU, attnQuant, attentionDtype, dsaWords, s.IndexTopK, attentionDtype, KVBF16, KVFP8, attentionDtype))
	} else if mla.ops {
		t.Kernels = append(t.Kernels,
			fmt.Sprintf("%s, %s: the MLA attention kernels at %d heads per GPU, %s attention, prefill with kv_b and decode with the %s BMMs (%s); KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
				ctxRel, genRel, headsPerGPU, attentionDtype, mlaBMM, mla.bmmRel, attentionDtype, KVBF16, KVFP8, attentionDtype))
	} else if s.MLA() {
		t.Kernels = append(t.Kernels,
			fmt.Sprintf("%s, %s: the measured MLA module (DeepSeek-V3 shape at %d heads per GPU, %s projections, %s attention) less its projections priced above; KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
				ctxRel, genRel, headsPerGPU, attnQuant, attentionDtype, attentionDtype, KVBF16, KVFP8, attentionDtype))
	} else {
		t.Kernels = append(t.Kernels,
			fmt.Sprintf("%s, %s: %d heads / %d KV heads per GPU, head_dim %d, %s attention; KV cache %s (kv_cache_dtype %s) and fp8 (kv_cache_dtype %s, levelled to at most the %s price)",
				ctxRel, genRel, headsPerGPU, kvPerGPU, s.HeadDim, attentionDtype, attentionDtype, KVBF16, KVFP8, attentionDtype),
		)
	}
	if l.TP > 1 {
		mode := cmp.Or(graphMode, string(t.Backend))
		switch {
		case allreduceEagerly != nil && t.Backend.OrDefault() == BackendVLLM:
			mode += " (" + eagerMode + " above the CUDA-graph capture size)"
		case allreduceEagerly != nil:
			mode += " (" + eagerMode + " in the steps run without CUDA graphs: every step holding a prefill chunk)"
		}
		perLayer := fmt.Sprintf("2 per layer of tokens×%d elements", h)
		if qkVarianceElems > 0 {
			perLayer += fmt.Sprintf(" and 1 of tokens×%g (the per-layer QK-norm's FP32 variances of q and k)", qkVarianceElems)
		}
		t.Kernels = append(t.Kernels, fmt.Sprintf("%s: %s %s all-reduce over %d GPUs, %s", arRel, mode, allreduceElemType, l.TP, perLayer))
	}
	norms := "2 add+RMSNorm,"
	if fused.normInAllReduce {
		norms = "(2 add+RMSNorm inside the all-reduces)"
	}
	var aroundAttn string
	switch {
	case latentNorms:
		aroundAttn = " (RoPE and KV write inside the measured MLA kernel), the q_a and kv_a latent RMSNorms on two streams (the longer priced)"
	case fused.ropeInAttention:
		aroundAttn = qkNorm + " (RoPE and KV write inside the attention kernel)"
	case s.MLA():
		aroundAttn = " (RoPE, latent norms and KV write inside the MLA module)"
	case sglangKernels && s.Hybrid() && s.AttnOutputGate:
		aroundAttn = " on the full-attention layers copies of q, the gate and k, an RMSNorm of each of q and k, RoPE as one kernel (the KV write inside the measured attention), the gate's sigmoid and multiply; on the linear-attention layers the gated RMSNorm"
		if sglangFusedLinearProj(t.BackendVersion) {
			aroundAttn += " and the split of the input projections' outputs (fused_qkvzba_split_reshape_cat_contiguous)"
		}
	case sglangKernels:
		if s.QKNorm && !perLayerQKNorm {
			qkNorm = " QK-norm as a copy and an RMSNorm of each of q and k,"
		}
		aroundAttn = qkNorm + " RoPE as one kernel (the KV write inside the measured attention)"
		if s.Inter > 0 && !s.Hybrid() {
			aroundAttn += ", SiLU-and-mul"
		}
	default:
		aroundAttn = qkNorm + " RoPE, KV write"
	}
	embedWords := "embedding"
	if sharedAdd {
		embedWords = "embedding; per MoE layer the shared experts' output added to the routed experts'"
	}
	t.Kernels = append(t.Kernels,
		fmt.Sprintf("element-wise (%s%s per layer; %s): bytes / (mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency", norms, aroundAttn, embedWords),
	)
	return nil
}

// fp32GateUS prices one layer's MoE router gate at a step of tokens. vLLM's MiniMax-M2 gate is
// a replicated FP32 linear layer fed an FP32 copy of the hidden state (models/minimax_m2.py:
// params_dtype float32, hidden_states.to(float32)); FP32 matmuls run on CUDA cores unless TF32
// is enabled, which the measured runs did not do. No operator table measures it, so it is
// priced on its roofline: FLOPs at the FP32 peak or bytes at the effective bandwidth, whichever
// is longer, plus a launch. The cast is element-wise work torch.compile fuses into the RMSNorm
// before it, so it adds only its FP32 write.
func fp32GateUS(tokens float64, experts, hidden int, fp32FLOPS float64, g GPUSpec) float64 {
	bw := g.MemBW * g.MemBWScaling / 1e6 // bytes per µs
	e, h := float64(experts), float64(hidden)
	flops := 2 * tokens * e * h
	bytes := 4 * (e*h + tokens*h + tokens*e)
	return max(flops/fp32FLOPS*1e6, bytes/bw) + g.MemConstantUS + 4*tokens*h/bw
}
