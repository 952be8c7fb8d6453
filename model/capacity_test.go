package model

import (
	"strings"
	"testing"
)

func TestSeedCapacityArithmetic(t *testing.T) {
	c := seedWorker(t).Capacity()
	if c.GPUs != 4 {
		t.Fatalf("GPUs %d", c.GPUs)
	}
	// Weights ≈ 57.6 GB per GPU at TP 4 (FP8 experts and attention, BF16 embeddings).
	if gb := float64(c.WeightBytes) / 1e9; gb < 57.4 || gb > 57.8 {
		t.Fatalf("weights %.2f GB per GPU, want ≈ 57.6", gb)
	}
	// FP8 KV: 62 layers × 2 (K,V) × 2 KV heads per GPU × 128 × 1 byte = 31,744 B per GPU,
	// 126,976 B = 124 KiB per token per worker.
	if c.KVCacheDtype != KVFP8 || c.KVBytesPerToken != 31744 || c.KVBytesPerTokenTotal != 4*31744 {
		t.Fatalf("KV %s: %d B per token per GPU, %d per worker", c.KVCacheDtype, c.KVBytesPerToken, c.KVBytesPerTokenTotal)
	}
	// capacity × 0.9 × (1 − 0.02 tolerance); the silicon reference's default budget is
	// vLLM's own (weights and activations off; NCCL and runtime memory outside it).
	capacity, util := 193273528320.0, 0.9
	if c.UsableBytes != int64(capacity*util*0.98) || c.NCCLBytes != 411041792 || c.OtherBytes != 3758096384 {
		t.Fatalf("memory inputs: usable %d nccl %d other %d", c.UsableBytes, c.NCCLBytes, c.OtherBytes)
	}
	if c.budget != MemoryBudgetVLLM || c.KVBytes != c.UsableBytes-c.WeightBytes-c.ActivationBytes {
		t.Fatalf("KV bytes are not what is left under vLLM's budget (budget %q)", c.budget)
	}
	if want := int(c.KVBytes / (c.KVBytesPerToken * 64)); c.NumGPUBlocks != want || c.DerivedBlocks != want || c.Overridden {
		t.Fatalf("blocks %d (derived %d), want %d", c.NumGPUBlocks, c.DerivedBlocks, want)
	}
	if tokens := c.NumGPUBlocks * 64; tokens < 3_200_000 || tokens > 3_600_000 {
		t.Fatalf("seed worker holds %d tokens, want 3.2–3.6 M with an FP8 cache", tokens)
	}
	if s := c.String(); !strings.Contains(s, "KV blocks") || !strings.Contains(s, "124 KiB") ||
		!strings.Contains(s, "31744 B per GPU") || !strings.Contains(s, "kv_cache_dtype fp8") {
		t.Fatalf("arithmetic text:\n%s", s)
	}
}

// A BF16 cache takes twice the bytes per token, so the same memory holds half the blocks
// (to the block) and everything but the per-token figure is unchanged.
func TestCapacityFollowsKVDtype(t *testing.T) {
	fp8 := seedWorker(t).Capacity()
	d := SeedDeployment()
	d.KVCacheDtype = KVBF16
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	bf16 := w.Capacity()
	if bf16.KVBytesPerToken != 63488 || bf16.KVBytesPerTokenTotal != 253952 || bf16.KVElementBytes != 2 {
		t.Fatalf("BF16 KV per token %d per GPU (%d per worker, %d B per element)", bf16.KVBytesPerToken, bf16.KVBytesPerTokenTotal, bf16.KVElementBytes)
	}
	if bf16.KVBytes != fp8.KVBytes || bf16.WeightBytes != fp8.WeightBytes {
		t.Fatal("the KV dtype changes the per-token size, not the memory left for the cache")
	}
	if bf16.DerivedBlocks != int(bf16.KVBytes/(63488*64)) || fp8.DerivedBlocks/2 != bf16.DerivedBlocks && (fp8.DerivedBlocks-1)/2 != bf16.DerivedBlocks {
		t.Fatalf("BF16 %d blocks, FP8 %d: want half", bf16.DerivedBlocks, fp8.DerivedBlocks)
	}
	if tokens := bf16.NumGPUBlocks * 64; tokens < 1_600_000 || tokens > 1_800_000 {
		t.Fatalf("BF16 cache holds %d tokens, want 1.6–1.8 M", tokens)
	}
	d.KVCacheDtype = "int4"
	if _, err := NewWorker(d); err == nil || !strings.Contains(err.Error(), "kv_cache_dtype") {
		t.Fatalf("unknown dtype: %v", err)
	}
}

