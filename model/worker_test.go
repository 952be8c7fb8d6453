package model

import (
	"math"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

func seedWorker(t testing.TB) *Worker {
	t.Helper()
	w, err := NewWorker(SeedDeployment())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func tpDeployment() Deployment {
	d := SeedDeployment()
	d.MoETP, d.MoEEP = 4, 1
	return d
}

func TestNewWorkerLayouts(t *testing.T) {
	for _, d := range []Deployment{SeedDeployment(), tpDeployment()} {
		w, err := NewWorker(d)
		if err != nil {
			t.Fatalf("%s: %v", d.Layout(), err)
		}
		if w.Table().Layout != d.Layout() {
			t.Fatalf("loaded layout %s for %s", w.Table().Layout, d.Layout())
		}
	}
}

func TestNewWorkerUnknownCombination(t *testing.T) {
	cases := []struct {
		edit func(*Deployment)
		want string
	}{
		{func(d *Deployment) { d.BackendVersion = "0.11.0" }, "vllm 0.11.0"},
		{func(d *Deployment) { d.HardwareSKU = "a100_sxm" }, "a100_sxm"},
		{func(d *Deployment) { d.Quantization = "int4" }, "quantization int4"},
		{func(d *Deployment) { d.ModelName = "Qwen/Qwen3-32B" }, "Qwen/Qwen3-32B"},
		{func(d *Deployment) { d.TP, d.MoEEP = 8, 8 }, "tp8-adp1-moetp1-moeep8"},
	}
	for _, c := range cases {
		d := SeedDeployment()
		c.edit(&d)
		_, err := NewWorker(d)
		if err == nil {
			t.Fatalf("%+v: no error", d)
		}
		for _, w := range []string{c.want, "model import --aic"} {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q does not mention %q", err, w)
			}
		}
	}
	d := SeedDeployment()
	d.MoEEP = 2
	if _, err := NewWorker(d); err == nil || !strings.Contains(err.Error(), "moe_tp×moe_ep") {
		t.Fatalf("inconsistent layout: %v", err)
	}
}

// On the token grid nodes a decode-free, attention-free step is exactly the table sum.
func TestStepTimeOnGridNodes(t *testing.T) {
	w := seedWorker(t)
	tb := w.Table()
	for _, i := range []int{0, 8, 20, 36, 52} {
		tokens := int(axisNode(i))
		if float64(tokens) != axisNode(i) {
			continue
		}
		gate, err := tb.RouterGateFor(PrecisionHighest)
		if err != nil {
			t.Fatal(err)
		}
		collective := tb.Collective
		if tokens > w.d.CUDAGraphMaxTokens() {
			collective = tb.CollectiveEager // run without CUDA graphs (cudagraph.go)
		}
		want := tb.GEMM.Values[i] + gate.Values[i] + tb.MoE.Values[i] + collective.Values[i] + tb.Elementwise.Values[i]
		br := w.Breakdown(&Batch{Decodes: tokens, DecodeContextTokens: int64(tokens)})
		if math.Abs(br.NonAttentionUS-want) > 1e-9 {
			t.Fatalf("%d tokens: non-attention %g, want table sum %g", tokens, br.NonAttentionUS, want)
		}
		// mean context 1 is the first column of the decode grid.
		row := int(axisPos(float64(tokens)))
		attn, err := tb.AttentionFor(KVFP8)
		if err != nil {
			t.Fatal(err)
		}
		if row >= attn.Decode.Rows {
			continue
		}
		if d := attn.Decode.Values[row*attn.Decode.Cols]; math.Abs(br.DecodeAttnUS-d) > 1e-9 {
			t.Fatalf("%d decodes: attention %g, want %g", tokens, br.DecodeAttnUS, d)
		}
	}
}

func TestStepTimeBetweenGridNodes(t *testing.T) {
	w := seedWorker(t)
	tb := w.Table()
	// 9 tokens is halfway between nodes 8 (index 12) and 10 (index 13).
	want := 0.0
	gate, err := tb.RouterGateFor(PrecisionHighest)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []Grid{tb.GEMM, gate.Grid, tb.MoE, tb.Collective, tb.Elementwise} {
		want += (g.Values[12] + g.Values[13]) / 2
	}
	got := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: 9}}}).NonAttentionUS
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("9 tokens: %g, want midpoint %g", got, want)
	}
}

