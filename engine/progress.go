package engine

import "context"

// Progress receives a replay's completed requests out of all it will complete, from the
// goroutine running the replay. It must return quickly and must not touch the simulation.
type Progress func(done, total int)

type progressKey struct{}

// WithProgress returns ctx carrying f, which Run then calls between chunks of runChunk events
// (coarse: about a hundred times a second on a long replay) and once at the end. It is read
// where Run already checks ctx for cancellation, so it costs the event loop nothing and
// changes no result. A context value rather than a Config field: Config is serialised and
// compared (sweep task keys), a callback is neither.
func WithProgress(ctx context.Context, f Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressOf(ctx context.Context) Progress {
	f, _ := ctx.Value(progressKey{}).(Progress)
	return f
}
