package sweep

import (
	"context"
	"sync"

	"github.com/routerlab/routerlab/engine"
)

// ScratchRunner is a Simulator whose simulations can run in memory kept from earlier ones
// (engine.Scratch). *config.Experiment implements it.
type ScratchRunner interface {
	// RunIn is Run in sc's memory; its report is the same.
	RunIn(ctx context.Context, sc *engine.Scratch, cfg engine.Config, requests int) (*engine.Report, error)
}

// slotMemory is a ScratchRunner whose simulations each take a Scratch from a free list and
// give it back when done: the list holds at most one Scratch per simulation ever running at
// once (one per core), so each core's replays reuse the memory its earlier ones grew rather
// than growing and faulting in fresh tables every time (engine.Scratch). A sweep builds one
// for its run (withSlotMemory); its memory goes with it.
type slotMemory struct {
	ScratchRunner
	Simulator
	mu   sync.Mutex
	free []*engine.Scratch
}

// withSlotMemory returns sim running in reused memory when it can (a local ScratchRunner),
// else sim itself.
func withSlotMemory(sim Simulator) Simulator {
	if _, remote := sim.(Remote); remote {
		return sim
	}
	if _, ok := sim.(*slotMemory); ok {
		return sim
	}
	r, ok := sim.(ScratchRunner)
	if !ok {
		return sim
	}
	return &slotMemory{ScratchRunner: r, Simulator: sim}
}

// Run runs cfg in a free Scratch.
func (m *slotMemory) Run(ctx context.Context, cfg engine.Config, requests int) (*engine.Report, error) {
	m.mu.Lock()
	var sc *engine.Scratch
	if k := len(m.free); k > 0 {
		sc, m.free = m.free[k-1], m.free[:k-1]
	} else {
		sc = &engine.Scratch{}
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.free = append(m.free, sc)
		m.mu.Unlock()
	}()
	return m.RunIn(ctx, sc, cfg, requests)
}