func TestCapacityResponds(t *testing.T) {
	base := seedWorker(t).Capacity()
	d := SeedDeployment()
	d.GPUMemoryUtilization = 0.8
	w, _ := NewWorker(d)
	if w.Capacity().NumGPUBlocks >= base.NumGPUBlocks {
		t.Fatal("less memory utilisation must leave fewer blocks")
	}
	d = SeedDeployment()
	d.MaxNumBatchedTokens = 65536
	w, _ = NewWorker(d)
	if c := w.Capacity(); c.ActivationBytes <= base.ActivationBytes || c.NumGPUBlocks >= base.NumGPUBlocks {
		t.Fatal("a larger token budget must take activation memory from the KV cache")
	}
	d = SeedDeployment()
	d.BlockSize = 16
	w, _ = NewWorker(d)
	if c := w.Capacity(); c.NumGPUBlocks < 4*base.NumGPUBlocks || c.NumGPUBlocks > 4*base.NumGPUBlocks+4 {
		t.Fatalf("block 16 gives %d blocks, want 4 × %d", c.NumGPUBlocks, base.NumGPUBlocks)
	}
	d = SeedDeployment()
	d.NumGPUBlocks = 1234
	w, _ = NewWorker(d)
	if c := w.Capacity(); c.NumGPUBlocks != 1234 || !c.Overridden || c.DerivedBlocks != base.DerivedBlocks {
		t.Fatalf("override: %+v", c)
	}
}

// gpt-oss alternates full and 128-token sliding-window attention (18 layers each): under vLLM's
// hybrid allocator only the full-attention layers cost KV bytes per token of context, so the
// cache holds twice the tokens it would if every layer kept every token.
func TestCapacityHybridSlidingWindow(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.TP, d.MoETP, d.MoEEP = "openai/gpt-oss-120b", "h200_sxm", 1, 1, 1
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Capacity()
	// 18 full layers × 2 × 8 KV heads × 64 × 1 B (FP8).
	if c.KVBytesPerToken != 18*2*8*64 {
		t.Fatalf("KV per token %d B, want %d (full-attention layers only)", c.KVBytesPerToken, 18*2*8*64)
	}
	if want := int(c.KVBytes / (c.KVBytesPerToken * int64(d.BlockSize))); c.NumGPUBlocks != want {
		t.Fatalf("blocks %d, want %d", c.NumGPUBlocks, want)
	}
	if s := c.String(); !strings.Contains(s, "18 sliding-window layers keep 128 tokens") {
		t.Fatalf("arithmetic text:\n%s", s)
	}
}

// memory_budget vllm takes off what vLLM's profiler does — weights and activations — and
// leaves the NCCL and runtime memory AIConfigurator's budget also subtracts in the headroom.
// Unset, the budget follows the timing reference: vllm under silicon, aiconfigurator under
// dynosim (Dynamo's mocker priced by AIConfigurator).
func TestMemoryBudgetVLLM(t *testing.T) {
	capacity := func(budget, reference string) Capacity {
		t.Helper()
		d := SeedDeployment()
		d.MemoryBudget, d.TimingReference = budget, reference
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w.Capacity()
	}
	c, aic := seedWorker(t).Capacity(), capacity(MemoryBudgetAIConfigurator, "")
	if c.budget != MemoryBudgetVLLM || aic.budget != MemoryBudgetAIConfigurator {
		t.Fatalf("budgets %q, %q", c.budget, aic.budget)
	}
	if explicit := capacity(MemoryBudgetVLLM, ""); explicit.NumGPUBlocks != c.NumGPUBlocks {
		t.Fatalf("explicit vllm budget %d blocks, silicon's default %d", explicit.NumGPUBlocks, c.NumGPUBlocks)
	}
	if dyn := capacity("", ReferenceDynosim); dyn.budget != MemoryBudgetAIConfigurator || dyn.NumGPUBlocks != aic.NumGPUBlocks {
		t.Fatalf("dynosim's default budget %q, %d blocks; aiconfigurator's %d", dyn.budget, dyn.NumGPUBlocks, aic.NumGPUBlocks)
	}
	if dyn := capacity(MemoryBudgetVLLM, ReferenceDynosim); dyn.NumGPUBlocks != c.NumGPUBlocks {
		t.Fatalf("an explicit vllm budget under dynosim: %d blocks, want %d", dyn.NumGPUBlocks, c.NumGPUBlocks)
	}
	d := SeedDeployment()
	if c.KVBytes != c.UsableBytes-c.WeightBytes-c.ActivationBytes || c.KVBytes != aic.KVBytes+aic.NCCLBytes+aic.OtherBytes {
		t.Fatalf("vllm KV %d B, aiconfigurator %d B + NCCL %d + other %d", c.KVBytes, aic.KVBytes, aic.NCCLBytes, aic.OtherBytes)
	}
	if c.NumGPUBlocks <= aic.NumGPUBlocks {
		t.Fatalf("vllm budget %d blocks, aiconfigurator %d", c.NumGPUBlocks, aic.NumGPUBlocks)
	}
	if s := c.String(); !strings.Contains(s, "memory_budget vllm") || !strings.Contains(s, "outside its budget") || strings.Contains(s, "− NCCL") {
		t.Fatalf("arithmetic text:\n%s", s)
	}
	if s := aic.String(); !strings.Contains(s, "memory_budget aiconfigurator") || !strings.Contains(s, "− NCCL") {
		t.Fatalf("default arithmetic text:\n%s", s)
	}
	d.MemoryBudget = "torch"
	if _, err := NewWorker(d); err == nil || !strings.Contains(err.Error(), `memory_budget "torch"`) {
		t.Fatalf("unknown budget: %v", err)
	}
}

