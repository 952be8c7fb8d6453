package model

import (
	"math"
	"strings"
	"testing"
)

// vLLM's default capture size is min(2 × max_num_seqs, 512), never above the token budget.
func TestCUDAGraphMaxTokens(t *testing.T) {
	for _, c := range []struct{ seqs, budget, set, want int }{
		{1024, 16384, 0, 512}, {100, 16384, 0, 200}, {1024, 256, 0, 256}, {1024, 16384, 64, 64}, {1024, 2048, 4096, 2048},
	} {
		d := SeedDeployment()
		d.MaxNumSeqs, d.MaxNumBatchedTokens, d.MaxCUDAGraphCaptureSize = c.seqs, c.budget, c.set
		if got := d.CUDAGraphMaxTokens(); got != c.want {
			t.Fatalf("max_num_seqs %d, budget %d, capture size %d: %d tokens, want %d", c.seqs, c.budget, c.set, got, c.want)
		}
	}
	d := SeedDeployment()
	d.MaxCUDAGraphCaptureSize = -1
	if err := d.Validate(); err == nil {
		t.Fatal("a negative capture size validated")
	}
}

// A step above the capture size pays the eager all-reduces, exactly their difference from the
// graph ones; a step within it, or any step with the capture size raised past it, does not.
// Under dynosim every step is priced as before.
func TestEagerStepsPayEagerAllReduces(t *testing.T) {
	price := func(capture int, dynosim bool, tokens int) (float64, *Table) {
		d := SeedDeployment()
		d.MaxCUDAGraphCaptureSize = capture
		if dynosim {
			d.TimingReference = ReferenceDynosim
		}
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w.Breakdown(&Batch{Prefill: []Chunk{{NewTokens: tokens}}}).NonAttentionUS, w.Table()
	}
	for _, tokens := range []int{1, 512, 513, 2048, 8192, 16384} {
		eager, tb := price(0, false, tokens)
		graph, _ := price(1<<20, false, tokens)
		want := 0.0
		if tokens > 512 { // the seed runs max_num_seqs 512: vLLM's default capture size is 512
			ce, cg := newCurve(tb.CollectiveEager.Values, 1), newCurve(tb.Collective.Values, 1)
			want = ce.at(float64(tokens)) - cg.at(float64(tokens))
			if want <= 0 {
				t.Fatalf("%d tokens: eager all-reduces %g µs cheaper than graph ones", tokens, -want)
			}
		}
		if math.Abs(eager-graph-want) > 1e-6 {
			t.Fatalf("%d tokens: eager step %g µs, graph step %g µs: difference %g, want %g", tokens, eager, graph, eager-graph, want)
		}
		a, _ := price(0, true, tokens)
		b, _ := price(1<<20, true, tokens)
		if a != b {
			t.Fatalf("dynosim, %d tokens: %g µs with vLLM's capture size, %g without", tokens, a, b)
		}
	}
}

// Under FULL_DECODE_ONLY every step holding a prefill chunk pays the eager all-reduces, even
// a one-token chunk; a decode-only step within the capture size replays its graph; PIECEWISE
// prices as vLLM's default; an unknown mode is refused by name.
func TestFullDecodeOnlyRunsPrefillStepsEagerly(t *testing.T) {
	worker := func(mode string) *Worker {
		d := SeedDeployment()
		d.CUDAGraphMode = mode
		w, err := NewWorker(d)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	def, piece, fdo := worker(""), worker(CUDAGraphPiecewise), worker(CUDAGraphFullDecodeOnly)
	tb := def.Table()
	ce, cg := newCurve(tb.CollectiveEager.Values, 1), newCurve(tb.Collective.Values, 1)
	for _, tokens := range []int{1, 64, 400} { // the seed's steps of up to 512 tokens replay graphs by default
		mixed := &Batch{Prefill: []Chunk{{NewTokens: tokens}}, Decodes: 3, DecodeContextTokens: 3000}
		want := ce.at(float64(tokens+3)) - cg.at(float64(tokens+3))
		if want <= 0 {
			t.Fatalf("%d tokens: eager all-reduces %g µs cheaper than graph ones", tokens, -want)
		}
		got := fdo.Breakdown(mixed).NonAttentionUS - def.Breakdown(mixed).NonAttentionUS
		if math.Abs(got-want) > 1e-6 {
			t.Fatalf("mixed step of %d tokens: FULL_DECODE_ONLY adds %g µs, want the eager all-reduces' %g", tokens+3, got, want)
		}
		if p, d := piece.StepTimeUS(mixed), def.StepTimeUS(mixed); p != d {
			t.Fatalf("PIECEWISE prices a mixed step at %d µs, vLLM's default at %d", p, d)
		}
		decode := &Batch{Decodes: tokens, DecodeContextTokens: int64(tokens) * 3000}
		if f, d := fdo.StepTimeUS(decode), def.StepTimeUS(decode); f != d {
			t.Fatalf("decode step of %d: FULL_DECODE_ONLY %d µs, default %d", tokens, f, d)
		}
	}
	d := SeedDeployment()
	d.CUDAGraphMode = "FULL"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "cudagraph_mode") || !strings.Contains(err.Error(), CUDAGraphFullDecodeOnly) {
		t.Fatalf("cudagraph_mode FULL: %v", err)
	}
}
