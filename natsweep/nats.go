package natsweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Conn holds the standard NATS connection settings beyond the URL (which may itself carry
// user:password@ or a token, and tls:// for TLS).
type Conn struct {
	URL   string
	Creds string // credentials file (JWT + NKey seed), as issued by nsc
	NKey  string // NKey seed file (a user seed, SU…), for servers that list users by public NKey
	CA    string // PEM file of the CA that signed the server's certificate
	Cert  string // client certificate and key (PEM) for servers that verify clients
	Key   string
}

// dial connects as name and returns the connection and its JetStream context. The server's
// complaints (a permission the server's configuration does not grant, above all) go to
// logf: without it they would only show as requests that time out.
func (c Conn) dial(name string, logf func(format string, args ...any)) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { logf("%v", err) })} // err says "nats: …"
	if c.Creds != "" && c.NKey != "" {
		return nil, nil, errors.New("nats: a credentials file and an NKey seed file both given: a connection authenticates with one")
	}
	for _, f := range []struct{ flag, path string }{{"--nats-creds", c.Creds}, {"--nats-nkey", c.NKey}, {"--nats-ca", c.CA}, {"--nats-cert", c.Cert}, {"--nats-key", c.Key}} {
		if err := smallFile(f.flag, f.path); err != nil {
			return nil, nil, err
		}
	}
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		// The option signs the server's nonce; errors name the file, never its content.
		opt, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, nil, fmt.Errorf("nats: NKey seed file %s: %w", c.NKey, err)
		}
		opts = append(opts, opt)
	}
	if c.CA != "" {
		opts = append(opts, nats.RootCAs(c.CA))
	}
	if c.Cert != "" || c.Key != "" {
		opts = append(opts, nats.ClientCert(c.Cert, c.Key))
	}
	if err := checkURLs(c.URL); err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats: connect to %s: %s", Redact(c.URL), scrub(err.Error(), c.URL))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	return nc, js, nil
}

// MaxKeyFileBytes bounds the credential, key and certificate files a connection reads: the
// NATS client reads them whole, and each is a few kilobytes.
const MaxKeyFileBytes = 1 << 20

// smallFile checks that path (if given) is a regular file of at most MaxKeyFileBytes.
func smallFile(flag, path string) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", flag, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: %s is not a regular file", flag, path)
	case st.Size() > MaxKeyFileBytes:
		return fmt.Errorf("%s: %s has %d bytes, more than the %d a key or certificate file may have", flag, path, st.Size(), MaxKeyFileBytes)
	}
	return nil
}

// DefaultAckWait is how long a task may go without word from its worker before it is
// delivered to another. Busy workers report progress every third of it.
const DefaultAckWait = 30 * time.Second

// setup creates (or updates) the streams and the object stores. Only the coordinator calls
// it: a worker may not change a stream (examples/nats-server.conf), and one that starts
// first waits for a sweep to create them.
func setup(ctx context.Context, js jetstream.JetStream) error {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: TaskStream, Subjects: []string{taskSubject + ">"}, Retention: jetstream.WorkQueuePolicy,
	}); err != nil {
		return fmt.Errorf("nats: stream %s (is JetStream enabled? start the server with -js): %w", TaskStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: ResultStream, Subjects: []string{resultSubject + ">"}, MaxAge: 24 * time.Hour,
	}); err != nil {
		return fmt.Errorf("nats: stream %s: %w", ResultStream, err)
	}
	for _, cfg := range []jetstream.ObjectStoreConfig{{Bucket: TraceBucket}, {Bucket: ReportBucket, TTL: 24 * time.Hour}} {
		if _, err := js.CreateOrUpdateObjectStore(ctx, cfg); err != nil {
			return fmt.Errorf("nats: object store %s: %w", cfg.Bucket, err)
		}
	}
	return nil
}

// workQueue is the pull consumer shared by the workers of simulator sim: it delivers only
// that digest's tasks. The server forgets a digest's consumer a day after its last worker.
func workQueue(ctx context.Context, js jetstream.JetStream, sim string, ackWait time.Duration) (jetstream.Consumer, error) {
	name := WorkersConsumer + sim
	cons, err := js.CreateOrUpdateConsumer(ctx, TaskStream, jetstream.ConsumerConfig{
		Durable: name, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
		FilterSubject: taskSubject + sim + ".>", MaxAckPending: -1, InactiveThreshold: 24 * time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("nats: consumer %s: %w", name, err)
	}
	return cons, nil
}

// heartbeat is what a worker announces every heartbeatEvery on heartbeatSubject.
type heartbeat struct {
	Worker    string `json:"worker"`
	Simulator string `json:"simulator"` // the worker's simulator digest
	Parallel  int    `json:"parallel"`
	Busy      int    `json:"busy"`
	Serving   bool   `json:"serving"` // joined its simulator's work queue
}

const heartbeatEvery = time.Second

// userinfo locates the credentials of one URL: p[start:at] is its text between "://" (or the
// start) and its last "@"; false without an "@" there.
func userinfo(p string) (start, at int, ok bool) {
	if j := strings.Index(p, "://"); j >= 0 {
		start = j + 3
	}
	at = strings.LastIndex(p, "@")
	return start, at, at >= start
}

// Redact hides the credentials of a NATS URL (or a comma-separated list of them) so it can be
// shown: user:password@ becomes user:xxxxx@ and a token@ becomes xxxxx@. Everything else is
// kept, so the redacted URL still says which server.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		start, at, ok := userinfo(p)
		if !ok {
			continue
		}
		user := "xxxxx"
		if name, _, ok := strings.Cut(p[start:at], ":"); ok {
			user = name + ":xxxxx"
		}
		parts[i] = p[:start] + user + p[at:]
	}
	return strings.Join(parts, ",")
}
