package natsweep

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// roles are the connection settings of a test server's two users: the coordinator and the
// workers, each with its own NKey.
type roles struct{ co, wk Conn }

// startServer runs an embedded NATS server with JetStream on a loopback port, configured by
// examples/nats-server.conf (the documented one) with a fresh NKey per role.
func startServer(t *testing.T) roles {
	t.Helper()
	dir := t.TempDir()
	seeds := map[string]string{}
	for _, role := range []string{"COORDINATOR", "WORKER"} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		seeds[role] = filepath.Join(dir, role+".nk")
		if err := os.WriteFile(seeds[role], seed, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("ROUTERLAB_"+role+"_NKEY", pub)
	}
	opts, err := server.ProcessConfigFile(filepath.Join("..", "examples", "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, t.TempDir(), true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	t.Cleanup(s.Shutdown)
	return roles{co: Conn{URL: s.ClientURL(), NKey: seeds["COORDINATOR"]}, wk: Conn{URL: s.ClientURL(), NKey: seeds["WORKER"]}}
}

// publishResult publishes res on sweep's result subject as a worker would.
func publishResult(t *testing.T, c roles, sweep string, res Result) {
	t.Helper()
	nc, js, err := c.wk.dial("test worker", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, _ := json.Marshal(res)
	if _, err := js.Publish(context.Background(), resultSubject+sweep, b); err != nil {
		t.Fatal(err)
	}
}

// testLog writes a coordinator's status lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