// The seed worker's decode step lands where the silicon says a batch of that size runs:
// these are coarse physical bounds, not the validation (that is `model validate`).
func TestStepTimeMagnitudes(t *testing.T) {
	w := seedWorker(t)
	one := w.StepTimeUS(&Batch{Decodes: 1, DecodeContextTokens: 1024})
	if one < 4000 || one > 9000 {
		t.Fatalf("single decode step %d µs, want 4–9 ms", one)
	}
	prefill := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: 16384}}})
	if prefill < 10*one {
		t.Fatalf("16k-token prefill step %d µs should dwarf a decode step %d µs", prefill, one)
	}
	// Cached prefix makes the same new tokens cost more attention, never less.
	fresh := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: 2048}}})
	cached := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: 2048, CachedTokens: 30000}}})
	if cached <= fresh {
		t.Fatalf("2048 new tokens after a 30k prefix: %d µs, fresh %d µs", cached, fresh)
	}
	mixed := &Batch{Prefill: []Chunk{{NewTokens: 3000, CachedTokens: 5000}, {NewTokens: 100}}, Decodes: 40, DecodeContextTokens: 40 * 3000}
	br := w.Breakdown(mixed)
	if sum := br.NonAttentionUS + br.LogitsUS + br.ContextAttnUS + br.DecodeAttnUS; br.TotalUS != int64(math.Ceil(sum)) || br.Tokens != 3140 || br.Sequences != 42 {
		t.Fatalf("breakdown %+v does not add up to its total", br)
	}
	if w.StepTimeUS(&Batch{}) != 1 {
		t.Fatal("empty step must cost the 1 µs minimum")
	}
}

func TestStepTimeMonotoneInTokens(t *testing.T) {
	w := seedWorker(t)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 70000).Draw(t, "new")
		extra := rapid.IntRange(0, 20000).Draw(t, "extra")
		cached := rapid.IntRange(0, 200000).Draw(t, "cached")
		dec := rapid.IntRange(0, 600).Draw(t, "decodes")
		mean := int64(rapid.IntRange(1, 200000).Draw(t, "ctx"))
		ctx := int64(dec) * mean
		a := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: n, CachedTokens: cached}}, Decodes: dec, DecodeContextTokens: ctx})
		b := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: n + extra, CachedTokens: cached}}, Decodes: dec, DecodeContextTokens: ctx})
		if b < a {
			t.Fatalf("more prefill tokens got faster: %d new → %d µs, %d new → %d µs", n, a, n+extra, b)
		}
		c := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: n, CachedTokens: cached}}, Decodes: dec + 1, DecodeContextTokens: ctx + mean})
		if c < a {
			t.Fatalf("one more decode at the same mean context got faster: %d → %d µs", a, c)
		}
	})
}

func TestStepTimeMonotoneInContext(t *testing.T) {
	w := seedWorker(t)
	rapid.Check(t, func(t *rapid.T) {
		dec := rapid.IntRange(1, 1500).Draw(t, "decodes")
		ctx := rapid.Int64Range(int64(dec), int64(dec)*300000).Draw(t, "ctx")
		more := rapid.Int64Range(0, int64(dec)*10000).Draw(t, "more")
		a := w.StepTimeUS(&Batch{Decodes: dec, DecodeContextTokens: ctx})
		b := w.StepTimeUS(&Batch{Decodes: dec, DecodeContextTokens: ctx + more})
		if b < a {
			t.Fatalf("longer decode context got faster: %d → %d µs", a, b)
		}
		n := rapid.IntRange(1, 20000).Draw(t, "new")
		cached := rapid.IntRange(0, 200000).Draw(t, "cached")
		addc := rapid.IntRange(0, 50000).Draw(t, "addcached")
		x := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: n, CachedTokens: cached}}})
		y := w.StepTimeUS(&Batch{Prefill: []Chunk{{NewTokens: n, CachedTokens: cached + addc}}})
		if y < x {
			t.Fatalf("longer cached prefix got faster: %d → %d µs", x, y)
		}
	})
}

