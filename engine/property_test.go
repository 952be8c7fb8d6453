package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/router"
	"github.com/routerlab/routerlab/trace"
)

// genTrace draws a small trace whose prompts share prefixes: each prompt extends a
// previous prompt (or the empty one) by fresh trace blocks.
func genTrace(t *rapid.T, traceBlock int) *trace.Trace {
	n := rapid.IntRange(1, 40).Draw(t, "requests")
	var prompts [][]int64
	next := int64(1)
	reqs := make([]trace.Request, n)
	ts := int64(0)
	for i := range reqs {
		var ids []int64
		if len(prompts) > 0 && rapid.Bool().Draw(t, "extend") {
			base := prompts[rapid.IntRange(0, len(prompts)-1).Draw(t, "base")]
			ids = slices.Clone(base[:rapid.IntRange(0, len(base)).Draw(t, "keep")])
		}
		for range rapid.IntRange(0, 4).Draw(t, "fresh") {
			ids = append(ids, next)
			next++
		}
		if len(ids) == 0 {
			ids = append(ids, next)
			next++
		}
		prompts = append(prompts, ids)
		in := (len(ids)-1)*traceBlock + rapid.IntRange(1, traceBlock).Draw(t, "tail")
		ts += int64(rapid.IntRange(0, 50).Draw(t, "gap"))
		reqs[i] = trace.Request{TimestampMS: ts, InputLength: in, OutputLength: rapid.IntRange(1, 40).Draw(t, "out"), HashIDs: ids}
	}
	return &trace.Trace{Name: "rapid", BlockSize: traceBlock, Requests: reqs}
}

func genConfig(t *rapid.T, tr *trace.Trace) Config {
	bs := rapid.SampledFrom([]int{16, 32, 64}).Draw(t, "block_size")
	need := 0
	for _, r := range tr.Requests {
		need = max(need, (r.InputLength+r.OutputLength+bs-1)/bs)
	}
	d := deployment(need+rapid.IntRange(0, 3*need).Draw(t, "spare_blocks"),
		rapid.IntRange(8, 512).Draw(t, "budget"), rapid.IntRange(1, 8).Draw(t, "max_seqs"))
	d.AsyncScheduling = rapid.Bool().Draw(t, "async_scheduling")
	if !d.AsyncScheduling && rapid.Bool().Draw(t, "dynosim") {
		d.TimingReference = model.ReferenceDynosim // blocks published at pass start
	}
	d.APIServerTokenizeNS = rapid.SampledFrom([]int{0, 1340, 50000}).Draw(t, "tokenize_ns")
	d.APIServerTokenizeBatching = rapid.SampledFrom(model.TokenizeBatchings()).Draw(t, "tokenize_batching")
	d.RequestPathUS = rapid.SampledFrom([]int{0, 3000}).Draw(t, "request_path_us")
	d.StreamEndUS = rapid.SampledFrom([]int{0, 2000}).Draw(t, "stream_end_us")
	d.BlockSize = bs
	rc := router.DefaultConfig()
	rc.Mode = rapid.SampledFrom(router.Modes()).Draw(t, "mode")
	rc.BlockSize = bs
	rc.PrefillLoadScale = rapid.SampledFrom([]float64{0, 1, 4}).Draw(t, "scale")
	rc.Temperature = rapid.SampledFrom([]float64{0, 0.5}).Draw(t, "temp")
	cfg := Config{
		Workers: rapid.IntRange(1, 3).Draw(t, "workers"), Worker: d, Router: rc,
		Seed: rapid.Uint64().Draw(t, "seed"), RecordRequests: true,
	}
	if rapid.Bool().Draw(t, "closed") {
		cfg.ReplayConcurrency = rapid.IntRange(1, 6).Draw(t, "concurrency")
	} else {
		cfg.ArrivalSpeedupRatio = rapid.SampledFrom([]float64{0, 0.5, 1, 20}).Draw(t, "speedup")
	}
	if rapid.Bool().Draw(t, "snapshots") {
		cfg.SnapshotEveryUS = int64(rapid.IntRange(50, 5000).Draw(t, "snapshot_every"))
	}
	return cfg
}