// A published log line: vllm#45178 (B200, DEP2 — attention DP 2, experts EP 2 —
// MiniMax-M2.5 NVFP4, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0, vLLM's defaults otherwise)
// reports a 769,888-token KV cache per engine. The vllm budget comes within 1 % of it (−0.7 %; checked within 2 %), with
// vLLM's serving defaults (gpu_memory_utilization 0.9, 8,192 batched tokens, 1,024 sequences,
// block 16) and the FP8 KV cache its token count implies (126,976 B a token at TP 1).
func TestMemoryBudgetPublishedKVCache(t *testing.T) {
	d := SeedDeployment()
	d.Quantization = "nvfp4"
	d.TP, d.MoETP, d.MoEEP = 2, 1, 2 // the TP 2 × EP 2 table; the capacity is then taken at DEP2
	d.MaxNumBatchedTokens, d.MaxNumSeqs, d.BlockSize = 8192, 1024, 16
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	const published = 769888
	for _, b := range MemoryBudgets() {
		dep := *w
		dep.d.TP, dep.d.AttentionDP, dep.d.MemoryBudget = 1, 2, b
		c := dep.Capacity()
		tokens := c.NumGPUBlocks * c.BlockSize
		off := float64(tokens)/published - 1
		t.Logf("memory_budget %s: %d tokens (%+.1f %% from the published %d)", b, tokens, 100*off, published)
		if b == MemoryBudgetVLLM && (off < -0.02 || off > 0.02) {
			t.Errorf("memory_budget vllm: %d tokens, published %d", tokens, published)
		}
	}
}

// SGLang's budget (model_runner.py, profile_max_num_token): mem_fraction_static of the memory
// free after NCCL's setup holds the weights and the KV pool only, so the pool is vLLM's
// budget's plus the activation peak that vLLM's profiler takes off, less the fraction of NCCL's
// memory; the arithmetic says where the activations went.
func TestMemoryBudgetSGLang(t *testing.T) {
	vllm := seedWorker(t).Capacity()
	d := SeedDeployment()
	d.MemoryBudget = MemoryBudgetSGLang
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Capacity()
	nccl := int64(d.GPUMemoryUtilization * float64(c.NCCLBytes))
	if c.NCCLBytes <= 0 || c.KVBytes != c.UsableBytes-c.WeightBytes-nccl || c.KVBytes != vllm.KVBytes+vllm.ActivationBytes-nccl || c.NumGPUBlocks <= vllm.NumGPUBlocks {
		t.Fatalf("sglang budget: KV %d B, %d blocks; vllm budget KV %d B + activations %d B, %d blocks",
			c.KVBytes, c.NumGPUBlocks, vllm.KVBytes, vllm.ActivationBytes, vllm.NumGPUBlocks)
	}
	if s := c.String(); !strings.Contains(s, "outside SGLang's mem_fraction_static") {
		t.Fatalf("the arithmetic does not say the activations are outside the budget:\n%s", s)
	}
}

// TensorRT-LLM's budget (pyexecutor/_util.py, cal_max_tokens): free_gpu_memory_fraction of
// what the profiling step leaves of the whole memory once the weights, the activation peak
// and the NCCL and runtime memory are taken (KvCacheCreator), not a fraction of the whole less those.
func TestMemoryBudgetTRTLLM(t *testing.T) {
	d := SeedDeployment()
	d.MemoryBudget = MemoryBudgetTRTLLM
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Capacity()
	whole := int64(float64(c.GPUMemoryBytes) * (1 - KVTolerance))
	want := int64(d.GPUMemoryUtilization * float64(whole-c.WeightBytes-c.ActivationBytes-c.NCCLBytes-c.OtherBytes))
	if vllm := seedWorker(t).Capacity(); c.KVBytes != want || c.KVBytes <= vllm.KVBytes {
		t.Fatalf("trtllm budget: KV %d B, want %d (and above vLLM's %d at utilisation %.2f)", c.KVBytes, want, vllm.KVBytes, d.GPUMemoryUtilization)
	}
}
