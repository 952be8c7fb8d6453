package model

// The element-wise kernels of one forward pass: the residual adds and RMSNorms, the work around
// attention (RoPE, KV write, QK-norm), a hybrid model's gates and the embedding.

// elementwiseUS prices the element-wise kernels of one forward pass at a step of tokens.
func (d *deriver) elementwiseUS(tokens float64) float64 {
	s, l, memOp := d.s, d.l, d.t.GPU.memOpUS
	layers := float64(s.Layers)
	act := float64(s.ActivationBytes)
	addNorm := d.t.addNormUS(tokens)
	// Around attention, AIConfigurator's op list adds RoPE on q and k, the KV-cache write
	// and, where the architecture has it, QK-norm (two passes over q and k, each an
	// element-wise op and a norm), with a 1.1 correction; vLLM runs these kernels in every
	// step, prefill or decode. A per-layer QK-norm is priced as vLLM runs it instead: a
	// reading pass and a read-write pass over q and k (its all-reduce is in allreduce).
	qBytes := float64(d.headsPerGPU*s.HeadDim) * act
	kBytes := float64(d.kvPerGPU*s.HeadDim) * act
	q, k := tokens*qBytes, tokens*kBytes
	qkNorm, opListQKNorm := d.qkNormUS(q, k)
	aroundAttn := d.aroundAttentionUS(tokens, q, k, opListQKNorm)
	if d.fused.normInAllReduce {
		addNorm = 0
	}
	embed := memOp(tokens * float64(s.Hidden) * act)
	if d.sharedAdd { // reads both outputs, writes the sum
		embed += float64(s.MoELayers()) * memOp(3*tokens*float64(s.Hidden)*act)
	}
	if s.Hybrid() {
		fullLayers, linearLayers := float64(s.FullAttentionLayers()), float64(s.LinearLayers)
		// The output gate's sigmoid × attention output on the full-attention layers; the
		// DeltaNet layers' gated RMSNorm reads the value output and the gate z, writes one.
		gate := 0.0
		switch {
		case d.sglangKernels && s.AttnOutputGate:
			aroundAttn, qkNorm = sglangGatedAttentionUS(memOp, q, k), 0
		case s.AttnOutputGate:
			gate = memOp(3 * q)
		}
		gatedNorm := memOp(3 * tokens * float64(s.linearValueDim()/l.TP) * act)
		// From 0.5.10 one Triton kernel splits the fused input projections' outputs.
		if sglangFusedLinearProj(d.t.BackendVersion) {
			gatedNorm += memOp(s.linearSplitBytes(tokens, l.TP))
		}
		return layers*2*addNorm + fullLayers*(aroundAttn+qkNorm+gate) + linearLayers*gatedNorm + embed
	}
	siluAndMul := 0.0
	if d.sglangKernels && s.Inter > 0 {
		siluAndMul = float64(s.DenseMLPLayers()) * sglangSiluAndMulUS(memOp, tokens, s.Inter/l.TP, s.ActivationBytes)
	}
	return layers*(2*addNorm+aroundAttn+qkNorm) + siluAndMul + embed
}

// qkNormUS is a layer's QK-norm over q and k bytes where it is priced apart, or whether the
// op list's passes price it (added around attention).
func (d *deriver) qkNormUS(q, k float64) (us float64, opList bool) {
	memOp := d.t.GPU.memOpUS
	switch {
	case d.perLayerQKNorm:
		return memOp(q+k) + memOp(2*(q+k)), false
	case d.s.QKNorm && d.fused.qkNormRoPE:
		return memOp(2 * (q + k)), false // one kernel reads q and k and writes them back
	case d.s.QKNorm:
		return 0, true
	}
	return 0, false
}

// aroundAttentionUS is a layer's element-wise work around attention, over q and k bytes.
func (d *deriver) aroundAttentionUS(tokens, q, k float64, opListQKNorm bool) float64 {
	s, memOp := d.s, d.t.GPU.memOpUS
	var aroundAttn float64
	switch {
	case d.latentNorms:
		aroundAttn = mlaLatentNormsUS(memOp, s, tokens)
	case s.MLA(): // inside the measured MLA module
	case d.sglangKernels:
		aroundAttn = sglangAroundAttentionUS(memOp, q, k, s.QKNorm && !d.perLayerQKNorm)
	default:
		if !d.fused.ropeInAttention {
			aroundAttn = 2*memOp(q+k) + 2*memOp(k)
		}
		if opListQKNorm {
			aroundAttn += 2 * (2*memOp(q) + 2*memOp(k))
		}
		aroundAttn *= 1.1
	}
	return aroundAttn
}
