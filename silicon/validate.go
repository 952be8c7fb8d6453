package silicon

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// Options shape the validation.
type Options struct {
	// Benchmark is the profile: under "inferencex" (the zero value) each row is replayed with
	// the settings of the run that measured it (InferenceXRuns), under any other profile every
	// row with the profile's own.
	Benchmark Benchmark
	// Override, when set, changes single settings of every row's benchmark after that choice
	// (the command line's --range-ratio, --max-num-seqs, …).
	Override func(*Benchmark)
	Seed     uint64
}

// benchmarkOf is the benchmark row r is replayed with, and the run it comes from.
func (o Options) benchmarkOf(r Row) (Benchmark, Run) {
	run := Run{Script: o.Benchmark.Name, Benchmark: o.Benchmark}
	if o.Benchmark.Name == "inferencex" {
		run = runOf(r)
	}
	if o.Override != nil {
		o.Override(&run.Benchmark)
	}
	return run.Benchmark, run
}

// Result is one row with its prediction; Skipped rows carry the reason and no prediction.
// Note says how the row was read when its labels were not taken at face value.
type Result struct {
	Row
	PredTTFTMS float64 `json:"pred_ttft_ms"`
	PredTPOTMS float64 `json:"pred_tpot_ms"`
	TTFTErrPct float64 `json:"ttft_err_pct"` // (pred − silicon) / silicon × 100
	TPOTErrPct float64 `json:"tpot_err_pct"`
	// DecodingInFlight is how many of the row's clients were decoding at any time, by its own
	// TTFT and TPOT (decodingInFlight); PredDecodingInFlight the same of the replay. A row
	// far below its concurrency ran fewer requests at once than its label says.
	DecodingInFlight     float64 `json:"decoding_in_flight"`
	PredDecodingInFlight float64 `json:"pred_decoding_in_flight,omitempty"`
	Skipped              string  `json:"skipped,omitempty"`
	Note                 string  `json:"note,omitempty"`
	ValidatedAs          string  `json:"validated_as"` // the layout replayed (see Note when it differs from the labels)
	// Float32MatmulPrecision is the VLLM_FLOAT32_MATMUL_PRECISION the row was replayed with.
	Float32MatmulPrecision string `json:"float32_matmul_precision,omitempty"`
	NumGPUBlocks           int    `json:"num_gpu_blocks,omitempty"`
	// ReplayedVersion is the vLLM version of the tables the row was replayed on: the nearest
	// embedded to the one it was measured on (BackendVersion, or the run's image when the
	// row does not record it).
	ReplayedVersion string `json:"replayed_version,omitempty"`
	// Script and Image name the run whose settings replayed the row; NotModelled what of
	// them the simulator does not price.
	Script      string    `json:"script,omitempty"`
	Image       string    `json:"image,omitempty"`
	NotModelled string    `json:"not_modelled,omitempty"`
	Benchmark   Benchmark `json:"benchmark"`
}

// quantizationOf is the serving precision (model.Deployment.Quantization) of a row's
// precision label: a family (fp4: NVIDIA's NVFP4 checkpoints or gpt-oss's own MXFP4; fp8: an
// FP8 checkpoint or vLLM's FP8 quantisation of a BF16 one) the loader resolves per model, and
// an empty label the checkpoint as published.
func quantizationOf(precision string) string {
	switch p := strings.ToLower(precision); p {
	case "", "bf16", "bfloat16":
		return ""
	default:
		return p
	}
}

// denseLabels reads a row whose MoE sizes are unset (0 or 1 on a multi-GPU worker, as the
// collections label dense models) as vLLM's default layout: every GPU of the tensor-parallel
// group holds a shard of every expert, if the model has any.
func denseLabels(r Row) (Row, string, bool) {
	gpus := r.TP * r.AttentionDP
	if r.MoETP*r.MoEEP == gpus || r.MoETP > 1 || r.MoEEP > 1 {
		return r, "", false
	}
	note := fmt.Sprintf("labelled moe_tp %d, moe_ep %d: replayed as moe_tp %d (vLLM's default without expert parallelism)", r.MoETP, r.MoEEP, gpus)
	r.MoETP, r.MoEEP = gpus, 1
	return r, note, true
}

