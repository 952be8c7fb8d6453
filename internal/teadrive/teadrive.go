// Package teadrive runs a bubbletea model's commands synchronously, for tests, benchmarks and
// generated screens: the program loop without a terminal, so a background run completes
// before the next key.
package teadrive

import (
	"errors"

	tea "charm.land/bubbletea/v2"
)

// maxCommands bounds one Run: a command loop that never settles is a bug to report, not a
// test that hangs.
const maxCommands = 10000

// ErrUnsettled is returned when the commands go on past maxCommands.
var ErrUnsettled = errors.New("teadrive: the command loop does not settle")

// Run runs cmd and every command its messages lead to, in order, feeding each message back
// into m until nothing is left, and returns the model as the last Update left it.
func Run(m tea.Model, cmd tea.Cmd) (tea.Model, error) {
	queue := []tea.Cmd{cmd}
	for n := 0; len(queue) > 0; n++ {
		if n == maxCommands {
			return m, ErrUnsettled
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			queue = append(queue, next)
		}
	}
	return m, nil
}
