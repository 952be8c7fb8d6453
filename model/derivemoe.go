package model

// The MoE layer: the routed experts from the moe rows (transferred from another shape, or
// with SGLang's shared expert fused in) and the router gate.

import (
	"cmp"
	"fmt"
	"slices"
)

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

// moeLayer prices a MoE model's routed experts and router gate; without experts both are zero.
func (d *deriver) moeLayer() error {
	d.moe, d.gate = zero, func(float64, float64) float64 { return 0 }
	if !d.s.MoE() {
		return nil
	}
	if err := d.experts(); err != nil {
		return err
	}
	return d.routerGate()
}

// experts prices the routed experts from the rows of the measured shape and distribution.
func (d *deriver) experts() error {
	s, l, mk, h := d.s, d.l, d.mk, d.s.Hidden
	own := MoEShape{Hidden: h, Inter: s.ExpertInter, Experts: s.Experts, TopK: s.TopK}
	at := own
	if mk.Shape != (MoEShape{}) {
		at = mk.Shape
	}
	tokens, latency := transferMoE(own, at)
	dist := cmp.Or(mk.Distribution, moeDistribution)
	// The SGLang collector's routing copies, taken out of its rows (sglangmoecopies.go).
	copies := collectorTopKCopies(d.moeRel, mk.Source, l.MoEEP)
	var moePts []point
	rowsDist := dist // the distribution whose rows the experts are priced from
	if dist == NarrowIndependent {
		rowsDist = moeDistribution
		moePts = d.moeRows(at, rowsDist, copies)
		if len(moePts) > 0 {
			var unpaired []int
			moePts, unpaired = narrowIndependent(moePts, d.moeRows(at, "balanced", copies), at, l.MoEEP, moePowerLawAlpha)
			if len(unpaired) > 0 {
				d.note(fmt.Sprintf("moe_perf: %s %s moe_tp %d moe_ep %d: no balanced row at %v tokens, where %s keeps the power-law row as measured",
					mk.Source, mk.Quant, l.MoETP, l.MoEEP, unpaired, NarrowIndependent))
			}
		}
	} else {
		moePts = d.moeRows(at, dist, copies)
	}
	if len(moePts) == 0 {
		return missing("moe_perf", fmt.Sprintf("%s %s hidden %d inter %d top-%d of %d experts moe_tp %d moe_ep %d %s",
			mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP, rowsDist))
	}
	for i := range moePts {
		moePts[i] = point{moePts[i].x * tokens, moePts[i].us * latency}
	}
	ms := newSeries(moePts)
	d.moe = func(x float64) float64 { return ms.at(x, 1) }
	if d.fusedShared > 0 {
		if err := d.fuseSharedExpert(at, tokens, latency, copies); err != nil {
			return err
		}
	}
	d.moeWords = fmt.Sprintf("%s: %s %s hidden %d inter %d top-%d/%d moe_tp %d moe_ep %d %s",
		d.moeRel, mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP, dist)
	if v := mk.SmallStepsVersion; v != "" {
		d.moeWords += fmt.Sprintf(", at steps of at most %d tokens %s's rows (sglangmoereduce.go)", sglangCompiledReduceTokens, v)
	}
	if copies {
		d.moeWords += ", less the collector's three routing copies (mem_empirical_constant_latency each)"
	}
	if at != own {
		what := fmt.Sprintf("moe_perf: %s measured at hidden %d inter %d top-%d of %d experts, transferred to this model's hidden %d inter %d top-%d of %d at equal tokens per expert (tokens × %.4g) with latency × %.4g (experts × hidden × inter)",
			mk.Source, at.Hidden, at.Inter, at.TopK, at.Experts, h, s.ExpertInter, s.TopK, s.Experts, tokens, latency)
		d.note(what)
		d.moeWords += " — " + what
	}
	return nil
}