// impliedDP reads a row that leaves attention_dp blank while its MoE labels span more GPUs
// than its tp (AIConfigurator's gap-analysis rows of Qwen3-235B on H200: tp 1 with moe_tp 2
// or 4, tp 2 with moe_tp 4). AIConfigurator enumerates only layouts with dp × tp = moe_tp ×
// moe_ep (sdk/utils.py, enumerate_parallel_config) and its generator passes dp to vLLM as
// --data-parallel-size and adds --enable-expert-parallel only when moe_ep > 1
// (generator/config/backend_config_mapping.yaml, rule_plugin/vllm.rule); vLLM then shards each
// expert over all dp × tp GPUs (FusedMoEParallelConfig without expert parallelism). So tp 1,
// moe_tp 2 is one worker of two attention-data-parallel ranks whose experts are split over
// both GPUs: a describable layout, with attention_dp = moe_tp × moe_ep / tp.
func impliedDP(r Row) (Row, string, bool) {
	moe := r.MoETP * r.MoEEP
	if (r.Backend != "" && r.Backend != "vllm") || r.AttentionDP != 1 || r.TP < 1 || moe <= r.TP || moe%r.TP != 0 {
		return r, "", false
	}
	r.AttentionDP = moe / r.TP
	note := fmt.Sprintf("labelled tp %d, moe_tp %d, moe_ep %d with attention_dp blank: AIConfigurator's layout dp × tp = moe_tp × moe_ep, i.e. vLLM --data-parallel-size %d on %d GPUs",
		r.TP, r.MoETP, r.MoEEP, r.AttentionDP, moe)
	return r, note, true
}

// convertedDEP reads a row labelled with attention data parallelism on top of tensor-parallel
// attention (tp > 1) whose batch size is its concurrency divided by attention_dp: such labels
// come from a conversion that computed attention_dp = GPUs / TP and split the batch
// accordingly, while the run itself was a TEP worker (TP attention, expert-parallel MoE) on TP
// GPUs serving the whole concurrency — the same runs appear in the shared file under TEP labels
// with the same measurements. A classic DEP row (tp 1 per attention rank) is left as it is.
func convertedDEP(r Row) (Row, string, bool) {
	if r.TP <= 1 || r.AttentionDP <= 1 || r.BatchSize*r.AttentionDP != r.Concurrency {
		return r, "", false
	}
	note := fmt.Sprintf("labelled attention_dp %d, moe_ep %d, batch %d: validated as TEP (tp %d, moe_ep %d) at batch = concurrency %d",
		r.AttentionDP, r.MoEEP, r.BatchSize, r.TP, r.TP, r.Concurrency)
	r.AttentionDP, r.MoETP, r.MoEEP, r.BatchSize = 1, 1, r.TP, r.Concurrency
	return r, note, true
}

// productTEP reads an SGLang or TensorRT-LLM row labelled tp = moe_tp × moe_ep with moe_tp =
// moe_ep = N ≥ 4 (tp 16 with 4 × 4, tp 64 with 8 × 8: more GPUs than a node holds) as the TEP
// worker that measured it: tp N, experts spread over its N GPUs. AIConfigurator's sample labels
// some of its TEP runs so: each such row whose run another collection file also lists carries,
// to the last digit, the TTFT and TPOT of the row there labelled tp N, moe_ep N (72 of the 257
// in the sample; none matches a row of another layout). At N = 2 (tp 4 with 2 × 2) the label
// is an ordinary 4-GPU layout, and no row contradicts it.
func productTEP(r Row) (Row, string, bool) {
	n := r.MoEEP
	if r.Backend == "" || r.Backend == string(model.BackendVLLM) || r.AttentionDP != 1 || n < 4 || r.MoETP != n || r.TP != n*n {
		return r, "", false
	}
	note := fmt.Sprintf("labelled tp %d, moe_tp %d, moe_ep %d: validated as TEP (tp %d, moe_ep %d), the run the label multiplies out", r.TP, r.MoETP, r.MoEEP, n, n)
	r.TP, r.MoETP = n, 1
	return r, note, true
}