func TestStepTimeNoAllocations(t *testing.T) {
	w := seedWorker(t)
	mixed := &Batch{Prefill: []Chunk{{NewTokens: 4000, CachedTokens: 9000}, {NewTokens: 300}}, Decodes: 120, DecodeContextTokens: 120 * 9000}
	decode := &Batch{Decodes: 64, DecodeContextTokens: 64 * 1500}
	if n := testing.AllocsPerRun(100, func() { w.StepTimeUS(mixed); w.StepTimeUS(decode) }); n != 0 {
		t.Fatalf("StepTimeUS allocates %g times per call", n)
	}
}

func BenchmarkStepTimeDecode(b *testing.B) {
	w := seedWorker(b)
	batch := &Batch{Decodes: 64, DecodeContextTokens: 64 * 1536}
	var sink int64
	for b.Loop() {
		sink += w.StepTimeUS(batch)
	}
	_ = sink
}

func BenchmarkStepTimeMixed(b *testing.B) {
	w := seedWorker(b)
	batch := &Batch{Prefill: []Chunk{{NewTokens: 8192, CachedTokens: 20000}, {NewTokens: 512, CachedTokens: 0}},
		Decodes: 200, DecodeContextTokens: 200 * 9000}
	var sink int64
	for b.Loop() {
		sink += w.StepTimeUS(batch)
	}
	_ = sink
}

// BenchmarkDecodeStretch prices the engine's decode stretch of 32 steps of 4 decodes (the
// seed replay's: 32 in flight on 8 workers): one DecodeStepsUS call against 32 StepTimeUS
// calls. One op is one stretch.
func BenchmarkDecodeStretch(b *testing.B) {
	w := seedWorker(b)
	const n, steps, ctx = 4, 32, 4 * 9000
	out := make([]int64, steps)
	b.Run("one_call", func(b *testing.B) {
		for b.Loop() {
			w.DecodeStepsUS(n, ctx, out)
		}
	})
	b.Run("per_step", func(b *testing.B) {
		batch := &Batch{Decodes: n}
		for b.Loop() {
			for j := range out {
				batch.DecodeContextTokens = ctx + int64(j)*n
				out[j] = w.StepTimeUS(batch)
			}
		}
	})
}

func TestDeploymentValidate(t *testing.T) {
	if err := SeedDeployment().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Deployment)
		want string
	}{
		{func(d *Deployment) { d.TP = 0 }, "must be >= 1"},
		{func(d *Deployment) { d.MaxNumBatchedTokens = 0 }, "max_num_batched_tokens"},
		{func(d *Deployment) { d.MaxNumSeqs = -1 }, "max_num_seqs"},
		{func(d *Deployment) { d.BlockSize = 0 }, "block_size"},
		{func(d *Deployment) { d.GPUMemoryUtilization = 1.5 }, "gpu_memory_utilization"},
		{func(d *Deployment) { d.ContextLength = -1 }, "context_length"},
		{func(d *Deployment) { d.NumGPUBlocks = -3 }, "num_gpu_blocks"},
		{func(d *Deployment) { d.Float32MatmulPrecision = "medium" }, "float32_matmul_precision"},
	} {
		d := SeedDeployment()
		c.edit(&d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: %v, want %q", d, err, c.want)
		}
		if _, err := NewWorker(d); err == nil {
			t.Fatalf("NewWorker accepted %+v", d)
		}
	}
}

