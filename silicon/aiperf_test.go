package silicon

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/trace"
)

// aiperf's draws: every request carries one of the pool's prompts whole, the pool is
// entries × concurrency distinct prompts, and the same seed draws the same requests.
func TestDatasetDraws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := rapid.IntRange(1, 64).Draw(t, "concurrency")
		b := Benchmark{RangeRatio: 1, DatasetEntriesPerSlot: rapid.IntRange(1, 12).Draw(t, "entries")}
		r := Row{Concurrency: c, ISL: rapid.IntRange(1, 300).Draw(t, "isl"), OSL: rapid.IntRange(1, 50).Draw(t, "osl")}
		warm, timed := rapid.IntRange(0, 3*c).Draw(t, "warm"), rapid.IntRange(1, 10*c).Draw(t, "timed")
		seed := rapid.Uint64().Draw(t, "seed")
		pool := distinctPrompts(c*b.DatasetEntriesPerSlot, r, b, 16, seed)
		w, m := datasetDraws(warm, timed, r, b, 16, seed)
		if len(w) != warm || len(m) != timed {
			t.Fatalf("%d warm-up and %d timed requests, want %d and %d", len(w), len(m), warm, timed)
		}
		for _, q := range slices.Concat(w, m) {
			if q.InputLength != r.ISL || q.OutputLength != r.OSL {
				t.Fatalf("lengths %d/%d, want exactly %d/%d", q.InputLength, q.OutputLength, r.ISL, r.OSL)
			}
			if !slices.ContainsFunc(pool, func(p trace.Request) bool { return slices.Equal(p.HashIDs, q.HashIDs) }) {
				t.Fatalf("request with blocks %v is none of the pool's prompts", q.HashIDs[:1])
			}
		}
		w2, m2 := datasetDraws(warm, timed, r, b, 16, seed)
		for i := range m {
			if !slices.Equal(m[i].HashIDs, m2[i].HashIDs) || (i < len(w) && !slices.Equal(w[i].HashIDs, w2[i].HashIDs)) {
				t.Fatalf("draw %d differs between two draws of one seed", i)
			}
		}
	})
}

// With replacement: of 10c timed draws from 12c prompts, a share 1 − 1.2 × (1 − e^(−10/12))
// ≈ 32 % repeat a prompt drawn before in the phase (the expected number of distinct prompts
// in k uniform draws from N is N × (1 − e^(−k/N))).
func TestDatasetDrawsRepeatAsWithReplacement(t *testing.T) {
	const c = 256
	r := Row{Concurrency: c, ISL: 32, OSL: 8}
	_, m := datasetDraws(2*c, 10*c, r, Benchmark{RangeRatio: 1, DatasetEntriesPerSlot: 12}, 16, 7)
	seen := map[int64]bool{}
	repeats := 0
	for _, q := range m {
		if seen[q.HashIDs[0]] {
			repeats++
		}
		seen[q.HashIDs[0]] = true
	}
	want := 1 - 1.2*(1-math.Exp(-10.0/12))
	if got := float64(repeats) / float64(len(m)); math.Abs(got-want) > 0.02 {
		t.Fatalf("%.3f of the timed requests repeat a prompt, want %.3f", got, want)
	}
}

// A prompt drawn again is served from the prefix cache: on a worker that caches prefixes the
// draws of a small pool lower the replay's TTFT below distinct prompts'.
func TestDatasetDrawsHitThePrefixCache(t *testing.T) {
	rows, err := Parse(strings.NewReader(header+",4,2026-04-03,0.19.0,fp8,fp8,fp8,1024,16,4,4,1,4,1,30.0,8.0\n"), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	ttft := func(entries int) float64 {
		rep, err := Validate(context.Background(), rows, Options{Override: func(b *Benchmark) {
			b.RequestsPerSlot, b.PrefixCaching, b.DatasetEntriesPerSlot = 6, true, entries
		}})
		if err != nil || rep.Validated != 1 {
			t.Fatalf("validate: %v (%d validated)", err, rep.Validated)
		}
		return rep.Rows[0].PredTTFTMS
	}
	distinct, drawn := ttft(0), ttft(1)
	if !(drawn < 0.8*distinct) {
		t.Fatalf("TTFT %g ms with 4 prompts drawn 24 times, %g ms with 24 distinct ones: want the cached repeats faster", drawn, distinct)
	}
}

func TestDatasetEntriesChecked(t *testing.T) {
	for _, n := range []int{-1, MaxRequestsPerSlot + 1} {
		b := InferenceX()
		b.DatasetEntriesPerSlot = n
		if err := b.check(); err == nil || !strings.Contains(err.Error(), "dataset entries per slot") {
			t.Fatalf("%d entries per slot: %v", n, err)
		}
	}
	b := InferenceX()
	b.DatasetEntriesPerSlot = 12
	if err := b.check(); err != nil || !strings.Contains(b.String(), "with replacement from 12 × concurrency") {
		t.Fatalf("12 entries per slot: %v, %s", err, b.String())
	}
}