// noExpertParallel reads a row labelled with expert parallelism from a run whose script does
// not enable it (Benchmark.ExpertParallel false) as vLLM served it: every expert sharded over
// the worker's GPUs.
func noExpertParallel(r Row, b Benchmark) (Row, string, bool) {
	if b.ExpertParallel != nil && *b.ExpertParallel {
		return expertParallel(r)
	}
	if b.ExpertParallel == nil || r.MoEEP <= 1 {
		return r, "", false
	}
	note := fmt.Sprintf("labelled moe_tp %d, moe_ep %d: replayed as moe_tp %d (the script does not pass --enable-expert-parallel)", r.MoETP, r.MoEEP, r.MoETP*r.MoEEP)
	r.MoETP, r.MoEEP = r.MoETP*r.MoEEP, 1
	return r, note, true
}

// expertParallel reads a row labelled with tensor-parallel experts from a run whose script
// spreads the experts over the worker's GPUs (Benchmark.ExpertParallel true: TensorRT-LLM's
// --ep_size equal to --tp_size, SGLang's --enable-ep-moe) as the run served it.
func expertParallel(r Row) (Row, string, bool) {
	if r.MoETP <= 1 {
		return r, "", false
	}
	flag := fmt.Sprintf("--ep_size %d", r.MoETP*r.MoEEP)
	if r.Backend == string(model.BackendSGLang) {
		flag = "--enable-ep-moe: ep size = tp size"
	}
	note := fmt.Sprintf("labelled moe_tp %d, moe_ep %d: replayed as moe_ep %d (the script passes %s)", r.MoETP, r.MoEEP, r.MoETP*r.MoEEP, flag)
	r.MoETP, r.MoEEP = 1, r.MoETP*r.MoEEP
	return r, note, true
}

