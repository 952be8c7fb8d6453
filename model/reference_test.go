package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func dynosimWorker(t testing.TB) *Worker {
	t.Helper()
	d := SeedDeployment()
	d.TimingReference = ReferenceDynosim
	w, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// siliconOver prices one forward pass per step over w's table, to compare compositions.
func siliconOver(t testing.TB, w *Worker) *Worker {
	t.Helper()
	d := w.Deployment()
	d.TimingReference = ReferenceSilicon
	s, err := newWorker(d, w.Table())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The dynosim tables price what AIConfigurator prices for this deployment: Triton fused_moe
// experts from its vLLM 0.19.0 table and a BF16 router GEMM, the same under either float32
// matmul precision; the silicon tables keep vLLM's kernels.
func TestDynosimTablesAreAIConfiguratorsChoice(t *testing.T) {
	dyn, sil := dynosimWorker(t).Table(), seedWorker(t).Table()
	if dyn.MoEKernel != tritonMoEKernel || dyn.TimingReference != ReferenceDynosim || !strings.HasSuffix(TableFileName(dyn), "_dynosim"+tableExt) {
		t.Fatalf("dynosim table %s: experts %s, reference %q", TableFileName(dyn), dyn.MoEKernel, dyn.TimingReference)
	}
	if sil.MoEKernel != trtllmMoEKernel || sil.TimingReference != "" {
		t.Fatalf("silicon table %s: experts %s, reference %q", TableFileName(sil), sil.MoEKernel, sil.TimingReference)
	}
	hi, _ := dyn.RouterGateFor(PrecisionHigh)
	lo, _ := dyn.RouterGateFor(PrecisionHighest)
	if !slices.Equal(hi.Values, lo.Values) {
		t.Fatal("dynosim router gate differs by float32 matmul precision; AIConfigurator prices one BF16 GEMM")
	}
	// Triton's block-FP8 experts are dearer than TRT-LLM's at prefill sizes.
	if !(dynosimWorker(t).StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: 8192}}}) > seedWorker(t).StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: 8192}}})) {
		t.Fatal("dynosim 8k prefill not dearer than silicon's")
	}
}

// The mocker prices a mixed pass as two forward passes one after the other: the prefill
// prediction of its chunks, then the decode prediction of every request that emits a token
// (decodes and the prompt the pass completes), each paying its own non-attention work.
func TestDynosimPricesPrefillThenDecode(t *testing.T) {
	dyn := dynosimWorker(t)
	sil := siliconOver(t, dyn)
	prefillOnly := &Batch{Prefill: []Chunk{{NewTokens: 4096, CachedTokens: 2048}}}
	decodes := &Batch{Decodes: 8, DecodeContextTokens: 8 * 6000}
	// The silicon price of the prefill alone is the mocker's prefill pass (one chunk: the mean
	// is the chunk), so a pass that also decodes costs exactly both predictions.
	if got, want := dyn.StepTimeUS(prefillOnly), sil.StepTimeUS(prefillOnly); got != want {
		t.Fatalf("prefill pass %d µs, silicon %d µs: one chunk is its own mean", got, want)
	}
	mixed := &Batch{Prefill: prefillOnly.Prefill, Decodes: 8, DecodeContextTokens: 8 * 6000}
	pre := dyn.nonAttention.at(4096) + dyn.logits.at(1) + dyn.context.at(1, math.Sqrt(6144*6144-2048*2048))
	dec := dyn.nonAttention.at(8) + dyn.logits.at(8) + dyn.decode.at(8, 6001)
	if got, want := dyn.StepTimeUS(mixed), int64(math.Ceil(pre+dec)); got != want {
		t.Fatalf("mixed pass %d µs, want prefill + decode = %d µs", got, want)
	}
	if dyn.StepTimeUS(mixed) <= sil.StepTimeUS(mixed) {
		t.Fatalf("mixed pass: dynosim %d µs not above silicon's one pass %d µs", dyn.StepTimeUS(mixed), sil.StepTimeUS(mixed))
	}
	// A completed prompt decodes in the same pass: its first token waits for the decode pass.
	first := &Batch{Prefill: prefillOnly.Prefill, FirstTokens: 1, FirstTokenContextTokens: 6144}
	if dyn.StepTimeUS(first) <= dyn.StepTimeUS(prefillOnly)+mockerDecodeFloorUS-1 {
		t.Fatalf("completing prefill %d µs, prefill alone %d µs: want a decode pass of at least 1 ms on top", dyn.StepTimeUS(first), dyn.StepTimeUS(prefillOnly))
	}
	// A pure decode pass is the same forward pass at context + 1 (AIConfigurator's s = isl + 1).
	if s, d := sil.StepTimeUS(decodes), dyn.StepTimeUS(decodes); d < s || d > s+2 {
		t.Fatalf("pure decode: silicon %d µs, dynosim %d µs", s, d)
	}
}

