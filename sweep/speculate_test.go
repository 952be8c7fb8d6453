package sweep

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/router"
)

// TestSpeculationStartsDuringSearch: on two slots the search's round ends start round_robin's
// validation replay (default_kv's and the best's are left for the validation phase, one per
// slot), and it is the replay Validate will ask for.
func TestSpeculationStartsDuringSearch(t *testing.T) {
	f := seedFile(t, "sweep.seed=5")
	sim := newFakeSim(f)
	g := newSpeculator(context.Background(), sim, 2)
	s, err := RunSearch(context.Background(), f, sim, Options{spec: g})
	g.stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Evaluations) < 2*f.Sweep.CandidatesPerRound {
		t.Fatalf("%d evaluations: want at least two rounds for the test to mean something", len(s.Evaluations))
	}
	_, _, jobs, err := validationPlan(s, s.BestEvaluation(), sim)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.runs) != 1 || g.runs[0].job != jobs[0] || jobs[0].cfg.Router.Mode != router.ModeRoundRobin {
		t.Fatalf("speculated %d replays during the search, want exactly round_robin's validation replay", len(g.runs))
	}
}

// TestSpeculativeSweepIsTheSerialOne: a sweep that validates speculatively writes exactly what
// a sweep on one slot writes, and simulates each distinct validation replay once.
func TestSpeculativeSweepIsTheSerialOne(t *testing.T) {
	var outs []map[string]string
	var sims []*fakeSim
	for _, slots := range []int{1, 2} {
		f := seedFile(t, "sweep.seed=5", "sweep.parallel_evals=1")
		sim := newFakeSim(f)
		opt := Options{Out: t.TempDir()}
		if slots > 1 {
			opt.spec = newSpeculator(context.Background(), sim, slots)
		}
		if _, err := Run(context.Background(), f, sim, opt); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, readOut(t, opt.Out))
		sims = append(sims, sim)
	}
	for name, a := range outs[0] {
		if b := outs[1][name]; a != b {
			t.Errorf("%s differs between the serial and the speculative sweep:\n%s\n---\n%s", name, a, b)
		}
	}
	validations := func(s *fakeSim) map[runKey]int {
		n := map[runKey]int{}
		for _, r := range s.runs {
			if r.requests == 0 { // the validation requests: the whole trace
				n[r]++
			}
		}
		return n
	}
	serial, spec := validations(sims[0]), validations(sims[1])
	if len(serial) < 2 {
		t.Fatalf("serial sweep ran %d distinct validation replays, want round_robin, default_kv and best", len(serial))
	}
	for k, c := range spec {
		if c != 1 || serial[k] == 0 {
			t.Errorf("speculative sweep ran %+v %d times (serial sweep: %d)", k, c, serial[k])
		}
	}
	if len(spec) != len(serial) {
		t.Errorf("speculative sweep ran %d distinct validation replays, serial %d", len(spec), len(serial))
	}
}

// TestBootstrapMeansSplitIsExact: the mean-e2e intervals are the same however many parts
// their resamples are split into (each part starts where the stream stands, advancePCG).
func TestBootstrapMeansSplitIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	d := make([][]float64, 3)
	for k := range d {
		for range 1001 { // odd: a resample's last draw gives one index
			d[k] = append(d[k], 1000+100*r.NormFloat64())
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	want := bootstrapMeans(d, 9)
	for _, procs := range []int{2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		if got := bootstrapMeans(d, 9); !slices.Equal(got, want) {
			t.Errorf("GOMAXPROCS %d: intervals %+v, one part %+v", procs, got, want)
		}
	}
	if want[0].LowMS >= want[0].MeanMS || want[0].HighMS <= want[0].MeanMS {
		t.Errorf("interval %+v does not bracket its mean", want[0])
	}
}

// TestResampleMeansFusedIsExact: three series summed in one pass give bit-identical means
// to each series resampled alone from the same stream (odd and even request counts).
func TestResampleMeansFusedIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 2, 999, 1000} {
		d := make([][]float64, 3)
		for k := range d {
			for range n {
				d[k] = append(d[k], 1000+100*r.NormFloat64())
			}
		}
		const resamples = 50
		fused := [][]float64{make([]float64, resamples), make([]float64, resamples), make([]float64, resamples)}
		resampleMeans(d, rand.NewPCG(7, bootstrapStream), fused, 0, resamples)
		for k := range d {
			alone := [][]float64{make([]float64, resamples)}
			resampleMeans(d[k:k+1], rand.NewPCG(7, bootstrapStream), alone, 0, resamples)
			if !slices.Equal(fused[k], alone[0]) {
				t.Fatalf("n %d series %d: fused means %v, alone %v", n, k, fused[k][:3], alone[0][:3])
			}
		}
	}
}

