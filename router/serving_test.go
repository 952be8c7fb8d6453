package router

import (
	"testing"

	"pgregory.net/rapid"
)

// A router whose serving set is restricted never routes outside it, in every mode that can
// be restricted, with or without admission's load config.
func TestServingRestrictsRoutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.Mode = rapid.SampledFrom([]Mode{ModeKV, ModeRoundRobin, ModeRandom, ModeLeastLoaded, ModePowerOfTwoChoices}).Draw(t, "mode")
		cfg.Temperature = rapid.SampledFrom([]float64{0, 0.5}).Draw(t, "temp")
		if !RestrictableMode(cfg) {
			t.Fatalf("%s not restrictable", cfg.Mode)
		}
		n := rapid.IntRange(2, 70).Draw(t, "workers")
		r, err := New(cfg, n, rapid.Uint64().Draw(t, "seed"))
		if err != nil {
			t.Fatal(err)
		}
		on := make([]bool, n)
		for w := range on {
			on[w] = true // every worker serves until told otherwise
		}
		for i := range 40 {
			w := rapid.IntRange(0, n-1).Draw(t, "toggle")
			on[w] = !on[w]
			r.SetServing(w, on[w])
			if !r.Serving(w) == on[w] {
				t.Fatalf("Serving(%d) = %v after SetServing(%v)", w, r.Serving(w), on[w])
			}
			any := false
			for _, o := range on {
				any = any || o
			}
			if !any {
				continue
			}
			got := r.Route(&Request{ID: int64(i), InputLength: 100, BlockHashes: []uint64{uint64(i % 3), 7}})
			if !on[got] {
				t.Fatalf("routed to %d, which does not serve (%v)", got, on)
			}
		}
	})
}

// power_of_two_choices restricted to a serving set that holds every worker draws as the
// unrestricted policy does: the same workers for the same seed.
func TestPowerOfTwoServingAllMatchesUnrestricted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.Mode = ModePowerOfTwoChoices
		n, seed := rapid.IntRange(1, 40).Draw(t, "workers"), rapid.Uint64().Draw(t, "seed")
		a, err := New(cfg, n, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(cfg, n, seed)
		b.SetServing(0, false)
		b.SetServing(0, true) // a serving set, all serving
		for i := range 60 {
			req := &Request{ID: int64(i), InputLength: 64}
			if wa, wb := a.Route(req), b.Route(req); wa != wb {
				t.Fatalf("request %d: unrestricted %d, all serving %d", i, wa, wb)
			}
			if i%3 == 0 {
				a.Finished(int64(i))
				b.Finished(int64(i))
			}
		}
	})
}
