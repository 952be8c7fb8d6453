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

// progressDelay is how long work runs before its progress shows: shorter work prints
// nothing, so quick commands and their tests see no progress at all.
var progressDelay = time.Second

// progressTick is how often a terminal's bar is redrawn.
const progressTick = 100 * time.Millisecond

// progressLine shows the progress of long work on w (standard error, never standard output:
// `--format json | jq` stays clean) once it has run progressDelay: on a terminal a bubbles
// progress bar redrawn in place and cleared at the end; elsewhere a plain line at each tenth.
// Set only stores two counts; the drawing runs on a goroutine of its own, so the work never
// waits on the terminal.
type progressLine struct {
	done, total atomic.Int64
	quit        chan struct{}
	stop        sync.Once
	wg          sync.WaitGroup
}

// startProgress starts showing what's progress counted in unit ("requests").
func startProgress(w io.Writer, tty bool, what, unit string) *progressLine {
	p := &progressLine{quit: make(chan struct{})}
	start := time.Now()
	p.wg.Go(func() {
		select {
		case <-p.quit:
			// Work that ran past the delay shows its end even when Stop won the race
			// with the timer (a zero delay in tests).
			if time.Since(start) < progressDelay {
				return
			}
		case <-time.After(progressDelay):
		}
		bar := bubbles.New(bubbles.WithWidth(40), bubbles.WithDefaultBlend())
		shown, drawn := -1, false
		draw := func() {
			d, t := p.done.Load(), p.total.Load()
			if t == 0 {
				return
			}
			if tty {
				fmt.Fprintf(w, "\r%s %s %d of %d %s\x1b[K", what, bar.ViewAs(float64(d)/float64(t)), d, t, unit)
				drawn = true
				return
			}
			if tenth := int(10 * d / t); tenth > shown {
				shown = tenth
				fmt.Fprintf(w, "%s: %d %% (%d of %d %s)\n", what, 100*d/t, d, t, unit)
			}
		}
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			select {
			case <-p.quit:
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
	return p
}

// Set records done of total.
func (p *progressLine) Set(done, total int) {
	p.done.Store(int64(done))
	p.total.Store(int64(total))
}

// Stop draws the last count (piped) or clears the bar (terminal) and returns when w is left
// alone; again, it does nothing.
func (p *progressLine) Stop() {
	p.stop.Do(func() { close(p.quit) })
	p.wg.Wait()
}

// showProgress returns ctx carrying a listener for the replay run under it
// (engine.WithProgress), shown as startProgress shows it, and a stop function to call when
// the replay returns.
func showProgress(ctx context.Context, w io.Writer, tty bool, what string) (context.Context, func()) {
	p := startProgress(w, tty, what, "requests")
	return engine.WithProgress(ctx, p.Set), p.Stop
}
