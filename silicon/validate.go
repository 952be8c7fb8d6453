package silicon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Options shape the closed-loop benchmark replayed for every row.
type Options struct {
	// Base supplies the model, GPU and vLLM engine arguments; each row sets the backend
	// version and parallel layout. Zero value: BenchmarkDeployment().
	Base model.Deployment
	// RequestsPerSlot is how many requests each of the row's concurrency slots sends in
	// turn (0: 10). Benchmarks of this kind send about ten times the concurrency, so the
	// first wave's synchronised prefills weigh in as they do on silicon.
	RequestsPerSlot int
	// RangeRatio is the benchmark client's --random-range-ratio: each request's input and
	// output lengths are drawn uniformly from the integers [⌊len × ratio⌋, len] for the row's
	// ISL and OSL, in (0, 1]; 1 (or 0, the zero value): every request is exactly ISL/OSL.
	RangeRatio float64
	Seed       uint64
}

// InferenceXRangeRatio is the --random-range-ratio of the published runs the silicon rows
// come from (SemiAnalysis InferenceX, benchmarks/benchmark_lib.sh): its benchmark_serving.py
// draws every prompt's input and output length uniformly from [⌊ISL × 0.8⌋, ISL] and
// [⌊OSL × 0.8⌋, OSL], sends 10 × concurrency prompts with --max-concurrency,
// --request-rate inf and --ignore-eos, and averages TTFT and per-request TPOT over all of
// them; the rows' isl/osl columns are the nominal maxima.
const InferenceXRangeRatio = 0.8

// BenchmarkDeployment is the worker the silicon rows were measured on: the seed's model and
// GPU with vLLM's own serving defaults for GPUs of 70 GiB and more (max_num_batched_tokens
// 8192, max_num_seqs 1024), since the benchmark ran `vllm serve` without overriding them.
func BenchmarkDeployment() model.Deployment {
	d := model.SeedDeployment()
	d.MaxNumBatchedTokens = 8192
	d.MaxNumSeqs = 1024
	return d
}

// Result is one row with its prediction; Skipped rows carry the reason and no prediction.
type Result struct {
	Row
	PredTTFTMS   float64 `json:"pred_ttft_ms"`
	PredTPOTMS   float64 `json:"pred_tpot_ms"`
	TTFTErrPct   float64 `json:"ttft_err_pct"` // (pred − silicon) / silicon × 100
	TPOTErrPct   float64 `json:"tpot_err_pct"`
	Skipped      string  `json:"skipped,omitempty"`
	NumGPUBlocks int     `json:"num_gpu_blocks,omitempty"`
}

// LayoutMAPE is the error over the validated rows of one layout.
type LayoutMAPE struct {
	Layout   string  `json:"layout"`
	Rows     int     `json:"rows"`
	TTFTMAPE float64 `json:"ttft_mape"`
	TPOTMAPE float64 `json:"tpot_mape"`
}

// Report is the whole validation; MAPEs are percentages over the validated rows.
type Report struct {
	// The benchmark every row was replayed as.
	RequestsPerSlot int     `json:"requests_per_slot"`
	RangeRatio      float64 `json:"range_ratio"`
	AsyncScheduling bool    `json:"async_scheduling"`

	Rows      []Result     `json:"rows"`
	TTFTMAPE  float64      `json:"ttft_mape"`
	TPOTMAPE  float64      `json:"tpot_mape"`
	Validated int          `json:"validated"`
	Skipped   int          `json:"skipped"`
	Layouts   []LayoutMAPE `json:"layouts"`
}

// Validate replays, for every row, one worker of the row's layout serving
// RequestsPerSlot × concurrency unique prompts of the row's ISL and OSL with concurrency of
// them in flight, and compares the simulated mean TTFT and TPOT with the measured ones.
// Nothing is fitted to the rows: the worker's step times come from the embedded tables.
func Validate(ctx context.Context, rows []Row, o Options) (*Report, error) {
	if o.Base.ModelName == "" {
		o.Base = BenchmarkDeployment()
	}
	if o.RequestsPerSlot <= 0 {
		o.RequestsPerSlot = 10
	}
	if o.RangeRatio < 0 || o.RangeRatio > 1 || math.IsNaN(o.RangeRatio) {
		return nil, fmt.Errorf("silicon: range ratio %g is not in (0, 1]", o.RangeRatio)
	}
	if o.RangeRatio == 0 {
		o.RangeRatio = 1
	}
	type key struct {
		version                 string
		tp, adp, mtp, mep, c, i int
		osl                     int
	}
	type pred struct {
		ttft, tpot float64
		blocks     int
	}
	done := map[key]pred{} // identical rows (repeated measurements) share one replay
	rep := &Report{RequestsPerSlot: o.RequestsPerSlot, RangeRatio: o.RangeRatio, AsyncScheduling: o.Base.AsyncScheduling}
	for _, r := range rows {
		res := Result{Row: r}
		d := o.Base
		d.BackendVersion, d.TP, d.AttentionDP, d.MoETP, d.MoEEP = r.BackendVersion, r.TP, r.AttentionDP, r.MoETP, r.MoEEP
		switch {
		case !strings.EqualFold(r.Precision, "fp8"):
			res.Skipped = fmt.Sprintf("precision %s: only FP8 tables are embedded", r.Precision)
		case r.AttentionDP > 1:
			res.Skipped = fmt.Sprintf("attention_dp %d (DEP): attention data parallelism is not modelled", r.AttentionDP)
		case r.Concurrency > d.MaxNumSeqs:
			res.Skipped = fmt.Sprintf("concurrency %d exceeds max_num_seqs %d", r.Concurrency, d.MaxNumSeqs)
		}
		if res.Skipped == "" {
			k := key{r.BackendVersion, r.TP, r.AttentionDP, r.MoETP, r.MoEEP, r.Concurrency, r.ISL, r.OSL}
			p, ok := done[k]
			if !ok {
				ttft, tpot, blocks, err := replay(ctx, d, r, o)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					res.Skipped = err.Error()
				}
				p = pred{ttft, tpot, blocks}
				if err == nil {
					done[k] = p
				}
			}
			if res.Skipped == "" {
				res.PredTTFTMS, res.PredTPOTMS, res.NumGPUBlocks = p.ttft, p.tpot, p.blocks
				res.TTFTErrPct = (p.ttft - r.TTFTMS) / r.TTFTMS * 100
				res.TPOTErrPct = (p.tpot - r.TPOTMS) / r.TPOTMS * 100
			}
		}
		rep.Rows = append(rep.Rows, res)
	}
	rep.summarise()
	return rep, nil
}