// An FP8 cache halves the bytes decode attention reads: long-context decode steps get cheaper
// and no step, prefill or decode, ever costs more than with a BF16 cache.
func TestFP8AttentionNeverDearer(t *testing.T) {
	fp8 := seedWorker(t)
	d := SeedDeployment()
	d.KVCacheDtype = KVBF16
	bf16, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	long := &Batch{Decodes: 256, DecodeContextTokens: 256 * 16384}
	a, b := fp8.Breakdown(long).DecodeAttnUS, bf16.Breakdown(long).DecodeAttnUS
	if a > 0.8*b {
		t.Fatalf("256 decodes at 16k context: FP8 attention %.0f µs, BF16 %.0f µs: want at least 20 %% cheaper", a, b)
	}
	for _, dt := range []string{KVFP8, KVBF16} {
		at, err := fp8.Table().AttentionFor(dt)
		if err != nil {
			t.Fatal(err)
		}
		if at.KVCacheDtype != dt {
			t.Fatalf("AttentionFor(%s) returned %s", dt, at.KVCacheDtype)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var batch Batch
		for range rapid.IntRange(0, 4).Draw(t, "chunks") {
			batch.Prefill = append(batch.Prefill, Chunk{
				NewTokens:    rapid.IntRange(1, 16384).Draw(t, "new"),
				CachedTokens: rapid.IntRange(0, 131072).Draw(t, "cached"),
			})
		}
		batch.Decodes = rapid.IntRange(0, 1024).Draw(t, "decodes")
		if batch.Decodes > 0 {
			batch.DecodeContextTokens = int64(batch.Decodes) * int64(rapid.IntRange(1, 131072).Draw(t, "ctx"))
		}
		x, y := fp8.Breakdown(&batch), bf16.Breakdown(&batch)
		if x.ContextAttnUS > y.ContextAttnUS+1e-9 || x.DecodeAttnUS > y.DecodeAttnUS+1e-9 || x.TotalUS > y.TotalUS {
			t.Fatalf("FP8 dearer than BF16: %+v vs %+v", x, y)
		}
	})
}

// VLLM_FLOAT32_MATMUL_PRECISION=high moves the FP32 router gate onto TF32 tensor cores: never
// dearer, the same where the gate is memory-bound (decode batches), several milliseconds
// cheaper on a long prefill where 80 TFLOPS of CUDA cores bound it.
func TestTF32GateNeverDearer(t *testing.T) {
	d := SeedDeployment()
	highest, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	d.Float32MatmulPrecision = PrecisionHigh
	high, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	decode := &Batch{Decodes: 8, DecodeContextTokens: 8 * 2000}
	if a, b := highest.StepTimeUS(decode), high.StepTimeUS(decode); a != b {
		t.Fatalf("8 decodes: %d µs highest, %d µs high; a memory-bound gate costs the same", a, b)
	}
	prefill := &Batch{Prefill: []Chunk{{NewTokens: 8192}}}
	if saved := highest.StepTimeUS(prefill) - high.StepTimeUS(prefill); saved < 5000 || saved > 12000 {
		t.Fatalf("8k-token prefill: TF32 saves %d µs, want the FP32 compute bound's 5–12 ms", saved)
	}
	rapid.Check(t, func(t *rapid.T) {
		b := &Batch{Decodes: rapid.IntRange(0, 512).Draw(t, "decodes")}
		b.DecodeContextTokens = int64(b.Decodes) * int64(rapid.IntRange(1, 100000).Draw(t, "ctx"))
		if n := rapid.IntRange(0, 16384).Draw(t, "prefill"); n > 0 {
			b.Prefill = []Chunk{{NewTokens: n}}
		}
		if high.StepTimeUS(b) > highest.StepTimeUS(b) {
			t.Fatalf("%+v: TF32 gate dearer than FP32", b)
		}
	})
}

