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
	// KV: 62 layers × 2 (K,V) × 8 heads × 128 × 2 bytes = 253,952 B = 248 KiB per token per worker.
	if c.KVBytesPerTokenTotal != 253952 || c.KVBytesPerToken != 253952/4 {
		t.Fatalf("KV bytes per token %d per worker, %d per GPU", c.KVBytesPerTokenTotal, c.KVBytesPerToken)
	}
	if c.UsableBytes != int64(float64(193273528320)*0.9) || c.NCCLBytes != 411041792 || c.OtherBytes != 3758096384 {
		t.Fatalf("memory inputs: usable %d nccl %d other %d", c.UsableBytes, c.NCCLBytes, c.OtherBytes)
	}
	if c.KVBytes != c.UsableBytes-c.WeightBytes-c.ActivationBytes-c.NCCLBytes-c.OtherBytes {
		t.Fatal("KV bytes are not what is left")
	}
	if want := int(c.KVBytes / (c.KVBytesPerToken * 64)); c.NumGPUBlocks != want || c.DerivedBlocks != want || c.Overridden {
		t.Fatalf("blocks %d (derived %d), want %d", c.NumGPUBlocks, c.DerivedBlocks, want)
	}
	if c.NumGPUBlocks < 25000 || c.NumGPUBlocks > 29000 {
		t.Fatalf("seed worker holds %d blocks of 64 tokens, want ~27k (≈1.7M tokens)", c.NumGPUBlocks)
	}
	if s := c.String(); !strings.Contains(s, "KV blocks") || !strings.Contains(s, "248 KiB") {
		t.Fatalf("arithmetic text:\n%s", s)
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
