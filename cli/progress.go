package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	bubbles "charm.land/bubbles/v2/progress"

	"github.com/routerlab/routerlab/engine"
)

// progressDelay is how long a replay runs before its progress shows: shorter work prints
// nothing, so quick commands and their tests see no progress at all.
var progressDelay = time.Second

// progressTick is how often a terminal's bar is redrawn.
const progressTick = 100 * time.Millisecond

// showProgress returns ctx carrying a listener for the replay run under it (engine.WithProgress)
// and a stop function to call when the replay returns. Once the replay has run progressDelay,
// w (standard error, never standard output: `--format json | jq` stays clean) shows it: on a
// terminal a bubbles progress bar redrawn in place and cleared at the end; elsewhere a plain
// line at each tenth of the requests. The listener only stores two counts; the drawing runs
// on a goroutine of its own, so the replay never waits on the terminal.
func showProgress(ctx context.Context, w io.Writer, tty bool, what string) (context.Context, func()) {
	var done, total atomic.Int64
	ctx = engine.WithProgress(ctx, func(d, t int) {
		done.Store(int64(d))
		total.Store(int64(t))
	})
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-quit:
			return
		case <-time.After(progressDelay):
		}
		bar := bubbles.New(bubbles.WithWidth(40), bubbles.WithDefaultBlend())
		shown, drawn := -1, false
		draw := func() {
			d, t := done.Load(), total.Load()
			if t == 0 {
				return
			}
			if tty {
				fmt.Fprintf(w, "\r%s %s %d of %d requests\x1b[K", what, bar.ViewAs(float64(d)/float64(t)), d, t)
				drawn = true
				return
			}
			if tenth := int(10 * d / t); tenth > shown {
				shown = tenth
				fmt.Fprintf(w, "%s: %d %% (%d of %d requests)\n", what, 100*d/t, d, t)
			}
		}
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				draw()
				if drawn {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-tick.C:
				draw()
			}
		}
	})
	return ctx, func() {
		close(quit)
		wg.Wait()
	}
}