// The decode prediction is floored at 1 ms (perf_model.rs); a pass without work costs 1 µs.
func TestDynosimDecodeFloor(t *testing.T) {
	d := SeedDeployment()
	d.TimingReference = ReferenceDynosim
	w := dynosimWorker(t)
	// A synthetic table whose decode costs nothing shows the floor.
	tb := *w.Table()
	zero := func(g Grid) Grid { g.Values = make([]float64, len(g.Values)); return g }
	tb.GEMM, tb.MoE, tb.Collective, tb.Elementwise, tb.Logits = zero(tb.GEMM), zero(tb.MoE), zero(tb.Collective), zero(tb.Elementwise), zero(tb.Logits)
	tb.RouterGate = append([]RouterGate(nil), tb.RouterGate...)
	for i := range tb.RouterGate {
		tb.RouterGate[i].Grid = zero(tb.RouterGate[i].Grid)
	}
	tb.Attention = append([]Attention(nil), tb.Attention...)
	for i := range tb.Attention {
		tb.Attention[i].Decode = zero(tb.Attention[i].Decode)
	}
	free, err := newWorker(d, &tb)
	if err != nil {
		t.Fatal(err)
	}
	if got := free.StepTimeUS(&Batch{Decodes: 3, DecodeContextTokens: 300}); got != mockerDecodeFloorUS {
		t.Fatalf("free decode %d µs, want the 1 ms floor", got)
	}
	if got := free.StepTimeUS(&Batch{}); got != 1 {
		t.Fatalf("empty pass %d µs, want 1", got)
	}
}

// Dynosim never prices a pass below silicon's one forward pass over the same batch by more
// than rounding: it pays the decode batch's non-attention work a second time.
func TestDynosimNotCheaperThanOnePass(t *testing.T) {
	dyn := dynosimWorker(t)
	sil := siliconOver(t, dyn)
	rapid.Check(t, func(t *rapid.T) {
		new := rapid.IntRange(1, 16384).Draw(t, "new")
		cached := rapid.IntRange(0, 65536).Draw(t, "cached")
		dec := rapid.IntRange(0, 256).Draw(t, "decodes")
		ctx := rapid.IntRange(1, 32768).Draw(t, "ctx")
		b := &Batch{Prefill: []Chunk{{NewTokens: new, CachedTokens: cached}}, Decodes: dec, DecodeContextTokens: int64(dec * ctx)}
		if d, s := dyn.StepTimeUS(b), sil.StepTimeUS(b); d+1 < s {
			t.Fatalf("%+v: dynosim %d µs < silicon %d µs", b, d, s)
		}
	})
}

func TestTimingReferenceValidate(t *testing.T) {
	d := SeedDeployment()
	d.TimingReference = "mocker"
	if err := d.Validate(); err == nil {
		t.Fatal("timing_reference mocker accepted")
	}
	for _, ref := range append(TimingReferences(), "") {
		d.TimingReference = ref
		if err := d.Validate(); err != nil {
			t.Fatalf("timing_reference %q: %v", ref, err)
		}
	}
}

// The mocker has no asynchronous scheduler, so a dynosim deployment that asks for one is refused.
func TestDynosimRefusesAsyncScheduling(t *testing.T) {
	d := SeedDeployment()
	d.TimingReference, d.AsyncScheduling = ReferenceDynosim, true
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "async_scheduling") {
		t.Fatalf("dynosim with async scheduling: %v", err)
	}
}

// The step prices behind docs/disagg.md's account of DynoSim's disaggregated example (Qwen3-32B
// on H200, block 512, BF16 KV, dynosim tables): a TP1 decode worker's step of 8 and 9 decodes
// at the workload's mean context (32,768 prompt + 128 output tokens), and a TP4 prefill
// worker's two 8,192-token chunks of a prompt whose first 16,384 tokens are cached (and a TP1
// worker's).
func TestQwen3DisaggStepPrices(t *testing.T) {
	worker := func(tp int) *Worker {
		w, err := NewWorker(Deployment{ModelName: "Qwen/Qwen3-32B", HardwareSKU: "h200_sxm", Backend: BackendVLLM,
			BackendVersion: "0.19.0", TP: tp, MoETP: tp, MoEEP: 1, AttentionDP: 1, MaxNumBatchedTokens: 8192,
			MaxNumSeqs: 256, BlockSize: 512, GPUMemoryUtilization: 0.9, NumGPUBlocks: 20000, KVCacheDtype: KVBF16,
			TimingReference: ReferenceDynosim})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	decode, prefill := worker(1), worker(4)
	for _, c := range []struct {
		w    *Worker
		b    Batch
		want int64
	}{
		{decode, Batch{Decodes: 8, DecodeContextTokens: 8 * 32896}, 38659},
		{decode, Batch{Decodes: 9, DecodeContextTokens: 9 * 32896}, 40770},
		{prefill, Batch{Prefill: []Chunk{{NewTokens: 8192, CachedTokens: 16384}}}, 393275},
		{prefill, Batch{Prefill: []Chunk{{NewTokens: 8192, CachedTokens: 24576}}}, 445439},
		// The same chunks on a TP1 worker, and the one-token chunk of a prompt's last token.
		{decode, Batch{Prefill: []Chunk{{NewTokens: 8192, CachedTokens: 16384}}}, 1257960},
		{decode, Batch{Prefill: []Chunk{{NewTokens: 8192, CachedTokens: 24576}}}, 1463353},
		{decode, Batch{Prefill: []Chunk{{NewTokens: 1, CachedTokens: 32767}}}, 20914},
	} {
		if got := c.w.StepTimeUS(&c.b); got != c.want {
			t.Errorf("%+v: %d µs, want %d", c.b, got, c.want)
		}
	}
}
