package teadrive

import (
	"errors"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// counter counts the messages it sees and asks for another until it reaches its limit.
type counter struct{ seen, limit int }

type tick struct{}

func (c counter) Init() tea.Cmd { return nil }

func (c counter) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tick); !ok {
		return c, nil
	}
	c.seen++
	if c.seen < c.limit {
		return c, tea.Batch(func() tea.Msg { return tick{} }, nil)
	}
	return c, tea.Quit
}

func (c counter) View() tea.View { return tea.NewView("") }

func TestRunFollowsCommandsToTheEnd(t *testing.T) {
	m, err := Run(counter{limit: 50}, func() tea.Msg { return tick{} })
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(counter).seen; got != 50 {
		t.Fatalf("seen %d messages, want 50", got)
	}
}

func TestRunReportsALoopThatNeverSettles(t *testing.T) {
	_, err := Run(counter{limit: 1 << 30}, func() tea.Msg { return tick{} })
	if !errors.Is(err, ErrUnsettled) {
		t.Fatalf("err = %v, want ErrUnsettled", err)
	}
}
