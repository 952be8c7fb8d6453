package silicon

import (
	"context"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A client whose tokenizer disagrees with the server's sends prompts the server tokenises to
// ServerTokensPerClientToken times the length the client drew: every prompt is that multiple
// (rounded) of the one drawn without it from the same seed, its blocks cover it and no two
// prompts share a block.
func TestServerTokensScalePrompts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 64).Draw(t, "prompts")
		r := Row{ISL: rapid.IntRange(1, 8192).Draw(t, "isl"), OSL: rapid.IntRange(1, 1024).Draw(t, "osl")}
		f := rapid.Float64Range(1, 8).Draw(t, "server tokens per client token")
		bs := rapid.SampledFrom([]int{1, 16, 32}).Draw(t, "block size")
		seed := rapid.Uint64().Draw(t, "seed")
		b := Benchmark{RangeRatio: InferenceXRangeRatio}
		drawn := distinctPrompts(n, r, b, bs, seed)
		b.ServerTokensPerClientToken = f
		sent := distinctPrompts(n, r, b, bs, seed)
		seen := map[int64]bool{}
		for i, q := range sent {
			if want := int(math.Round(float64(drawn[i].InputLength) * f)); q.InputLength != want || q.OutputLength != drawn[i].OutputLength {
				t.Fatalf("prompt %d: %d in, %d out; want %d (%d × %g) and %d", i, q.InputLength, q.OutputLength, want, drawn[i].InputLength, f, drawn[i].OutputLength)
			}
			if len(q.HashIDs) != (q.InputLength+bs-1)/bs {
				t.Fatalf("prompt %d of %d tokens in %d blocks of %d", i, q.InputLength, len(q.HashIDs), bs)
			}
			for _, id := range q.HashIDs {
				if seen[id] {
					t.Fatalf("block %d shared", id)
				}
				seen[id] = true
			}
		}
	})
}

// Below one server token per client token, or unbounded, is refused by name; a valid value is
// said in the benchmark's description.
func TestServerTokensChecked(t *testing.T) {
	for _, f := range []float64{-1, 0.5, math.NaN(), math.Inf(1)} {
		b := InferenceX()
		b.ServerTokensPerClientToken = f
		if err := b.check(); err == nil || !strings.Contains(err.Error(), "server_tokens_per_client_token") {
			t.Fatalf("%v server tokens per client token: %v", f, err)
		}
	}
	b := InferenceX()
	b.ServerTokensPerClientToken = 5
	if err := b.check(); err != nil || !strings.Contains(b.String(), "each prompt 5 × the client's token count on the server") {
		t.Fatalf("5 server tokens per client token: %v, %s", err, b.String())
	}
}

// The replay prices the server's prompts: five times the tokens take longer to prefill, and
// the TTFT rises. Beyond the context length they would be refused (engine.Config.Admit).
func TestServerTokensRaiseTTFT(t *testing.T) {
	rows, err := Parse(strings.NewReader(header+",4,2026-04-03,0.19.0,fp8,fp8,fp8,1024,64,4,4,1,4,1,30.0,8.0\n"), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	ttft := func(f float64) float64 {
		rep, err := Validate(context.Background(), rows, Options{Override: func(b *Benchmark) {
			// The server admits the longer prompts: its context is not the client's lengths.
			b.RequestsPerSlot, b.ServerTokensPerClientToken, b.MaxModelLen = 2, f, 16384
		}})
		if err != nil || rep.Validated != 1 {
			t.Fatalf("validate: %v (%d validated, %+v)", err, rep.Validated, rep.Rows)
		}
		return rep.Rows[0].PredTTFTMS
	}
	if same, five := ttft(0), ttft(5); !(five > 2*same) {
		t.Fatalf("TTFT %g ms with the client's prompts, %g ms with five times the tokens: want the longer prefill", same, five)
	}
}