// kvMirror replays KV events into per-worker sets, as an indexer sees the pools.
type kvMirror struct {
	sets []map[uint64]bool
	err  error
}

// newKVMirror is an empty mirror of n workers' cached blocks.
func newKVMirror(n int) *kvMirror {
	m := &kvMirror{sets: make([]map[uint64]bool, n)}
	for w := range m.sets {
		m.sets[w] = map[uint64]bool{}
	}
	return m
}

func (m *kvMirror) apply(ev router.KVEvent) {
	for _, h := range ev.Hashes {
		set := m.sets[ev.Worker]
		switch {
		case ev.Kind == router.BlocksStored && set[h]:
			m.err = fmt.Errorf("worker %d: stored %x twice", ev.Worker, h)
		case ev.Kind == router.BlocksRemoved && !set[h]:
			m.err = fmt.Errorf("worker %d: removed %x never stored", ev.Worker, h)
		}
		set[h] = ev.Kind == router.BlocksStored
		if !set[h] {
			delete(set, h)
		}
	}
}

// checkPool verifies one pool's internal invariants and that its cache entries are
// exactly the mirror's set.
func checkPool(s *Sim, w *worker, mirror map[uint64]bool) error {
	p := &w.pool
	held := map[int32]int32{}
	inUse := 0
	tables := inTransit(s, w)
	for _, ri := range w.running {
		tables = append(tables, s.reqs[ri].fl.blocks)
	}
	for _, t := range tables {
		for _, e := range t {
			if e == 0 {
				inUse++ // a plain block
			} else {
				held[e]++
			}
		}
	}
	cachedFree := 0
	cached := map[uint64]bool{}
	for rec := range p.nrec {
		for sub := range p.g {
			e, s := entryRef(int32(rec), sub), p.entry(int32(rec), sub)
			if !p.cached(int32(rec), sub) {
				if held[e] != 0 || s.refs != 0 {
					return fmt.Errorf("entry %d/%d: not cached, held by %d, refs %d", rec, sub, held[e], s.refs)
				}
				continue
			}
			if s.refs != held[e] {
				return fmt.Errorf("entry %d/%d: refs %d, held by %d running requests", rec, sub, s.refs, held[e])
			}
			if held[e] > 0 {
				inUse++
			} else {
				cachedFree++
			}
			cached[p.hash(int32(rec), sub)] = true
		}
	}
	if err := p.checkFIFO(); err != nil {
		return err
	}
	if inUse != p.inUse || cachedFree != p.lruLen || p.inUse+p.lruLen+p.plain != int(p.n) {
		return fmt.Errorf("counts: in use %d/%d, cached free %d/%d, plain %d, blocks %d",
			inUse, p.inUse, cachedFree, p.lruLen, p.plain, p.n)
	}
	if len(cached) != len(mirror) {
		return fmt.Errorf("pool caches %d blocks, KV events say %d", len(cached), len(mirror))
	}
	for h := range mirror {
		if !cached[h] {
			return fmt.Errorf("KV events say %x is cached; the pool does not have it", h)
		}
	}
	if len(w.running) > w.spec.seqs {
		return fmt.Errorf("%d running > max_num_seqs", len(w.running))
	}
	tokens := int32(0)
	for _, sc := range w.sched {
		tokens += sc.tokens
	}
	if w.busy && !w.fast && tokens > int32(w.spec.batched) {
		return fmt.Errorf("step of %d tokens > budget", tokens)
	}
	return nil
}

