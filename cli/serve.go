package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/log/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	wishtea "charm.land/wish/v2/bubbletea"
	"charm.land/wish/v2/logging"
	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	gossh "golang.org/x/crypto/ssh"

	"github.com/routerlab/routerlab/config"
	"github.com/routerlab/routerlab/themes"
	"github.com/routerlab/routerlab/tui"
	"github.com/routerlab/routerlab/tui/backend"
)

// serveOptions are the serve command's flags.
type serveOptions struct {
	addr             string
	hostKey          string
	authorizedKeys   string // operators' keys
	viewerKeys       string // viewers' keys ("" = no viewers)
	noAuth           bool
	handshakeTimeout time.Duration
	idleTimeout      time.Duration
	maxSessions      int    // authenticated connections at once
	maxStartups      string // sshd's MaxStartups begin:rate:full for unauthenticated connections
	maxUnauthPerAddr int    // unauthenticated connections from one client address
	penaltyExempt    string // addresses PerSourcePenalties never penalises (a from= pattern-list)
	// dropSeed seeds MaxStartups' random early drop (0: a random seed) and clock is the
	// penalties' clock (nil: time.Now): tests set both.
	dropSeed  uint64
	clock     func() time.Time
	maxSweeps int    // server sweeps running at once; more wait in a queue
	runs      string // parent directory of the server sweeps' run directories
	// experimentArgs are the flags that made the experiment (config, trace, overrides), for
	// the replay command an explorer's `y` copies.
	experimentArgs []string
}

// Defaults of the serve limits, as docs/team.md documents them.
const (
	defaultHandshakeTimeout = 30 * time.Second
	defaultIdleTimeout      = 30 * time.Minute
	defaultMaxSessions      = 64
	defaultMaxUnauthPerAddr = 8
	// defaultPenaltyExempt is where serve listens by default and where every local user and
	// every tunnelled client comes from: penalising it would lock them all out (docs/trust.md).
	defaultPenaltyExempt = "127.0.0.0/8,::1"
	defaultMaxSweeps     = 2
)

