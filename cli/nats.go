package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/routerlab/routerlab/natsweep"
)

// natsFlags are the standard NATS connection settings of `sweep --nats` and `worker`.
type natsFlags struct{ c natsweep.Conn }

// The environment variables that name a NATS credentials or NKey seed file when the flag
// is not given: a fleet's machines set them once, and command lines (seen by every user in
// ps) carry no secret. Files, not secrets, so the help may show them.
const (
	envNATSCreds = "ROUTERLAB_NATS_CREDS"
	envNATSNKey  = "ROUTERLAB_NATS_NKEY"
)

func (n *natsFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&n.c.URL, "nats", "", what+" (nats://host:4222; user:password@ or a token in the URL, tls:// for TLS)")
	fs.StringVar(&n.c.Creds, "nats-creds", os.Getenv(envNATSCreds), "NATS credentials file (JWT and NKey seed; default $"+envNATSCreds+")")
	fs.StringVar(&n.c.NKey, "nats-nkey", os.Getenv(envNATSNKey), "NATS NKey seed file (a user seed, as nk -gen user writes; default $"+envNATSNKey+"); see docs/trust.md")
	fs.StringVar(&n.c.CA, "nats-ca", "", "PEM file of the CA that signed the NATS server's certificate")
	fs.StringVar(&n.c.Cert, "nats-cert", "", "client certificate (PEM) for a NATS server that verifies clients")
	fs.StringVar(&n.c.Key, "nats-key", "", "key of --nats-cert (PEM)")
}

func newWorkerCmd() *cobra.Command {
	var n natsFlags
	var opt natsweep.WorkerOptions
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run sweep simulations from a NATS JetStream work queue (see sweep --nats)",
		Long: `worker connects to a NATS server with JetStream, pulls the simulation tasks that
'routerlab sweep --nats' publishes, runs them (--parallel at once), publishes each result
and acknowledges the task. A worker that stops mid-task leaves it to be redelivered to
another after --ack-wait. A worker takes only the tasks of sweeps whose simulator digest
(routerlab --version) is its own: a build from other code is refused by the sweep, which
names it in its status line and carries on with the workers that match. Logs one line per
task on stderr; stop it with ctrl+c.`,
		Example: `  routerlab worker --nats nats://10.0.0.5:4222 --nats-nkey worker.nk --parallel 8   # server: examples/nats-server.conf
  routerlab worker --nats tls://nats.example.com:4222 --nats-creds worker.creds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n.c.URL == "" {
				return errors.New("--nats: the NATS server's URL is required")
			}
			if opt.Parallel < 1 {
				return fmt.Errorf("--parallel: %d must be between 1 and %d", opt.Parallel, natsweep.MaxParallel)
			}
			if opt.AckWait < natsweep.MinAckWait {
				return fmt.Errorf("--ack-wait: %s must be at least %s", opt.AckWait, natsweep.MinAckWait)
			}
			if err := opt.Check(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opt.Log = cmd.ErrOrStderr()
			return natsweep.RunWorker(ctx, n.c, opt)
		},
	}
	n.register(cmd.Flags(), "NATS server to take tasks from")
	fl := cmd.Flags()
	fl.IntVar(&opt.Parallel, "parallel", 1, fmt.Sprintf("simulations run at once (one per core is right for a dedicated machine; at most %d)", natsweep.MaxParallel))
	fl.StringVar(&opt.Name, "name", "", "worker name in logs and at the sweep (default host-pid)")
	fl.DurationVar(&opt.AckWait, "ack-wait", natsweep.DefaultAckWait, "how long a silent worker's task waits before it goes to another worker (at least 1s)")
	return cmd
}