// TestAdvancePCG: advancing the generator k draws lands where k draws do.
func TestAdvancePCG(t *testing.T) {
	for _, k := range []uint64{0, 1, 2, 3, 7, 1000, 123457} {
		a, b := rand.NewPCG(11, bootstrapStream), rand.NewPCG(11, bootstrapStream)
		advancePCG(a, k)
		for range k {
			b.Uint64()
		}
		for i := range 3 {
			if x, y := a.Uint64(), b.Uint64(); x != y {
				t.Fatalf("k %d draw %d: advanced %x, drawn %x", k, i, x, y)
			}
		}
	}
}

// TestPairedBootstrapSplitIsExact: the paired interval is the same however many parts its
// resamples are split into.
func TestPairedBootstrapSplitIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	a, b := make([]float64, 1001), make([]float64, 1001)
	for i := range a {
		a[i], b[i] = 1000+100*r.NormFloat64(), 1000+100*r.NormFloat64()
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	want, err := PairedBootstrap(a, b, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		if got, _ := PairedBootstrap(a, b, 9); *got != *want {
			t.Errorf("GOMAXPROCS %d: %+v, one part %+v", procs, *got, *want)
		}
	}
}

// startSim is a Simulator whose runs announce their start and return at once.
type startSim struct {
	Simulator
	started chan int
}

func (s startSim) Run(_ context.Context, cfg engine.Config, _ int) (*engine.Report, error) {
	s.started <- int(cfg.Seed)
	return &engine.Report{}, nil
}

// TestRunAllBookkeepingDoesNotHoldSimulations: a finished job's bookkeeping (done: the
// ledger line, progress.json, the progress receiver) runs beside the simulations, so a slow
// one does not keep the next job from starting, even with one simulation at a time.
func TestRunAllBookkeepingDoesNotHoldSimulations(t *testing.T) {
	sim := startSim{started: make(chan int, 3)}
	jobs := []runJob{{cfg: engine.Config{Seed: 0}}, {cfg: engine.Config{Seed: 1}}, {cfg: engine.Config{Seed: 2}}}
	var order []int
	err := runAll(context.Background(), sim, 1, jobs, nil, func(j int, _ *engine.Report, _ time.Duration) error {
		order = append(order, j)
		if j > 0 {
			return nil
		}
		// Job 0's bookkeeping waits for job 1's simulation to start.
		timeout := time.After(time.Minute)
		for {
			select {
			case s := <-sim.started:
				if s == 1 {
					return nil
				}
			case <-timeout:
				return errors.New("job 1 did not start while job 0's bookkeeping ran")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{0, 1, 2}) {
		t.Errorf("bookkeeping order %v, want each job once in completion order 0, 1, 2", order)
	}
}

// TestRunAllReturnsTheBookkeepingError: an error of a finished job's bookkeeping (a ledger
// line the disk refused), returned on the bookkeeping's own goroutine, is runAll's error.
func TestRunAllReturnsTheBookkeepingError(t *testing.T) {
	sim := startSim{started: make(chan int, 8)}
	jobs := make([]runJob, 8)
	ioErr := errors.New("ledger.jsonl: no space left on device")
	err := runAll(context.Background(), sim, 2, jobs, nil, func(j int, _ *engine.Report, _ time.Duration) error {
		if j == 0 {
			return ioErr
		}
		return nil
	})
	if !errors.Is(err, ioErr) {
		t.Fatalf("runAll: %v, want the bookkeeping's error", err)
	}
}