// runChecked runs s event by event, checking invariants after each event: the pools and
// check (nil: none) when stepwise, then the checks of also after every event.
func runChecked(t *rapid.T, s *Sim, mirror *kvMirror, check func(*Sim) error, also ...func(e event)) {
	last := int64(-1)
	for events := 0; !s.Done(); events++ {
		if events > 5_000_000 {
			t.Fatal("no progress")
		}
		e := s.heap.pop()
		if e.time < last {
			t.Fatalf("clock went back from %d to %d", last, e.time)
		}
		last = e.time
		s.process(e)
		if mirror.err != nil {
			t.Fatal(mirror.err)
		}
		for _, f := range also {
			f(e)
		}
		if !s.stepwise {
			continue
		}
		for i := range s.workers {
			if err := checkPool(s, &s.workers[i], mirror.sets[i]); err != nil {
				t.Fatalf("t=%d worker %d: %v", e.time, i, err)
			}
		}
		if check != nil {
			if err := check(s); err != nil {
				t.Fatalf("t=%d: %v", e.time, err)
			}
		}
	}
}

func TestInvariantsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkInvariants(t, nil, nil) })
}

// checkInvariants replays a random workload step by step and with the decode fast path,
// checking the engine's invariants after every event (and check's, when given, after every
// stepwise event) and that both loops give the same report; adapt, when given, sets what the
// workload's config leaves to a test.
func checkInvariants(t *rapid.T, adapt func(*rapid.T, *Config, *trace.Trace), check func(*Sim) error) {
	tb := rapid.SampledFrom([]int{64, 128, 512}).Draw(t, "trace_block")
	tr := genTrace(t, tb)
	cfg := genConfig(t, tr)
	cfg.LoadReport = rapid.Bool().Draw(t, "load_report") // its figures agree between the loops too
	if adapt != nil {
		adapt(t, &cfg, tr)
	}
	timer := &fakeTimer{base: int64(rapid.IntRange(1, 200).Draw(t, "base")), perToken: 1}
	var reports [2]string
	for i, stepwise := range []bool{true, false} {
		s, err := New(cfg, timer, tr)
		if err != nil {
			t.Fatal(err)
		}
		s.stepwise = stepwise
		mirror := newKVMirror(cfg.Workers)
		s.onKV = mirror.apply
		s.onDone = func(r *request) {
			if f := r.fl; f.generated != r.out || f.tokens != r.isl+r.out || f.computed != f.tokens-1 {
				t.Fatalf("request completes with %+v, flight %+v", *r, *f)
			}
		}
		runChecked(t, s, mirror, check)
		// Every request completed once with all its tokens.
		if s.completed != len(tr.Requests) {
			t.Fatalf("%d of %d requests completed", s.completed, len(tr.Requests))
		}
		var gaps int64
		for i, r := range s.reqs {
			if !r.finished || r.fl != nil || r.done < r.firstTok || r.firstTok < r.arrival {
				t.Fatalf("request %d: %+v", i, r)
			}
			gaps += int64(r.out - 1)
		}
		if s.itl.n != gaps {
			t.Fatalf("%d inter-token gaps, want %d", s.itl.n, gaps)
		}
		for i := range s.workers {
			w := &s.workers[i]
			if len(w.running) != 0 || w.waiting.len() != 0 || w.pool.inUse != 0 {
				t.Fatalf("worker %d not drained", i)
			}
			if err := checkPool(s, w, mirror.sets[i]); err != nil {
				t.Fatalf("end, worker %d: %v", i, err)
			}
		}
		rep, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Summary.RequestsCompleted != len(tr.Requests) {
			t.Fatalf("report counts %d", rep.Summary.RequestsCompleted)
		}
		reports[i] = reportJSON(t, rep)
	}
	if reports[0] != reports[1] {
		t.Fatalf("decode fast path changed the report:\n%s\n%s", reports[0], reports[1])
	}
}

