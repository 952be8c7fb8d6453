package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	wishtea "charm.land/wish/v2/bubbletea"
	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui/backend"
)

// runExplorer opens the terminal explorer on f, simulating the first `requests` requests
// of its trace (0: workload.search_requests), in the terminal behind stdin and stdout.
func runExplorer(f *config.File, requests int, stdin io.Reader, stdout io.Writer) error {
	exp, err := config.NewExperiment(f)
	if err != nil {
		return err
	}
	palettes, err := themes.Cycle(os.Getenv)
	if err != nil {
		return err
	}
	m, err := backend.NewExplorer(exp, requests, palettes)
	if err != nil {
		return err
	}
	_, err = tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout)).Run()
	return err
}

// newServeCmd serves the explorer over SSH: every session gets its own explorer (its own
// knobs, runs and sweep) on one shared, read-only experiment.
func newServeCmd() *cobra.Command {
	var x experimentFlags
	var addr, hostKey string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the explorer over SSH, one independent explorer per session",
		Long: `Serve listens for SSH connections and opens the explorer in each session, so a sweep
can be watched live from another machine: ssh -p 2222 localhost. Any user name and key is
accepted; bind to a trusted address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exp, err := x.experiment()
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--ssh: %w", err)
			}
			srv, err := newExplorerServer(exp, x.requests, hostKey)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "routerlab: explorer on ssh://%s (ctrl+c stops)\n", l.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveUntil(ctx, srv, l)
		},
	}
	x.register(cmd.Flags(), "requests each explorer simulates (default: workload.search_requests, 2000)")
	cmd.Flags().StringVar(&addr, "ssh", "127.0.0.1:2222", "address to listen on for SSH")
	cmd.Flags().StringVar(&hostKey, "host-key", defaultHostKey(), "SSH host key file (created if missing)")
	return cmd
}

func defaultHostKey() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "routerlab", "ssh_host_ed25519")
}

// newExplorerServer builds the SSH server; each session runs its own explorer, sized and
// coloured for the client's terminal.
func newExplorerServer(exp *config.Experiment, requests int, hostKey string) (*ssh.Server, error) {
	if err := os.MkdirAll(filepath.Dir(hostKey), 0o700); err != nil {
		return nil, fmt.Errorf("--host-key: %w", err)
	}
	handler := func(s ssh.Session) (tea.Model, []tea.ProgramOption) {
		env := func(k string) string {
			for _, kv := range s.Environ() {
				if len(kv) > len(k) && kv[:len(k)] == k && kv[len(k)] == '=' {
					return kv[len(k)+1:]
				}
			}
			return ""
		}
		palettes, err := themes.Cycle(env)
		if err != nil {
			wish.Fatalln(s, "routerlab:", err)
			return nil, nil
		}
		m, err := backend.NewExplorer(exp, requests, palettes)
		if err != nil {
			wish.Fatalln(s, "routerlab:", err)
			return nil, nil
		}
		return m, nil
	}
	return wish.NewServer(
		wish.WithHostKeyPath(hostKey),
		wish.WithMiddleware(wishtea.Middleware(handler), activeterm.Middleware()),
	)
}

// serveUntil serves on l until ctx ends, then closes the server, giving sessions a moment
// to leave their terminals clean.
func serveUntil(ctx context.Context, srv *ssh.Server, l net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if err := <-errc; err != nil && !errors.Is(err, ssh.ErrServerClosed) {
			return err
		}
		return nil
	}
}