// replay runs one row's closed-loop benchmark on one simulated worker.
func replay(ctx context.Context, d model.Deployment, r Row, o Options) (ttft, tpot float64, blocks int, err error) {
	w, err := model.NewWorker(d)
	if err != nil {
		return 0, 0, 0, err
	}
	d.NumGPUBlocks = w.Capacity().NumGPUBlocks
	n := r.Concurrency * o.RequestsPerSlot
	isl, osl := sampleLengths(n, r.ISL, o.RangeRatio, o.Seed), sampleLengths(n, r.OSL, o.RangeRatio, o.Seed+1)
	reqs := make([]trace.Request, n)
	next := int64(0) // every block of every prompt is distinct: no prefix sharing
	for i := range reqs {
		ids := make([]int64, (isl[i]+d.BlockSize-1)/d.BlockSize)
		for j := range ids {
			ids[j] = next
			next++
		}
		reqs[i] = trace.Request{InputLength: isl[i], OutputLength: osl[i], HashIDs: ids}
	}
	tr := &trace.Trace{Name: fmt.Sprintf("silicon row %d", r.Line), BlockSize: d.BlockSize, Requests: reqs}
	rc := router.DefaultConfig()
	rc.BlockSize = d.BlockSize
	cfg := engine.Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: r.Concurrency, Seed: o.Seed}
	rep, err := engine.Replay(ctx, cfg, w, tr)
	if err != nil {
		return 0, 0, 0, err
	}
	return rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS, d.NumGPUBlocks, nil
}

// sampleLengths draws n lengths uniformly from the integers [⌊hi × ratio⌋, hi] (at least 1)
// the way the benchmark client's random dataset does, deterministically from seed.
func sampleLengths(n, hi int, ratio float64, seed uint64) []int {
	lo := min(max(int(float64(hi)*ratio), 1), hi)
	rng := rand.New(rand.NewPCG(seed, 0x5111c0))
	out := make([]int, n)
	for i := range out {
		out[i] = lo + rng.IntN(hi-lo+1)
	}
	return out
}

func (rep *Report) summarise() {
	type acc struct {
		n          int
		ttft, tpot float64
	}
	all := acc{}
	by := map[string]*acc{}
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			rep.Skipped++
			continue
		}
		rep.Validated++
		a := by[r.Layout()]
		if a == nil {
			a = &acc{}
			by[r.Layout()] = a
		}
		for _, x := range []*acc{a, &all} {
			x.n++
			x.ttft += math.Abs(r.TTFTErrPct)
			x.tpot += math.Abs(r.TPOTErrPct)
		}
	}
	if all.n > 0 {
		rep.TTFTMAPE, rep.TPOTMAPE = all.ttft/float64(all.n), all.tpot/float64(all.n)
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a := by[k]
		rep.Layouts = append(rep.Layouts, LayoutMAPE{Layout: k, Rows: a.n,
			TTFTMAPE: a.ttft / float64(a.n), TPOTMAPE: a.tpot / float64(a.n)})
	}
}

// WriteJSON prints the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable prints one line per row, then the MAPE per layout and overall.
func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %-6s %5s %5s %5s │ %9s %9s %7s │ %8s %8s %7s\n",
		"line", "layout", "conc", "isl", "osl", "TTFT ms", "pred", "err", "TPOT ms", "pred", "err")
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "%5d %-6s %5d %5d %5d │ %9.1f ", r.Line, r.Layout(), r.Concurrency, r.ISL, r.OSL, r.TTFTMS)
		if r.Skipped != "" {
			fmt.Fprintf(&b, "skipped: %s\n", r.Skipped)
			continue
		}
		fmt.Fprintf(&b, "%9.1f %+6.1f%% │ %8.2f %8.2f %+6.1f%%\n", r.PredTTFTMS, r.TTFTErrPct, r.TPOTMS, r.PredTPOTMS, r.TPOTErrPct)
	}
	b.WriteString("\n")
	for _, l := range rep.Layouts {
		fmt.Fprintf(&b, "%-6s %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%\n", l.Layout, l.Rows, l.TTFTMAPE, l.TPOTMAPE)
	}
	fmt.Fprintf(&b, "all    %3d rows   TTFT MAPE %5.1f%%   TPOT MAPE %5.1f%%   (%d skipped)\n",
		rep.Validated, rep.TTFTMAPE, rep.TPOTMAPE, rep.Skipped)
	lengths, sched := "fixed ISL/OSL", "step-synchronous"
	if rep.RangeRatio < 1 {
		lengths = fmt.Sprintf("lengths uniform in [%g × ISL/OSL, ISL/OSL]", rep.RangeRatio)
	}
	if rep.AsyncScheduling {
		sched = "async"
	}
	fmt.Fprintf(&b, "benchmark: %d requests per slot, %s, %s scheduling\n", rep.RequestsPerSlot, lengths, sched)
	_, err := io.WriteString(w, b.String())
	return err
}
