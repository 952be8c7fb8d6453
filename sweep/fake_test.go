package sweep

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/router"
)

// fakeSim is a cheap synthetic Simulator: mean e2e latency is a smooth function of the router
// knobs with a unique kv_router optimum at credit 1, scale 4, T 0, plus seed noise for
// temperature > 0; round robin is much worse. It counts the runs it is asked for.
type fakeSim struct {
	f *config.File

	mu   sync.Mutex
	runs []runKey
	// failAfter, when > 0, makes every run after that many fail (an interrupted sweep).
	failAfter int
}

type runKey struct {
	rc       router.Config
	seed     uint64
	requests int
}

var errInterrupted = errors.New("interrupted")

func newFakeSim(f *config.File) *fakeSim { return &fakeSim{f: f} }

func (s *fakeSim) CheckRequests(...int) error { return nil }

func (s *fakeSim) EngineConfig(p config.Point) (engine.Config, error) {
	at := func(key string) config.Value {
		v, err := s.f.At(p, key)
		if err != nil {
			panic(err)
		}
		return v
	}
	mode, err := router.ParseMode(at(config.KeyRouterMode).Text)
	if err != nil {
		return engine.Config{}, err
	}
	return engine.Config{
		Workers: 8,
		Router: router.Config{Mode: mode, OverlapScoreCredit: at(config.KeyOverlapScoreCredit).Num,
			PrefillLoadScale: at(config.KeyPrefillLoadScale).Num, Temperature: at(config.KeyRouterTemperature).Num},
		ReplayConcurrency: s.f.Workload.ReplayConcurrency,
		Seed:              s.f.Workload.Seed,
	}, nil
}

// fakeE2E is the synthetic objective.
func fakeE2E(rc router.Config, seed uint64) float64 {
	switch rc.Mode {
	case router.ModeRoundRobin:
		return 2000
	case router.ModeKV:
	default:
		return 2500
	}
	x := math.Log2(rc.PrefillLoadScale+0.125) - 2
	e := 1000 + 40*x*x + 300*(1-rc.OverlapScoreCredit) + 120*rc.Temperature
	if rc.Temperature > 0 {
		r := rand.New(rand.NewPCG(seed, 99))
		e += 20 * rc.Temperature * r.NormFloat64()
	}
	return e
}

func (s *fakeSim) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.failAfter > 0 && len(s.runs) >= s.failAfter {
		s.mu.Unlock()
		return nil, errInterrupted
	}
	s.runs = append(s.runs, runKey{cfg.Router, cfg.Seed, requests})
	s.mu.Unlock()
	n := requests
	if n == 0 {
		n = 400
	}
	e2e := fakeE2E(cfg.Router, cfg.Seed)
	rep := &engine.Report{Summary: fakeSummary(n, e2e, cfg.Router)}
	if cfg.RecordRequests {
		r := rand.New(rand.NewPCG(7, 7))
		for i := range n {
			rep.Requests = append(rep.Requests, fakeRecord(i, e2e+50*r.NormFloat64()))
		}
	}
	return rep, nil
}

func (s *fakeSim) runCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

// fakeSummary fills the summary fields the sweep reads.
func fakeSummary(n int, e2e float64, rc router.Config) engine.Summary {
	reuse := 0.2
	if rc.Mode == router.ModeKV {
		reuse = 0.3 + 0.3*rc.OverlapScoreCredit
	}
	return engine.Summary{
		RequestsCompleted: n, MeanE2EMS: e2e, MeanTTFTMS: e2e / 4, MeanTPOTMS: 20,
		OutputThroughput: 1e6 / e2e, PrefixCacheReusedRatio: reuse,
	}
}

func fakeRecord(i int, e2e float64) engine.RequestRecord {
	return engine.RequestRecord{ID: i, E2EMS: e2e}
}
