package engine

import (
	"context"
	"testing"

	"github.com/routerlab/routerlab/trace"
)

// A replay reports its progress through the context: counts that never fall, end at every
// request, come coarse (not per event), and leave the report byte-identical to a replay
// without a listener.
func TestProgressLeavesTheReplayAlone(t *testing.T) {
	tr, err := trace.Load("builtin:toolagent", trace.DefaultBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	tr = tr.First(3000)
	cfg, mw := seedConfig(t)
	cfg.RecordRequests = true
	want, err := Replay(context.Background(), cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	var calls, last, total int
	ctx := WithProgress(context.Background(), func(done, all int) {
		if done < last || done > all {
			t.Fatalf("progress %d of %d after %d", done, all, last)
		}
		calls++
		last, total = done, all
	})
	got, err := Replay(ctx, cfg, mw, tr)
	if err != nil {
		t.Fatal(err)
	}
	if reportJSON(t, got) != reportJSON(t, want) {
		t.Fatal("a replay with a progress listener reports differently")
	}
	if last != 3000 || total != 3000 {
		t.Errorf("last progress %d of %d, want 3000 of 3000", last, total)
	}
	// Coarse: a call per runChunk events, far fewer than the requests' events.
	if calls < 2 || calls > 3000/10 {
		t.Errorf("%d progress calls for 3000 requests", calls)
	}
}