// BenchmarkLoadTable is what building a worker costs in table reading: decoding the seed
// layout's embedded table (readTable, the first time in a process) against taking the
// process's shared copy (sharedTable, every later worker: the simulator digest's
// canonical replays, sweep evaluations, explorer re-runs).
func BenchmarkLoadTable(b *testing.B) {
	d := SeedDeployment()
	name := tableFileName(d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, d.Layout(), "", "", "")
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := readTable(name); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			if _, err := sharedTable(name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoadTableCold is building the seed worker's table in a fresh process: choosing
// among its layout's embedded tables (its own, nvfp4, dynosim) by their heads and decoding
// the chosen one (every table of the layout was decoded before).
func BenchmarkLoadTableCold(b *testing.B) {
	for b.Loop() {
		sharedTables.Clear()
		sharedHeads.Clear()
		if _, err := loadTable(SeedDeployment()); err != nil {
			b.Fatal(err)
		}
	}
}

// Every embedded table's head, read from its first kilobytes, says what the whole table
// says: the fields loadTable chooses by precede the grids in every file.
func TestTableHeads(t *testing.T) {
	for _, n := range EmbeddedTables() {
		h, err := readHead(n)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := readTable(n)
		if err != nil {
			t.Fatal(err)
		}
		want := tableHead{tb.Format, tb.Model, tb.Quantization, tb.GEMMQuant, tb.MoEQuant, tb.TimingReference,
			tb.HardwareSKU, tb.BackendVersion, tb.MoEBackend, tb.Layout, tb.LLM}
		if h != want {
			t.Errorf("%s: head %+v, the table says %+v", n, h, want)
		}
	}
}

// A model with shared experts overlaps them with the routed experts up to vLLM's token
// threshold (the longer of the two is paid) and runs them in series above it; -1 turns the
// second stream off. A model without shared experts has no such grid.
func TestSharedExpertsOverlap(t *testing.T) {
	if seedWorker(t).Table().SharedExperts.Values != nil {
		t.Fatal("MiniMax-M2.5 has no shared experts, yet its table prices some")
	}
	d := SeedDeployment()
	d.ModelName, d.HardwareSKU, d.TP, d.MoETP, d.MoEEP = "moonshotai/Kimi-K2.5", "h200_sxm", 8, 8, 1
	d.MaxCUDAGraphCaptureSize = 2048
	worker := func(threshold int) *Worker {
		d.SharedExpertsStreamTokens = threshold
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	def, off, wide := worker(0), worker(-1), worker(1024)
	tb := def.Table()
	if tb.SharedExperts.Values == nil {
		t.Fatal("Kimi-K2.5's table has no shared experts")
	}
	nonAttention := func(w *Worker, tokens int) float64 {
		return w.Breakdown(&Batch{Decodes: tokens, DecodeContextTokens: int64(tokens)}).NonAttentionUS
	}
	for _, c := range []struct {
		node    int
		overlap []*Worker // the workers that overlap at this step size
		series  []*Worker
	}{
		{8, []*Worker{def, wide}, []*Worker{off}},  // 4 tokens
		{32, []*Worker{def, wide}, []*Worker{off}}, // 256: vLLM's threshold is inclusive
		{40, []*Worker{wide}, []*Worker{def, off}}, // 1,024
	} {
		tokens := int(axisNode(c.node))
		shared, routed := tb.SharedExperts.Values[c.node], tb.MoE.Values[c.node]
		if shared <= 0 || routed <= 0 {
			t.Fatalf("%d tokens: shared %g µs, routed %g µs", tokens, shared, routed)
		}
		serial := nonAttention(off, tokens)
		for _, w := range c.series {
			if got := nonAttention(w, tokens); got != serial {
				t.Fatalf("%d tokens, threshold %d: %g µs, want the series price %g", tokens, w.d.SharedExpertsStreamTokens, got, serial)
			}
		}
		for _, w := range c.overlap {
			if got, want := nonAttention(w, tokens), serial-min(shared, routed); math.Abs(got-want) > 1e-9 {
				t.Fatalf("%d tokens, threshold %d: %g µs, want %g (series %g less the shorter of shared %g and routed %g)",
					tokens, w.d.SharedExpertsStreamTokens, got, want, serial, shared, routed)
			}
		}
	}
	d.SharedExpertsStreamTokens = -2
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "shared_experts_stream_tokens") {
		t.Fatalf("threshold -2: %v", err)
	}
}

// TestDecodeStepsMatchStepTime: a decode stretch priced in one call is, step by step, what
// StepTimeUS says of each of its steps — on the grid, past either edge, and under the
// dynosim reference (which prices them one by one).
func TestDecodeStepsMatchStepTime(t *testing.T) {
	seed, dyn := seedWorker(t), dynosimWorker(t)
	rapid.Check(t, func(t *rapid.T) {
		w := seed
		if rapid.Bool().Draw(t, "dynosim") {
			w = dyn
		}
		dec := rapid.IntRange(1, 5000).Draw(t, "decodes")
		ctx := rapid.Int64Range(int64(dec), int64(dec)*500000).Draw(t, "ctx")
		out := make([]int64, rapid.IntRange(0, 40).Draw(t, "steps"))
		w.DecodeStepsUS(dec, ctx, out)
		for j, got := range out {
			b := Batch{Decodes: dec, DecodeContextTokens: ctx + int64(j)*int64(dec)}
			if want := w.StepTimeUS(&b); got != want {
				t.Fatalf("step %d of %d decodes at context %d: %d µs, StepTimeUS %d µs", j, dec, b.DecodeContextTokens, got, want)
			}
		}
	})
}

// TestOperatorBreakdownAddsUp checks `model info`'s split of a step's non-attention work: the
// operators and the fused/overlap adjustment add up to the priced sum, the adjustment only
// ever saves time, experts appear only with experts, all-reduces only on several GPUs, and a
// step above the CUDA-graph capture size shows the eager all-reduce.
func TestOperatorBreakdownAddsUp(t *testing.T) {
	gptOSS := SeedDeployment()
	gptOSS.ModelName, gptOSS.HardwareSKU, gptOSS.TP, gptOSS.MoETP, gptOSS.MoEEP = "openai/gpt-oss-120b", "h200_sxm", 1, 1, 1
	kimi := SeedDeployment()
	kimi.ModelName, kimi.HardwareSKU, kimi.TP, kimi.MoETP, kimi.MoEEP = "moonshotai/Kimi-K2.5", "h200_sxm", 8, 8, 1
	dense := SeedDeployment()
	dense.ModelName, dense.HardwareSKU, dense.TP, dense.MoETP, dense.MoEEP = "Qwen/Qwen3-32B", "h100_sxm", 2, 2, 1
	fused := SeedDeployment()
	fused.FuseAllReduceRMS = true
	for _, d := range []Deployment{SeedDeployment(), fused, gptOSS, kimi, dense} {
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, tokens := range []int{1, 7, 64, 300, 512, 513, 2048, 8192, 20000} {
			br := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: tokens}}})
			o := br.Operators
			sum := o.ProjectionsUS + o.RouterGateUS + o.ExpertsUS + o.SharedExpertsUS + o.AllReduceUS + o.ElementwiseUS + o.AdjustmentUS
			if math.Abs(sum-br.NonAttentionUS) > 1e-6*br.NonAttentionUS {
				t.Fatalf("%s %s, %d tokens: operators add up to %.3f µs, non-attention %.3f", d.ModelName, d.Layout(), tokens, sum, br.NonAttentionUS)
			}
			if o.AdjustmentUS > 1e-9 {
				t.Fatalf("%s %s, %d tokens: fusion/overlap adds %.3f µs", d.ModelName, d.Layout(), tokens, o.AdjustmentUS)
			}
			moe := w.Table().LLM.MoE()
			if (o.ExpertsUS > 0) != moe || (o.RouterGateUS > 0) != moe || (o.AllReduceUS > 0) != (d.TP > 1) || o.ProjectionsUS <= 0 || o.ElementwiseUS <= 0 {
				t.Fatalf("%s %s, %d tokens: %+v", d.ModelName, d.Layout(), tokens, o)
			}
			if (o.SharedExpertsUS > 0) != (w.Table().LLM.SharedInter > 0) {
				t.Fatalf("%s %s, %d tokens: shared experts %.1f µs", d.ModelName, d.Layout(), tokens, o.SharedExpertsUS)
			}
		}
		if d.TP > 1 {
			graphs := d.CUDAGraphMaxTokens()
			in := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: graphs}}}).Operators.AllReduceUS
			above := w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: graphs + 1}}}).Operators.AllReduceUS
			if above <= in {
				t.Fatalf("%s %s: all-reduce %.1f µs at %d tokens, %.1f just above the capture size", d.ModelName, d.Layout(), in, graphs, above)
			}
		}
	}
}

// Workers builds a deployment's timing model once, whoever asks and however often, and
// passes a build error through without keeping it.
func TestWorkersBuildEachDeploymentOnce(t *testing.T) {
	var ws Workers
	d := SeedDeployment()
	var wg sync.WaitGroup
	got := make([]*Worker, 8)
	for i := range got {
		wg.Go(func() {
			w, err := ws.Get(d)
			if err != nil {
				t.Error(err)
			}
			got[i] = w
		})
	}
	wg.Wait()
	for _, w := range got {
		if w == nil || w != got[0] {
			t.Fatalf("one deployment, several timing models: %p and %p", got[0], w)
		}
	}
	bad := d
	bad.ModelName = "no/such-model"
	if _, err := ws.Get(bad); err == nil {
		t.Fatal("an unknown model built a timing model")
	}
	if len(ws.byDeployment) != 1 {
		t.Fatalf("%d deployments kept, want the one that built", len(ws.byDeployment))
	}
}