// newServeCmd serves the explorer over SSH to the holders of authorized keys.
func newServeCmd() *cobra.Command {
	var x experimentFlags
	o := serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the explorer and its sweeps over SSH to operators and viewers with authorized keys",
		Long: `Serve listens for SSH connections and opens the explorer in each session, so a sweep can
be watched live from another machine: ssh -p 2222 localhost.

Clients authenticate with a public key. Keys in --authorized-keys (default
~/.ssh/authorized_keys) are operators; keys in --viewer-keys are viewers, who may browse
and watch but not start or cancel sweeps. Key options are honoured as sshd does: from=
(addresses, wildcards, CIDR, !negation), expiry-time=, and no-pty, restrict or command=,
whose sessions are refused (the explorer needs a terminal and runs no other command); a
key with an option routerlab does not implement is refused, with a log line naming it.
--no-auth lets anyone in as an operator and is refused unless the address is a loopback
one. The host key is kept in --host-key (created once, mode 0600; a key others may read is
refused, as sshd refuses it) so clients' known_hosts stay valid. Unauthenticated
connections have sshd's start-up limits, apart from the --max-sessions authenticated ones:
--max-startups (MaxStartups 10:30:100, random early drop) and PerSourcePenalties (an address
whose connections fail or never authenticate is refused for a while; loopback exempt,
--per-source-penalty-exempt); at --max-unauthenticated-per-address from one address the
one that has sent least gives way to a new one, so idle sockets cannot lock anyone out. Connections,
authentication results and disconnects are logged to stderr.

Sweeps belong to the server: one started with s keeps running when its session ends, every
session lists them in the Sweeps pane (tab) and watches one with enter. At most --max-sweeps
run at once, the rest queue; each writes a run directory under --runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			o.experimentArgs = experimentOnly(experimentArgs(cmd.Flags()))
			exp, err := x.experiment()
			if err != nil {
				return err
			}
			logger := newServeLogger(cmd.ErrOrStderr())
			l, err := net.Listen("tcp", o.addr)
			if err != nil {
				return fmt.Errorf("--ssh: %w", err)
			}
			jobs, err := newJobs(exp, x.requests, o)
			if err != nil {
				l.Close()
				return err
			}
			srv, err := newExplorerServer(exp, x.requests, o, l.Addr(), logger, jobs)
			if err != nil {
				l.Close()
				jobs.Shutdown()
				return err
			}
			start, err := startLine(o, l.Addr())
			if err != nil {
				l.Close()
				jobs.Shutdown()
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "routerlab: explorer on "+start+" (ctrl+c stops)")
			logger.Info("listening", "addr", "ssh://"+l.Addr().String(), "host_key", hostKeyFingerprint(o.hostKey))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = serveUntil(ctx, srv, l)
			stopped := jobs.Shutdown()
			shutdownReport(logger, cmd.OutOrStdout(), stopped, o.experimentArgs, jobs)
			return err
		},
	}
	x.register(cmd, "requests each explorer simulates (default: workload.search_requests, 2000)")
	fl := cmd.Flags()
	fl.StringVar(&o.addr, "ssh", "127.0.0.1:2222", "address to listen on for SSH")
	fl.StringVar(&o.hostKey, "host-key", defaultHostKey(), "SSH host key file (created with mode 0600 if missing)")
	fl.StringVar(&o.authorizedKeys, "authorized-keys", defaultAuthorizedKeys(), "authorized_keys file of the operators")
	fl.StringVar(&o.viewerKeys, "viewer-keys", "", "authorized_keys file of the viewers (watch only)")
	fl.BoolVar(&o.noAuth, "no-auth", false, "accept every client as an operator (loopback addresses only)")
	fl.DurationVar(&o.handshakeTimeout, "handshake-timeout", defaultHandshakeTimeout, "time a client has to authenticate")
	fl.DurationVar(&o.idleTimeout, "idle-timeout", defaultIdleTimeout, "close a connection with no traffic for this long")
	fl.IntVar(&o.maxSessions, "max-sessions", defaultMaxSessions, "authenticated connections held at once")
	fl.StringVar(&o.maxStartups, "max-startups", defaultMaxStartups.String(), "sshd's MaxStartups begin:rate:full: past begin connections still authenticating, a new one is dropped with probability rate % rising to 100 % at full")
	fl.IntVar(&o.maxUnauthPerAddr, "max-unauthenticated-per-address", defaultMaxUnauthPerAddr, "connections still authenticating held at once from one client address (the one that has sent least gives way to a new one)")
	fl.StringVar(&o.penaltyExempt, "per-source-penalty-exempt", defaultPenaltyExempt, `addresses sshd's PerSourcePenalties never refuses (pattern-list as in from=; none: every address, as sshd's default)`)
	fl.IntVar(&o.maxSweeps, "max-sweeps", defaultMaxSweeps, "server sweeps running at once (more are queued)")
	fl.StringVar(&o.runs, "runs", "runs", "directory under which each server sweep writes its run directory")
	return cmd
}

func defaultHostKey() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "routerlab", "ssh_host_ed25519")
}

// check refuses limits that would switch a protection off or allow nothing.
func (o serveOptions) check() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--handshake-timeout", o.handshakeTimeout}, {"--idle-timeout", o.idleTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %v: want a positive duration", d.flag, d.v)
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"--max-sessions", o.maxSessions}, {"--max-sweeps", o.maxSweeps}, {"--max-unauthenticated-per-address", o.maxUnauthPerAddr}} {
		if n.v < 1 {
			return fmt.Errorf("%s %d: want at least 1", n.flag, n.v)
		}
	}
	if _, err := parseMaxStartups(o.maxStartups); err != nil {
		return err
	}
	if _, err := exemptPatterns(o.penaltyExempt); err != nil {
		return err
	}
	return nil
}

// exemptPatterns reads --per-source-penalty-exempt: a pattern-list as from= takes, or
// "none" (sshd's default: every address may be penalised).
func exemptPatterns(list string) ([]string, error) {
	if list == "none" {
		return nil, nil
	}
	p, err := fromPatterns(list)
	if err != nil {
		return nil, fmt.Errorf("--per-source-penalty-exempt %q: %w", list, err)
	}
	return p, nil
}

// newJobs is the server's sweep registry: sweeps of exp searching on its first `requests`
// requests (as the explorers do), writing under o.runs.
func newJobs(exp *config.Experiment, requests int, o serveOptions) (*backend.Jobs, error) {
	sim, err := backend.NewSim(exp, requests)
	if err != nil {
		return nil, err
	}
	return backend.NewJobs(backend.NewSweeper(sim), exp.File.Name, o.runs, o.maxSweeps)
}

// newServeLogger writes one timestamped line per event to w. It is also made charm log's
// default, so what wish and its middleware log comes out in the same format.
func newServeLogger(w io.Writer) *log.Logger {
	l := log.NewWithOptions(w, log.Options{ReportTimestamp: true, TimeFormat: time.RFC3339, Prefix: "serve"})
	log.SetDefault(l)
	return l
}

// startLine is the server's start-up line: the address, the host key's fingerprint, and how
// many operator and viewer keys it accepts.
func startLine(o serveOptions, addr net.Addr) (string, error) {
	keys := "no authentication: every client is an operator"
	if !o.noAuth {
		acc, err := o.access(addr)
		if err != nil {
			return "", err
		}
		keys = fmt.Sprintf("%s, %s", plural(len(acc.operators), "operator key"), plural(len(acc.viewers), "viewer key"))
	}
	return fmt.Sprintf("ssh://%s · host key %s · %s", addr, hostKeyFingerprint(o.hostKey), keys), nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// hostKeyFingerprint is the SHA256 fingerprint clients see for the host key at path (the
// server has created it by now), or why there is none.
func hostKeyFingerprint(path string) string {
	pem, err := readlimit.ReadFile(path, 1<<20, "a host key")
	if err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	return gossh.FingerprintSHA256(signer.PublicKey())
}

// shutdownReport says, in the log and on standard output, that the server stopped, which
// running sweeps that cancelled and the command that resumes each.
func shutdownReport(logger *log.Logger, w io.Writer, stopped []tui.Job, args []string, jobs *backend.Jobs) {
	if len(stopped) == 0 {
		logger.Info("stopped: no sweep was running")
		return
	}
	for _, j := range stopped {
		resume := "(cannot rebuild its experiment)"
		if sets, err := jobs.ResumeSets(j.At); err == nil {
			cmd := append([]string{"routerlab", "sweep"}, args...)
			for _, s := range sets {
				cmd = append(cmd, "--set", s)
			}
			resume = shellJoin(append(cmd, "--out", j.Dir, "--resume"))
		}
		logger.Warn("stopped: sweep cancelled", "sweep", j.ID, "started_by", j.Starter, "evaluations", j.Evaluations, "dir", j.Dir, "resume", resume)
		fmt.Fprintf(w, "routerlab: cancelled server sweep #%d (%s, %d evaluations) in %s; resume with:\n  %s\n",
			j.ID, j.Starter, j.Evaluations, j.Dir, resume)
	}
}

// access reads the key files the options name, or none with --no-auth, which only a
// loopback address may use.
func (o serveOptions) access(bound net.Addr) (access, error) {
	if o.noAuth {
		if !isLoopback(bound) {
			return access{}, fmt.Errorf("--no-auth on %s: refused on a non-loopback address; use --authorized-keys", bound)
		}
		return access{}, nil
	}
	var a access
	var err error
	if o.authorizedKeys == "" {
		return access{}, errors.New("--authorized-keys: no file given (or --no-auth on a loopback address)")
	}
	if a.operators, err = loadKeyring(o.authorizedKeys); err != nil {
		return access{}, fmt.Errorf("--authorized-keys: %w (or --no-auth on a loopback address)", err)
	}
	if o.viewerKeys != "" {
		if a.viewers, err = loadKeyring(o.viewerKeys); err != nil {
			return access{}, fmt.Errorf("--viewer-keys: %w", err)
		}
	}
	return a, nil
}

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// newExplorerServer builds the SSH server bound at addr: public-key authentication with
// roles, the limits, the logs, and one explorer per session sized and coloured for the
// client's terminal.
func newExplorerServer(exp *config.Experiment, requests int, o serveOptions, addr net.Addr, logger *log.Logger, jobs *backend.Jobs) (*explorerServer, error) {
	acc, err := o.access(addr)
	if err != nil {
		return nil, err
	}
	if !isLoopback(addr) {
		logger.Warn("listening on a non-loopback address: reachable from other machines", "addr", addr)
	}
	if o.noAuth {
		logger.Warn("no authentication: every client is an operator", "addr", addr)
	}
	// The key's folder is left as found: keygen, creating a missing key, makes the folder
	// 0700 (charmbracelet/keygen v0.5.4 keygen.go), which would change a shared folder's
	// mode without a word. A folder serve creates is 0700.
	keyDir := filepath.Dir(o.hostKey)
	dirMode := os.FileMode(0)
	if st, err := os.Stat(keyDir); err == nil {
		dirMode = st.Mode().Perm()
	}
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return nil, fmt.Errorf("--host-key: %w", err)
	}
	if st, err := os.Stat(o.hostKey); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("--host-key: %s is accessible by others (mode %04o): chmod 600 it (sshd refuses such a key too)",
			o.hostKey, st.Mode().Perm())
	}
	startups, err := parseMaxStartups(o.maxStartups)
	if err != nil {
		return nil, err
	}
	exempt, err := exemptPatterns(o.penaltyExempt)
	if err != nil {
		return nil, err
	}
	seed, clock := o.dropSeed, o.clock
	if seed == 0 {
		seed = rand.Uint64() // sshd draws from arc4random: unpredictable to a client
	}
	if clock == nil {
		clock = time.Now
	}
	lim := newConnLimits(startups, o.maxUnauthPerAddr, o.maxSessions, rand.New(rand.NewPCG(seed, 0x55d)),
		newPenalties(defaultPenalties, exempt, clock), logger)
	progs := &programs{running: map[*tea.Program]<-chan struct{}{}}
	handler := func(s ssh.Session) (tea.Model, []tea.ProgramOption) {
		palettes, err := themes.Cycle(sessionEnv(s))
		if err != nil {
			wish.Fatalln(s, "routerlab:", err)
			return nil, nil
		}
		r, _, _ := acc.roleOf(s.PublicKey()) // authentication let only known keys in
		caller := backend.Caller{Name: s.User(), Operator: r == operator}
		if k := s.PublicKey(); k != nil {
			caller.Name += " " + fingerprint(k)
		}
		m, _, err := backend.NewExplorer(exp, backend.ExplorerOptions{Requests: requests, Palettes: palettes,
			Jobs: jobs.For(caller), Replay: replayCommand(o.experimentArgs)}) // sweeps are the server's: nothing to wait for
		if err != nil {
			wish.Fatalln(s, "routerlab:", err)
			return nil, nil
		}
		// The server owns the signals: its ctrl+c shuts the sessions down cleanly (wish quits
		// each program as its session ends), instead of every program catching the SIGINT and
		// ending with an error.
		return m, []tea.ProgramOption{tea.WithoutSignalHandler()}
	}
	opts := []ssh.Option{
		wish.WithHostKeyPath(o.hostKey),
		wish.WithIdleTimeout(o.idleTimeout),
		func(s *ssh.Server) error { s.HandshakeTimeout = o.handshakeTimeout; return nil },
		lim.option(),
		wish.WithMiddleware(
			restoreTerminal, // innermost: runs when the explorer's program has ended
			wishtea.MiddlewareWithProgramHandler(progs.handler(handler)),
			activeterm.Middleware(),
			sessionGate(acc, lim, logger),
			logging.StructuredMiddlewareWithLogger(logger, log.InfoLevel),
		),
	}
	if !o.noAuth {
		opts = append(opts, wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			lim.attempt(ctx)
			r, ak, ok := acc.roleOf(key)
			if !ok {
				logger.Warn("auth refused: unknown key", "user", ctx.User(), "key", fingerprint(key), "remote", ctx.RemoteAddr())
				return false
			}
			var ip net.IP
			if a, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
				ip = a.IP
			}
			if why, ok := ak.allows(ip, time.Now()); !ok {
				logger.Warn("auth refused: "+why, "user", ctx.User(), "key", fingerprint(key), "line", ak.where, "remote", ctx.RemoteAddr())
				return false
			}
			if !lim.promote(ctx) {
				logger.Warn("auth refused: session cap reached", "user", ctx.User(), "key", fingerprint(key), "remote", ctx.RemoteAddr(), "max_sessions", o.maxSessions)
				return false
			}
			logger.Info("auth accepted", "user", ctx.User(), "key", fingerprint(key), "remote", ctx.RemoteAddr(), "role", r)
			return true
		}))
	}
	// wish.WithHostKeyPath creates a missing key with mode 0600 and reuses it afterwards.
	srv, err := wish.NewServer(opts...)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(keyDir); err == nil && dirMode != 0 && st.Mode().Perm() != dirMode {
		if err := os.Chmod(keyDir, dirMode); err != nil {
			return nil, fmt.Errorf("--host-key: restoring %s's mode %04o: %w", keyDir, dirMode, err)
		}
	}
	return &explorerServer{Server: srv, limits: lim, programs: progs}, nil
}

// sessionGate runs before the explorer: it moves a --no-auth connection to a session slot
// (key authentication did so already) and refuses the session of a key whose options allow
// no terminal or force a command, saying why on the client's screen and in the log.
func sessionGate(acc access, lim *connLimits, logger *log.Logger) wish.Middleware {
	return func(next ssh.Handler) ssh.Handler {
		return func(s ssh.Session) {
			if !lim.promote(s.Context()) {
				logger.Warn("session refused: session cap reached", "user", s.User(), "remote", s.RemoteAddr())
				wish.Fatalln(s, "routerlab: the server's session cap is reached; try again later")
				return
			}
			if _, ak, _ := acc.roleOf(s.PublicKey()); ak != nil {
				if why := ak.sessionRefusal(); why != "" {
					logger.Warn("session refused: "+why, "user", s.User(), "key", fingerprint(s.PublicKey()), "remote", s.RemoteAddr())
					wish.Fatalln(s, "routerlab: "+why)
					return
				}
			}
			next(s)
		}
	}
}

// sessionEnv looks up the client's environment variables (NO_COLOR, ROUTERLAB_THEME).
func sessionEnv(s ssh.Session) func(string) string {
	return func(k string) string {
		for _, kv := range s.Environ() {
			if len(kv) > len(k) && kv[:len(k)] == k && kv[len(k)] == '=' {
				return kv[len(k)+1:]
			}
		}
		return ""
	}
}

// explorerServer is the SSH server with the connection limits its listener admits by and
// the explorers its sessions run.
type explorerServer struct {
	*ssh.Server
	limits   *connLimits
	programs *programs
}

// restoreTerminal ends the alternate screen and shows the cursor once a session's explorer
// has ended, before the session closes: a program quit by a stopping server may not get to
// write its own restoration (the cursor stayed hidden in the e2e check, .ci/serve-stop-e2e.sh),
// and after a normal quit it repeats what the program wrote, harmlessly.
func restoreTerminal(next ssh.Handler) ssh.Handler {
	return func(s ssh.Session) {
		if _, _, ok := s.Pty(); ok {
			io.WriteString(s, ansi.ResetModeAltScreenSaveCursor+ansi.ShowCursor)
		}
		next(s)
	}
}

// programs are the sessions' running explorers, so that a stopping server quits each one:
// a quit program restores its client's terminal (alternate screen off, cursor shown) before
// its session closes, where a dropped connection left the client's terminal in the explorer's
// alternate screen with the cursor hidden.
type programs struct {
	mu      sync.Mutex
	running map[*tea.Program]<-chan struct{} // closed when the program's session has ended
	stopped bool
}

// handler makes each session's program as wish's default handler does, and tracks it.
func (ps *programs) handler(h wishtea.Handler) wishtea.ProgramHandler {
	return func(s ssh.Session) *tea.Program {
		m, opts := h(s)
		if m == nil {
			return nil
		}
		p := tea.NewProgram(m, append(opts, wishtea.MakeOptions(s)...)...)
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.stopped {
			return nil // the server is stopping: no new explorer
		}
		// The session's context (its connection's) ends after wish's handler has returned from
		// p.Run, the terminal restored: tea.Program.Wait may not be called before Run starts (it
		// reads a channel Run creates), so the connection, not the program, says when it is over.
		done := s.Context().Done()
		ps.running[p] = done
		go func() {
			<-done
			ps.mu.Lock()
			delete(ps.running, p)
			ps.mu.Unlock()
		}()
		return p
	}
}

// quitAll quits every running program and waits, up to the deadline of ctx, for them to
// have written their terminals' restoration.
func (ps *programs) quitAll(ctx context.Context) {
	ps.mu.Lock()
	ps.stopped = true
	running := make([]*tea.Program, 0, len(ps.running))
	ended := make([]<-chan struct{}, 0, len(ps.running))
	for p, done := range ps.running {
		running = append(running, p)
		ended = append(ended, done)
	}
	ps.mu.Unlock()
	for _, p := range running {
		p.Quit()
	}
	for _, done := range ended {
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// serveUntil serves on l until ctx ends, then closes the server, giving sessions a moment
// to leave their terminals clean.
func serveUntil(ctx context.Context, srv *explorerServer, l net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(srv.limits.listener(l)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.programs.quitAll(sctx)
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		// A Shutdown before Serve has registered its listener (a stop right after the start)
		// leaves Serve accepting: closing the listener ends it either way.
		l.Close()
		if err := <-errc; err != nil && !errors.Is(err, ssh.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
}