// Validate replays, for every row, one worker of the row's layout under the benchmark that
// measured it, and compares the simulated mean TTFT and TPOT with the measured ones.
// Nothing is fitted to the rows: the worker's step times come from the embedded tables.
func Validate(ctx context.Context, rows []Row, o Options) (*Report, error) {
	if o.Benchmark.Name == "" {
		o.Benchmark = InferenceX()
	}
	base, _ := o.benchmarkOf(Row{})
	if err := base.check(); err != nil {
		return nil, err
	}
	type pred struct {
		ttft, tpot float64
		blocks     int
	}
	type key struct {
		d, decode      model.Deployment // decode: a disaggregated row's decode pool
		b              Benchmark
		conc, isl, osl int
	}
	// A row's replay depends only on its deployment, benchmark and shape: identical rows
	// (repeated measurements) share one, and the distinct replays run at once, one per core.
	// The rows are then filled in order as a sequential pass would: a replay that failed is
	// run again for the next row of its shape, so every message names its own row.
	type prepared struct {
		res Result
		sim Row
		d   model.Deployment
		b   Benchmark
		k   key
	}
	rowsOut := make([]prepared, len(rows))
	priced := map[model.Deployment]string{}   // poolsPriced's answers
	dpPriced := map[model.Deployment]string{} // attentionDPSkip's
	for i, r := range rows {
		res := Result{Row: r}
		b, run := o.benchmarkOf(r)
		if err := b.check(); err != nil {
			return nil, fmt.Errorf("%w (the run of line %d, %s)", err, r.Line, run.Script)
		}
		res.Script, res.Image, res.NotModelled, res.Benchmark = run.Script, run.Image, run.NotModelled, b
		res.DecodingInFlight = decodingInFlight(r.Concurrency, r.OSL, b.RangeRatio, r.TTFTMS, r.TPOTMS)
		sim := r
		if c, note, ok := convertedDEP(r); ok {
			sim, res.Note = c, note
		} else if c, note, ok := productTEP(r); ok && r.Unsupported == "" {
			sim, res.Note = c, note
		} else if c, note, ok := impliedDP(r); ok && r.Unsupported == "" {
			sim, res.Note = c, note
		}
		if c, note, ok := denseLabels(sim); ok && r.Unsupported == "" {
			sim, res.Note = c, strings.TrimPrefix(res.Note+"; "+note, "; ")
		}
		if c, note, ok := noExpertParallel(sim, b); ok && r.Unsupported == "" {
			sim, res.Note = c, strings.TrimPrefix(res.Note+"; "+note, "; ")
		}
		if c, note, ok := scriptAttentionDP(sim, b); ok && r.Unsupported == "" {
			sim, res.Note = c, strings.TrimPrefix(res.Note+"; "+note, "; ")
		}
		if _, err := fmt.Sscanf(sim.BackendVersion, "%d.", new(int)); err != nil && run.version() != "" {
			sim.BackendVersion = run.version() // unrecorded in the row: the run's image
		}
		var d, dd model.Deployment
		if r.Disagg != nil && r.Unsupported == "" {
			var skip string
			d, dd, skip = disaggDeployments(sim, b)
			if skip == "" {
				skip = poolsPriced(d, dd, priced)
			}
			if skip == "" {
				skip = derivedLoadSkip(r, dd)
			}
			res.Skipped, res.ValidatedAs = cmp.Or(skip, disaggBackendSkip(r, o)), "disagg"
			if r.ConcurrencyDerived {
				res.Note = strings.TrimPrefix(res.Note+"; "+derivedNote(r), "; ")
			}
			res.Float32MatmulPrecision, res.ReplayedVersion = d.Float32MatmulPrecision, d.BackendVersion
			rowsOut[i] = prepared{res, sim, d, b, key{d, dd, b, r.Concurrency, r.ISL, r.OSL}}
			continue
		}
		d = b.deployment(sim)
		res.ValidatedAs, res.Float32MatmulPrecision, res.ReplayedVersion = sim.Layout(), d.Float32MatmulPrecision, d.BackendVersion
		switch {
		case r.Unsupported != "":
			res.Skipped = r.Unsupported
		case run.Skip != "":
			res.Skipped = run.Skip
		case sim.MoETP*sim.MoEEP != sim.TP*sim.AttentionDP:
			res.Skipped = fmt.Sprintf("labels tp %d, attention_dp %d, moe_tp %d, moe_ep %d do not describe one worker", r.TP, r.AttentionDP, r.MoETP, r.MoEEP)
		case sim.AttentionDP > 1 && b.Speculative.On():
			res.Skipped = dsr1TRTMTPDPSkip
		case sim.AttentionDP > 1 && attentionDPSkip(sim, d, dpPriced) != "":
			res.Skipped = attentionDPSkip(sim, d, dpPriced)
		case r.Concurrency > d.MaxNumSeqs:
			res.Skipped = fmt.Sprintf("concurrency %d exceeds max_num_seqs %d", r.Concurrency, d.MaxNumSeqs)
		}
		rowsOut[i] = prepared{res, sim, d, b, key{d, dd, b, r.Concurrency, r.ISL, r.OSL}}
	}
	type outcome struct {
		p   pred
		err error
	}
	first := map[key]int{} // the first row of each shape to replay
	outcomes := make([]outcome, len(rows))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range rowsOut {
		pr := &rowsOut[i]
		if pr.res.Skipped != "" {
			continue
		}
		if _, ok := first[pr.k]; ok {
			continue
		}
		first[pr.k] = i
		g.Go(func() error {
			ttft, tpot, blocks, err := replayRow(ctx, pr.d, pr.k.decode, pr.sim, pr.b, o.Seed)
			outcomes[i] = outcome{pred{ttft, tpot, blocks}, err}
			return nil
		})
	}
	_ = g.Wait() // every job returns nil: a replay's error is its row's
	done := map[key]pred{}
	rep := &Report{Benchmark: base}
	for i := range rowsOut {
		pr := &rowsOut[i]
		res, r := pr.res, rows[i]
		if res.Skipped == "" {
			p, ok := done[pr.k]
			if !ok {
				var err error
				if first[pr.k] == i {
					p, err = outcomes[i].p, outcomes[i].err
				} else {
					p.ttft, p.tpot, p.blocks, err = replayRow(ctx, pr.d, pr.k.decode, pr.sim, pr.b, o.Seed)
				}
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					res.Skipped = err.Error()
				} else {
					done[pr.k] = p
				}
			}
			if res.Skipped == "" {
				res.PredTTFTMS, res.PredTPOTMS, res.NumGPUBlocks = p.ttft, p.tpot, p.blocks
				res.TTFTErrPct = (p.ttft - r.TTFTMS) / r.TTFTMS * 100
				res.TPOTErrPct = (p.tpot - r.TPOTMS) / r.TPOTMS * 100
				res.PredDecodingInFlight = decodingInFlight(r.Concurrency, r.OSL, pr.b.RangeRatio, p.ttft, p.tpot)
			}
		}
		rep.Rows = append(rep.Rows, res)
	}
	rep.summarise()
	return rep, nil
}

