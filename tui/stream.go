package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"
)

// streamMsg carries one item of a background producer to its owner, tagged with the owner's
// generation at the time the producer started: an owner that has moved on drops it.
type streamMsg[T any] struct {
	gen  uint64
	item T
	done bool  // the producer returned; err is its error
	err  error // only with done
	next <-chan streamMsg[T]
}

// stream runs produce in the background and returns the Cmd that delivers its first message;
// the owner asks for each following one with waitStream(msg.next). Items emitted with
// droppable set are skipped while the UI has not taken the previous one, so progress frames
// never slow the producer; the others, and the final done, wait for the UI or for ctx.
func stream[T any](ctx context.Context, gen uint64, produce func(ctx context.Context, emit func(item T, droppable bool)) error) tea.Cmd {
	return func() tea.Msg {
		ch := make(chan streamMsg[T], 1)
		go func() {
			defer close(ch)
			err := produce(ctx, func(item T, droppable bool) {
				m := streamMsg[T]{gen: gen, item: item}
				if droppable {
					select {
					case ch <- m:
					default:
					}
					return
				}
				select {
				case ch <- m:
				case <-ctx.Done():
				}
			})
			select {
			case ch <- streamMsg[T]{gen: gen, done: true, err: err}:
			case <-ctx.Done():
			}
		}()
		return receive(ch)
	}
}

// waitStream delivers the next message of a stream.
func waitStream[T any](ch <-chan streamMsg[T]) tea.Cmd {
	return func() tea.Msg { return receive(ch) }
}

func receive[T any](ch <-chan streamMsg[T]) tea.Msg {
	m, ok := <-ch
	if !ok {
		return nil // cancelled: the owner has already moved on
	}
	m.next = ch
	return m
}