// The router's own indexer agrees with the pools: its overlap for every cached prompt
// equals the pool's longest cached prefix.
func TestRouterIndexerMatchesPools(t *testing.T) {
	tr := syntheticTrace(400, 3)
	cfg, mw := seedConfig(t)
	cfg.Worker.NumGPUBlocks = 3000 // small, so evictions happen
	s, err := New(cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	rt := s.rt.(*router.Router)
	overlaps := make([]int, cfg.Workers)
	checked := 0
	for step := 0; !s.Done(); step++ {
		s.process(s.heap.pop())
		if step%97 != 0 {
			continue
		}
		s.settleAll(s.now)
		for i := range tr.Requests[:min(len(tr.Requests), s.nextReq)] {
			r := &tr.Requests[i]
			hashes := blockHashes(nil, r.HashIDs, r.IDOffset, r.InputLength, 64, tr.BlockSize)
			rt.Overlaps(hashes, overlaps)
			for w := range s.workers {
				if got, want := overlaps[w], cachedPrefix(&s.workers[w].pool, hashes); got != want {
					t.Fatalf("t=%d request %d worker %d: router overlap %d, pool prefix %d", s.now, i, w, got, want)
				}
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d comparisons", checked)
	}
}

// cachedPrefix is the pool's longest run of cached blocks of a prompt.
func cachedPrefix(p *blockPool, hashes []uint64) int {
	n := 0
	for j, h := range hashes {
		sub := int32(j) % p.g
		rec := p.group(hashes[j-int(sub)])
		if !p.cached(rec, sub) || p.hash(rec, sub) != h {
			break
		}
		n++
	}
	return n
}

func TestDeterministicReport(t *testing.T) {
	tr := syntheticTrace(600, 5)
	cfg, mw := seedConfig(t)
	cfg.SnapshotEveryUS = 500_000
	cfg.RecordRequests = true
	cfg.Router.Temperature = 0.5
	var out [2]string
	for i := range out {
		rep, err := Replay(context.Background(), cfg, mw, tr)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = reportJSON(t, rep)
	}
	if out[0] != out[1] {
		t.Fatal("two runs with the same seed differ")
	}
}

// The headline on the real conversation trace: kv_router reuses more prefix cache
// and gives a lower mean TTFT than round_robin, and every request completes.
func TestConversationKVRouterBeatsRoundRobin(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 2 × 12,031 requests")
	}
	tr := loadConversation(t)
	cfg, mw := seedConfig(t)
	var sums [2]Summary
	for i, mode := range []router.Mode{router.ModeKV, router.ModeRoundRobin} {
		cfg.Router.Mode = mode
		rep, err := Replay(context.Background(), cfg, mw, tr)
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = rep.Summary
		if rep.Summary.RequestsCompleted != len(tr.Requests) {
			t.Fatalf("%s: %d of %d completed", mode, rep.Summary.RequestsCompleted, len(tr.Requests))
		}
	}
	kv, rr := sums[0], sums[1]
	t.Logf("reuse %.3f vs %.3f, mean TTFT %.1f vs %.1f ms", kv.PrefixCacheReusedRatio, rr.PrefixCacheReusedRatio, kv.MeanTTFTMS, rr.MeanTTFTMS)
	if kv.PrefixCacheReusedRatio <= rr.PrefixCacheReusedRatio || kv.MeanTTFTMS >= rr.MeanTTFTMS {
		t.Errorf("kv_router does not beat round_robin: reuse %v vs %v, TTFT %v vs %v",
			kv.PrefixCacheReusedRatio, rr.PrefixCacheReusedRatio, kv.MeanTTFTMS, rr.MeanTTFTMS)
	}
}

// checkFIFO checks the LRU FIFO's block count: the runs from the head stand for fifoN
// blocks, lruLen of them live.
func (p *blockPool) checkFIFO() error {
	n := 0
	for _, l := range p.lru[p.lruPos:] {
		n += int(l.n)
	}
	if n != p.fifoN || p.lruLen > n {
		return fmt.Errorf("LRU FIFO: runs stand for %d blocks, fifoN %d, cached free %d", n, p.fifoN, p.lruLen)
	}
	return nil
}