// replay runs one row's benchmark on one simulated worker: the warm-up requests to
// completion, then the timed ones from an idle worker, as the client's two phases do. Each
// phase starts with an empty cache: exact with prefix caching off (the inferencex profile);
// with it on, a real worker would still hold the warm-up prompt for the first timed request.
func replay(ctx context.Context, d model.Deployment, r Row, b Benchmark, seed uint64) (ttft, tpot float64, blocks int, err error) {
	w, err := model.NewWorker(d)
	if err != nil {
		return 0, 0, 0, err
	}
	c := w.Capacity()
	d.NumGPUBlocks = c.NumGPUBlocks // the running cap, if any, the engine asks w for
	rc := router.DefaultConfig()
	rc.BlockSize = d.BlockSize
	cfg := engine.Config{Workers: 1, Worker: d, Router: rc, ReplayConcurrency: r.Concurrency, Seed: seed, Scheduler: b.scheduler(d)}
	rep, err := benchmarkRun(ctx, cfg, w, r, b, seed)
	if err != nil {
		return 0, 0, 0, err
	}
	return rep.Summary.MeanTTFTMS, rep.Summary.MeanTPOTMS, d.NumGPUBlocks, nil
}

// benchmarkRun runs row r's benchmark on the fleet of cfg: the warm-up requests to
// completion, then the timed ones from an idle fleet, as the client's two phases do.
func benchmarkRun(ctx context.Context, cfg engine.Config, timer model.StepTimer, r Row, b Benchmark, seed uint64) (*engine.Report, error) {
	bs := cfg.Worker.BlockSize
	n := r.Concurrency * b.RequestsPerSlot
	warm, prompts := r.Concurrency*b.WarmupPerSlot, max(n, r.Concurrency*b.DatasetEntriesPerSlot)
	if reqs, ids := n+warm, prompts*((b.serverTokens(r.ISL)+bs-1)/bs); reqs > MaxReplayRequests || ids > MaxReplayBlocks {
		return nil, fmt.Errorf("the replay would hold %d requests and %d prompt blocks, beyond the budget of %d and %d: "+
			"lower --requests-per-slot or --dataset-entries-per-slot", reqs, ids, MaxReplayRequests, MaxReplayBlocks)
	}
	var warmup, timed []trace.Request
	if b.DatasetEntriesPerSlot > 0 {
		warmup, timed = datasetDraws(warm, n, r, b, bs, seed)
	} else {
		// The client warms up with its first prompt, repeated.
		timed = distinctPrompts(n, r, b, bs, seed)
		warmup = make([]trace.Request, warm)
		for i := range warmup {
			warmup[i] = timed[0]
		}
	}
	run := func(name string, reqs []trace.Request) (*engine.Report, error) {
		tr := &trace.Trace{Name: fmt.Sprintf("silicon row %d %s", r.Line, name), BlockSize: bs, Requests: reqs}
		return engine.Replay(ctx, cfg, timer, tr)
	}
	if warm > 0 {
		if _, err := run("warm-up", warmup); err != nil {
			return nil, err
		}
	}
	return run("timed", timed)
}

