package engine

import (
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/planner"
)

// plannerTick runs the planner at t on what it would observe then, applies its decision,
// and queues its next tick.
func (s *Sim) plannerTick(t int64) {
	fs := s.fleet
	fs.ticks++
	s.settleAll(t)
	disagg := fs.first < len(fs.state)
	// The aggregated pool is the planner's decode pool (Dynamo's agg mode reads num_decode).
	in := planner.Input{NowS: float64(t) / 1e6, Ready: fs.serving[0], Expected: fs.target(0)}
	if disagg {
		in.Ready, in.Expected = fs.serving[1], fs.target(1)
		in.PrefillReady, in.PrefillExpected = fs.serving[0], fs.target(0)
	}
	if fs.tick.Load {
		in.FPMs = []planner.FPM{}
		for w, st := range fs.state {
			if st != slotServing {
				continue
			}
			if f := s.fpm(&s.workers[w]); disagg && w < fs.first {
				in.PrefillFPMs = append(in.PrefillFPMs, f)
			} else {
				in.FPMs = append(in.FPMs, f)
			}
		}
	}
	if fs.tick.Throughput {
		tr := &planner.Traffic{NumReq: float64(fs.winReq), DurationS: fs.cfg.Planner.ThroughputEveryS}
		if fs.winReq > 0 {
			tr.ISL, tr.OSL = float64(fs.winISL)/float64(fs.winReq), float64(fs.winOSL)/float64(fs.winReq)
		}
		var prompt, hit int64
		for i := range fs.first { // the prompts the aggregated or prefill pool computed
			prompt += s.workers[i].promptTokens
			hit += s.workers[i].reusedTokens
		}
		if d := prompt - fs.promptBase; d > 0 {
			tr.KVHitRate = float64(hit-fs.hitBase) / float64(d)
		}
		fs.promptBase, fs.hitBase = prompt, hit
		fs.winReq, fs.winISL, fs.winOSL = 0, 0, 0
		in.Traffic = tr
	}
	d, next := fs.pl.OnTick(fs.tick, in)
	switch {
	case disagg:
		if d.Prefill >= 0 {
			s.scale(0, d.Prefill, t, d.PrefillReason)
		}
		if d.Replicas >= 0 {
			s.scale(1, d.Replicas, t, d.Reason)
		}
	case d.Replicas >= 0:
		s.scale(0, d.Replicas, t, d.Reason)
	}
	fs.tick = next
	if !s.Done() {
		s.heap.push(event{time: max(t+1, secondsUS(next.AtS)), phase: phaseFleet, gen: fleetTick})
	}
}

// fpm is worker w's forward-pass metrics as its engine publishes them: the pass in progress
// (priced by the timing model; an idle engine reports none) and what waits. A decode
// worker's requests are all decodes (the prompt's last token, computed there, included),
// and those routed to it waiting for blocks and a slot are queued decode KV.
func (s *Sim) fpm(w *worker) planner.FPM {
	var f planner.FPM
	if w.busy {
		var b model.Batch
		for _, sc := range w.sched {
			r := &s.reqs[sc.req]
			if w.spec.decode || r.fl.generated > 0 && r.fl.tokens-r.fl.computed == 1 {
				f.DecodeRequests++
				f.DecodeKVTokens += int64(r.fl.tokens)
				b.Decodes++
				b.DecodeContextTokens += int64(r.fl.tokens)
			} else {
				f.PrefillRequests++
				f.PrefillTokens += int64(sc.tokens)
				b.Prefill = append(b.Prefill, model.Chunk{NewTokens: int(sc.tokens), CachedTokens: int(r.fl.computed)})
				if r.fl.computed+sc.tokens == r.fl.tokens {
					b.FirstTokens++
					b.FirstTokenContextTokens += int64(r.fl.tokens)
				}
			}
		}
		f.WallS = float64(stepTime(w.spec.timer, &b)) / 1e6
	}
	if w.spec.decode {
		q := &s.dis.pending[w.id-s.dis.first]
		for j := range q.len() {
			f.QueuedDecodeKV += int64(s.reqs[q.at(j)].isl)
		}
	}
	for j := range w.waiting.len() {
		r := &s.reqs[w.waiting.at(j)]
		if r.fl.generated > 0 || w.spec.decode {
			f.QueuedDecodeKV += int64(r.fl.tokens)
		} else {
			f.QueuedPrefillTokens += int64(r.fl.tokens - r.fl.computed)
		}
	}
	return f
}