// moeRows are the kernel's rows at the measured shape at and distribution, at the measured
// shape's tokens and latency.
func (d *deriver) moeRows(at MoEShape, distribution string, copies bool) []point {
	mk, l := d.mk, d.l
	var pts []point
	var filled []int64 // rows of one rank holding the whole step (moesampler.go)
	alpha, powerLaw := powerLawAlpha(distribution)
	for _, r := range d.moes {
		if r.Kernel == mk.Source && r.Dtype == mk.Quant && r.Hidden == int64(at.Hidden) && r.Inter == int64(at.Inter) &&
			r.TopK == int64(at.TopK) && r.Experts == int64(at.Experts) && r.MoETP == int64(l.MoETP) &&
			r.MoEEP == int64(l.MoEEP) && r.Distribution == distribution {
			if powerLaw && firstExpertsFillRel(d.moeRel) && fillsMeasuredRank(int(r.Tokens), at.Experts, at.TopK, l.MoEEP, alpha) {
				filled = append(filled, r.Tokens)
				continue
			}
			us := msToUS(r.Latency)
			if copies {
				us -= d.t.GPU.topKCopiesUS(float64(r.Tokens), at.TopK, at.Experts)
			}
			pts = append(pts, point{float64(r.Tokens), us})
		}
	}
	if len(filled) > 0 && len(pts) > 0 {
		slices.Sort(filled)
		d.note(fmt.Sprintf("moe_perf: %s %s moe_ep %d %s: the rows at %v tokens left out, their draw put every token-expert pair on the measured rank (the sampler's fill before aiconfigurator 13dadba3b); below the next measured tokens its row is the floor",
			mk.Source, mk.Quant, l.MoEEP, distribution, slices.Compact(filled)))
	}
	return pts
}

// fuseSharedExpert adds SGLang's fused shared expert to the routed experts' price.
func (d *deriver) fuseSharedExpert(at MoEShape, tokens, latency float64, copies bool) error {
	s, l, mk := d.s, d.l, d.mk
	// The shared expert as one more expert of the same kernel, holding every token of
	// the step: priced as what this kernel spends on one expert that holds that many,
	// the balanced row at the step whose tokens give each expert as many (tokens ×
	// experts / top-k) divided by the experts. Its GEMMs are not priced apart
	// (SharedExperts stays empty).
	bal := d.moeRows(at, "balanced", copies)
	if len(bal) == 0 {
		return missing("moe_perf", fmt.Sprintf("%s %s hidden %d inter %d top-%d of %d experts moe_tp %d moe_ep %d balanced (the fused shared expert's price)",
			mk.Source, mk.Quant, at.Hidden, at.Inter, at.TopK, at.Experts, l.MoETP, l.MoEEP))
	}
	for i := range bal {
		bal[i] = point{bal[i].x * tokens, bal[i].us * latency}
	}
	bs, spread, experts := newSeries(bal), float64(s.Experts)/float64(s.TopK), float64(s.Experts)
	routed := d.moe
	d.moe = func(x float64) float64 { return routed(x) + float64(d.fusedShared)*bs.at(x*spread, 1)/experts }
	d.note(fmt.Sprintf("moe_perf: SGLang fuses the shared expert into %s as expert %d of top-%d (DeepSeek-V3's shared-experts fusion): priced as the routed rows plus one expert holding every token, the balanced row at tokens × %g over %d experts (beyond its last measured tokens at that row's utilisation)",
		mk.Source, s.Experts+d.fusedShared, s.TopK+d.fusedShared, spread, s.Experts))
	return nil
}

// routerGate prices the router gate: on its roofline where it runs in FP32, else as a GEMM.
func (d *deriver) routerGate() error {
	s, t, h := d.s, d.t, d.s.Hidden
	if s.FP32RouterGate && t.TimingReference != ReferenceDynosim {
		d.gate = func(x, flops float64) float64 { return fp32GateUS(x, s.Experts, h, flops, t.GPU) }
		d.gateWords = fmt.Sprintf("router gate: FP32 GEMM n=%d k=%d on its roofline (float32_matmul_precision highest: FP32 CUDA cores, %.0f TFLOPS; high: TF32 tensor cores, %.0f TFLOPS; mem_bw × mem_bw_empirical_scaling_factor) + mem_empirical_constant_latency, plus the FP32 copy of its input",
			s.Experts, h, d.peaks.fp32/1e12, d.peaks.tf32/1e12)
		return nil
	}
	// A replicated BF16 linear layer, whatever the float32 matmul precision (and the
	// dynosim reference's price of an FP32 gate: AIConfigurator's router_gemm is BF16).
	g, err := gemmCurve(d.gemms, unquantGEMMDtype, s.Experts, h, d.note)
	if err != nil {
		return err
	}
	d.gate = func(x, _ float64) float64 { return g(x) }
	d.gateWords = fmt.Sprintf("%s: router gate %s GEMM n=%d k=%d", d.gemmRel, unquantGEMMDtype, s.Experts, h)
	if s.FP32RouterGate {
		d.gateWords = fmt.Sprintf("router gate: %s: %s GEMM n=%d k=%d, as AIConfigurator prices it (either float32_matmul_precision)", d.gemmRel, unquantGEMMDtype, s.Experts, h)
	}
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