// replayRow replays an aggregated row on one worker of d, or a disaggregated one on its
// pools (decode: the decode pool's deployment).
func replayRow(ctx context.Context, d, decode model.Deployment, r Row, b Benchmark, seed uint64) (ttft, tpot float64, blocks int, err error) {
	if r.Disagg != nil {
		ttft, tpot, err = replayDisagg(ctx, d, decode, r, b, seed)
		return ttft, tpot, 0, err
	}
	return replay(ctx, d, r, b, seed)
}

// distinctPrompts are a benchmark's n timed requests of row r: lengths drawn as its client
// draws them, prompts as long as the server tokenises them, every block of every prompt
// distinct (no prefix sharing).
func distinctPrompts(n int, r Row, b Benchmark, blockSize int, seed uint64) []trace.Request {
	isl, osl := sampleLengths(n, r.ISL, b.RangeRatio, seed), sampleLengths(n, r.OSL, b.RangeRatio, seed+1)
	next := int64(0)
	timed := make([]trace.Request, n)
	for i := range timed {
		isl[i] = b.serverTokens(isl[i])
		ids := make([]int64, (isl[i]+blockSize-1)/blockSize)
		for j := range ids {
			ids[j] = next
			next++
		}
		timed[i] = trace.Request{InputLength: isl[i], OutputLength: osl[i], HashIDs: ids}
	}
	return timed
}

// decodingInFlight is, by Little's law, how many of a closed loop's c clients are decoding at
// any time: each request waits TTFT for its first token and decodes the rest of its output
// (mean OSL − 1 tokens, lengths uniform on [⌊OSL × ratio⌋, OSL]) at TPOT, so the loop
// completes c / (TTFT + decode) requests a second and c × decode / (TTFT + decode) of them
// are decoding. Near c when the server admits every client at once; far below it when
// requests queued before their first token.
func decodingInFlight(c, osl int, ratio, ttftMS, tpotMS float64) float64 {
	lo := shortestLength(osl, ratio)
	decode := (float64(lo+osl)/2 - 1) * tpotMS
	if decode <= 0 || ttftMS+decode <= 0 {
		return 0
	}
	return float64(c) * decode / (ttftMS + decode)
}

// shortestLength is the shortest of the lengths the benchmark client draws up to hi:
// ⌊hi × ratio⌋, at least 1 and at most hi.
func shortestLength(hi int, ratio float64) int { return min(max(int(float64(hi)*ratio), 1), hi) }

// sampleLengths draws n lengths uniformly from the integers [⌊hi × ratio⌋, hi] (at least 1)
// the way the benchmark client's random dataset does, deterministically from seed.
func sampleLengths(n, hi int, ratio float64, seed uint64) []int {
	lo := shortestLength(hi, ratio)
	rng := rand.New(rand.NewPCG(seed, 0x5111c0))
	out := make([]int, n)
	for i := range out {
		out[i] = lo + rng.IntN(hi-lo+1)
	}
	return out
}
