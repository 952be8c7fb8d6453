package engine

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/router"
)

// The budget's bytes per cached block hold: a fleet that keeps every block of a trace
// (every block of a request stays cached: the pools never evict) uses at most
// cacheBytesPerBlock(g) per block of the trace's requests, counted as the budget counts them.
func TestCacheBytesPerBlockBoundsAReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("replays to the end at several block sizes")
	}
	tr := syntheticTrace(600, 7)
	for i := range tr.Requests {
		tr.Requests[i].IDOffset = int64(i) << 32 // no block shared: the worst case
	}
	for _, bs := range []int{1, 2, 8, 16, 64, 512} {
		t.Run(fmt.Sprint("block_size=", bs), func(t *testing.T) {
			cfg := Config{Workers: 8, Worker: deployment(math.MaxInt32/2, 16384, 256), Router: router.DefaultConfig(), ReplayConcurrency: 32, Seed: 1}
			cfg.Worker.BlockSize, cfg.Router.BlockSize = bs, bs
			tr := tr
			if bs <= 2 {
				tr = tr.First(100) // within the budget
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, err := New(cfg, &fakeTimer{base: 100, perToken: 1}, tr)
			if err != nil {
				t.Fatal(err)
			}
			for !s.RunUntil(math.MaxInt64 / 4) {
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(s)
			blocks := traceBlocks(cfg.Worker.BlockSize, tr.Requests, nil)
			g := groupSize(bs, tr.BlockSize)
			per := float64(after.HeapInuse-before.HeapInuse) / float64(blocks)
			t.Logf("g=%d: %d blocks, %.1f B a block (budget's %d)", g, blocks, per, cacheBytesPerBlock(g))
			if per > float64(cacheBytesPerBlock(g)) {
				t.Errorf("g=%d: %.1f B a block, over the budget's %d", g, per, cacheBytesPerBlock(g))
			}
		})
	}
}

// A replay whose caches could pass the budget is refused before anything is allocated, with
// the key, its value and the limit; the seed's 8 workers at block_size 1 on the whole
// toolagent-like trace were a Go out-of-memory crash after 17 s.
func TestCacheBudgetRefusesBeforeAllocating(t *testing.T) {
	tr := syntheticTrace(600, 7)
	cfg := Config{Workers: 8, Worker: deployment(3_469_760, 16384, 256), Router: router.DefaultConfig(), ReplayConcurrency: 32, Seed: 1}
	cfg.Worker.BlockSize, cfg.Router.BlockSize = 1, 1
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := New(cfg, &fakeTimer{base: 100, perToken: 1}, tr)
	runtime.ReadMemStats(&after)
	want := "block_size: 1 tokens makes the KV caches of this replay up to 5080573 blocks (the smaller of 8 workers × num_gpu_blocks 3469760 and the 5080573 blocks its 600 requests fill), about 1472 MiB, over the 384 MiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v\nwant %s…", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("allocated %d KB before refusing", alloc>>10)
	}
	cfg.Worker.NumGPUBlocks = 100_000 // 8 × 100,000 blocks: 232 MiB
	if _, err := New(cfg, &fakeTimer{base: 100, perToken: 1}, tr); err != nil {
		t.Errorf("a fleet of 800,000 blocks: %v", err)
	}
}
