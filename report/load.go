package report

import (
	"fmt"
	"strconv"

	"github.com/routerlab/routerlab/engine"
)

// LoadSection adds "Where decode time goes" to a replay's page when the replay accounted for
// it (engine.Config.LoadReport): the decode stall behind prefill and in queues, its share of
// TPOT, and how evenly decode sequences and KV blocks sat on the workers.
func LoadSection(pg *Page, s engine.Summary) {
	l := s.Load
	if l == nil {
		return
	}
	pg.Heading("Where decode time goes")
	pg.Para("%s of mean TPOT %.2f ms is decode stall: %.1f %% (tokens waiting behind prompt chunks in mixed steps, %.1f ms per request, and in worker queues after a preemption, %.1f ms per request). %.1f %% of steps were mixed.",
		f2(l.MeanTPOTStallMS)+" ms", s.MeanTPOTMS, 100*l.TPOTStallShare, l.MeanDecodeStallMS, l.MeanQueueStallMS, 100*l.MixedSteps)
	pg.Para("Load imbalance (busiest worker ÷ mean, over the run): decode sequences %.3f, KV blocks in use %.3f.%s",
		l.DecodeImbalance, l.BlockImbalance, queuedNote(l.RouterQueued))
	rows := make([][]string, len(l.Workers))
	for i, w := range l.Workers {
		rows[i] = []string{strconv.Itoa(i), f2(w.MeanDecodes), f1(w.MeanKVBlocks)}
	}
	pg.Table([]string{"worker", "mean decode sequences", "mean KV blocks in use"}, rows)
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func queuedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %d requests waited in the router queue.", n)
}
