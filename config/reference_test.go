package config

import (
	"math"
	"strconv"
	"testing"

	"github.com/routerlab/routerlab/engine"
)

// The published router experiment came from Dynamo's replay with AIConfigurator pricing. Under
// the dynosim reference the seed's default_kv and the published winner (credit 1.0, scale 32,
// T 0) on the full toolagent-like trace land within 15 % of the published TTFT (142 ms and
// 142 × 0.86); TPOT of the winner within 15 % of 12.1 ms, while the default's stays below the
// published 16.5 ms by more (docs/seed-experiment.md: the trace's short turns decide the TPOT change).
func TestDynosimSeedAgainstPublished(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the full 23,608-request trace twice; skipped in -short")
	}
	run := func(set ...string) (ttft, tpot float64) {
		sum := replayDefaultPoint(t, Default(), append([]string{"timing_reference=dynosim"}, set...)...)
		return sum.MeanTTFTMS, sum.MeanTPOTMS
	}
	within := func(got, want float64) bool { return math.Abs(got-want) <= 0.15*want }
	dTTFT, dTPOT := run()
	bTTFT, bTPOT := run("prefill_load_scale=32", "overlap_score_credit=1.0")
	t.Logf("default_kv TTFT %.1f TPOT %.2f; winner TTFT %.1f TPOT %.2f", dTTFT, dTPOT, bTTFT, bTPOT)
	if !within(dTTFT, 142) || !within(bTTFT, 142*0.86) || !within(bTPOT, 12.1) {
		t.Fatalf("default_kv TTFT %.1f ms (published 142), winner TTFT %.1f (122.1), TPOT %.2f (12.1): want within 15 %%", dTTFT, bTTFT, bTPOT)
	}
	if !(dTPOT < 16.5*0.85 && bTPOT < dTPOT) {
		t.Fatalf("default_kv TPOT %.2f ms, winner %.2f: want the default below 85 %% of the published 16.5 and the winner lower still", dTPOT, bTPOT)
	}
}

// replayDefaultPoint replays f with the --set overrides at Dynamo's default point where the
// lists allow, as `routerlab replay` does.
func replayDefaultPoint(t *testing.T, f *File, set ...string) engine.Summary {
	t.Helper()
	setAll(t, f, set...)
	_, sum := runPoint(t, f, f.DefaultPoint(), 0)
	return sum
}

// The published stack's own router experiment (Dynamo's DynoSim blog draft, scripts/kv_router_exp:
// the real toolagent trace, 8 MiniMax-M2.5 TP 4 workers, max_num_batched_tokens 2048) replayed
// under dynosim on the toolagent-like trace. Round-robin, where the trace's prefix structure
// cannot matter, lands within 10 % of the published TPOT with a decode step 0–12 % faster (the
// 0.19 tables against the run's 0.14 ones), and the KV router's TTFT gain over it within 15 %
// of the published gain; but the KV router raises TPOT over round-robin by less
// than 10 % here against 38 % and 17 % there: the TPOT the router costs is the real trace's,
// not the pricing's (docs/seed-experiment.md, "Where the TPOT gap comes from").
func TestDynosimAgainstPublishedRouterExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the full 23,608-request trace four times; skipped in -short")
	}
	published := []struct {
		c                              int
		rrTTFT, rrTPOT, kvTTFT, kvTPOT float64
		rrPerUser                      float64 // mean output tok/s per user
	}{
		{64, 496.3, 17.64, 239.1, 24.36, 79.96},
		{256, 1777.3, 43.25, 477.1, 50.68, 42.10},
	}
	for _, p := range published {
		run := func(mode string) engine.Summary {
			f, err := Load("../examples/dynosim-kv-router-exp.yaml")
			if err != nil {
				t.Fatal(err)
			}
			return replayDefaultPoint(t, f, "router_mode="+mode, "workload.replay_concurrency="+strconv.Itoa(p.c))
		}
		rr, kv := run("round_robin"), run("kv_router")
		t.Logf("c %d: round_robin TTFT %.1f TPOT %.2f; kv_router TTFT %.1f TPOT %.2f", p.c,
			rr.MeanTTFTMS, rr.MeanTPOTMS, kv.MeanTTFTMS, kv.MeanTPOTMS)
		if math.Abs(rr.MeanTPOTMS/p.rrTPOT-1) > 0.10 {
			t.Errorf("c %d: round_robin TPOT %.2f ms, published %.2f: want within 10 %%", p.c, rr.MeanTPOTMS, p.rrTPOT)
		}
		// The 0.19 tables price the decode step below the run's 0.14 ones: the typical step
		// (the per-user rate) is faster here, by less than 12 %.
		if r := rr.MeanOutputTokPerUser / p.rrPerUser; r < 1 || r > 1.12 {
			t.Errorf("c %d: round_robin %.1f tok/s per user, published %.1f: want 0–12 %% faster", p.c, rr.MeanOutputTokPerUser, p.rrPerUser)
		}
		gain, pubGain := kv.MeanTTFTMS/rr.MeanTTFTMS, p.kvTTFT/p.rrTTFT
		if math.Abs(gain/pubGain-1) > 0.15 {
			t.Errorf("c %d: kv_router TTFT %.3f × round_robin's, published %.3f: want within 15 %%", p.c, gain, pubGain)
		}
		if rise, pubRise := kv.MeanTPOTMS/rr.MeanTPOTMS, p.kvTPOT/p.rrTPOT; rise > 1.10 || pubRise < 1.15 {
			t.Errorf("c %d: kv_router TPOT %.3f × round_robin's (published %.3f): docs/seed-experiment.md wants under 1.10 here", p.c, rise, pubRise)
		}
	}
}
