package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/routerlab/routerlab/internal/teadrive"
)

// drive runs cmd and every command its messages lead to, synchronously, feeding each
// message back into m, until nothing is left — the program loop without a terminal.
func drive(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if _, err := teadrive.Run(m, cmd); err != nil {
		t.Fatal(err)
	}
}
