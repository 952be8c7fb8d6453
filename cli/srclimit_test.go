package cli

import (
	"bufio"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// MaxStartups 10:30:100 drops nothing below 10 authenticating, 30 % at 10, rising in sshd's
// integer arithmetic to 100 % at 100; a seeded generator draws the same drops every run, and
// about as many as the curve says.
func TestMaxStartupsDropCurve(t *testing.T) {
	m := defaultMaxStartups
	for _, c := range []struct{ startups, want int }{{0, 0}, {9, 0}, {10, 30}, {11, 30}, {12, 31}, {55, 65}, {99, 99}, {100, 100}, {500, 100}} {
		if got := m.dropPercent(c.startups); got != c.want {
			t.Errorf("dropPercent(%d) = %d, want %d", c.startups, got, c.want)
		}
	}
	if p := (maxStartups{5, 100, 50}).dropPercent(5); p != 100 {
		t.Errorf("rate 100 at begin: %d %%, want 100", p)
	}
	draw := func(seed uint64) (drops int, seq []bool) {
		rng := rand.New(rand.NewPCG(seed, 0x55d))
		for range 10000 {
			d := m.shouldDrop(55, rng)
			seq = append(seq, d)
			if d {
				drops++
			}
		}
		return drops, seq
	}
	n1, s1 := draw(1)
	n2, s2 := draw(1)
	n3, _ := draw(2)
	if n1 != n2 || !slicesEqual(s1, s2) {
		t.Error("the same seed drew different drops")
	}
	for _, n := range []int{n1, n3} {
		if n < 6300 || n > 6700 {
			t.Errorf("%d of 10,000 dropped at 55 authenticating, want about 6,500 (65 %%)", n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 0x55d))
	for range 1000 {
		if m.shouldDrop(9, rng) || !m.shouldDrop(100, rng) {
			t.Fatal("below begin a connection was dropped, or at full one was kept")
		}
	}
}

func slicesEqual(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// --max-startups reads as sshd's MaxStartups does.
func TestParseMaxStartups(t *testing.T) {
	for s, want := range map[string]maxStartups{"10:30:100": {10, 30, 100}, "5": {5, 30, 5}, "1:100:1": {1, 100, 1}} {
		if got, err := parseMaxStartups(s); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "10:30", "10:0:100", "10:101:100", "100:30:10", "a:b:c", "10:30:100:1", "0:30:0", "99999999999"} {
		if m, err := parseMaxStartups(s); err == nil || !strings.Contains(err.Error(), "--max-startups") {
			t.Errorf("%q: %v %v, want an error naming --max-startups", s, m, err)
		}
	}
}

// FuzzParseMaxStartups: any text parses into limits sshd would accept, or fails naming the
// flag; never a panic.
func FuzzParseMaxStartups(f *testing.F) {
	for _, s := range []string{"10:30:100", "5", "10:30", "::", "1:100:1", "-5:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMaxStartups(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--max-startups") {
				t.Fatalf("%q: error %q does not name the flag", s, err)
			}
			return
		}
		if m.begin < 1 || m.begin > m.full || m.rate < 1 || m.rate > 100 {
			t.Fatalf("%q: accepted %v", s, m)
		}
		for n := range m.full + 2 {
			if p := m.dropPercent(n); p < 0 || p > 100 {
				t.Fatalf("%q: dropPercent(%d) = %d", s, n, p)
			}
		}
	})
}

// fakeClock is a settable clock for the penalties.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// PerSourcePenalties as sshd's srclimit.c keeps them: penalties accumulate per address,
// refuse it once more than min (15 s) is outstanding, are capped at max (600 s) and expire;
// exempt addresses are never penalised; past max-sources the soonest to expire is forgotten.
func TestPenaltiesAccumulateActivateAndExpire(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	a, b := netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("10.0.0.8")
	p := newPenalties(defaultPenalties, []string{"127.0.0.0/8", "::1"}, clock.now)

	for i := 1; i <= 15; i++ { // 15 × 1 s: not more than min
		p.penalise(a, penaltyNoAuth)
	}
	if why := p.refused(a); why != "" {
		t.Fatalf("15 s of noauth penalties refused: %s", why)
	}
	if note := p.penalise(a, penaltyNoAuth); !strings.HasPrefix(note, "activating penalty of 16s for penalty: connections without attempting authentication") {
		t.Errorf("16th noauth: %q", note)
	}
	if why := p.refused(a); why != "penalty: connections without attempting authentication" {
		t.Errorf("after 16 s of penalties: refused %q", why)
	}
	if why := p.refused(b); why != "" {
		t.Errorf("another address refused: %s", why)
	}
	clock.advance(16*time.Second + time.Millisecond)
	if why := p.refused(a); why != "" {
		t.Errorf("after the penalty expired: refused %q", why)
	}

	// authfail 5 s: the fourth failure (20 s) activates it; one grace timeout (10 s) alone does not.
	for i := 1; i <= 4; i++ {
		p.penalise(b, penaltyAuthFail)
		if got, want := p.refused(b) != "", i == 4; got != want {
			t.Errorf("after %d failed authentications refused %v, want %v", i, got, want)
		}
	}
	c := netip.MustParseAddr("2001:db8::1")
	if note := p.penalise(c, penaltyGrace); note != "" || p.refused(c) != "" {
		t.Errorf("one grace timeout: %q, refused %q; want deferred", note, p.refused(c))
	}
	p.penalise(c, penaltyGrace)
	if p.refused(c) != "penalty: exceeded LoginGraceTime" {
		t.Errorf("two grace timeouts: refused %q", p.refused(c))
	}
	for range 1000 {
		p.penalise(c, penaltyAuthFail)
	}
	if left := p.byAddr[c].expiry.Sub(clock.now()); left != 600*time.Second {
		t.Errorf("penalty after 1,000 failures: %v outstanding, want the 600 s cap", left)
	}
	for range 100 {
		p.penalise(netip.MustParseAddr("127.0.0.1"), penaltyAuthFail)
		p.penalise(netip.MustParseAddr("::1"), penaltyAuthFail)
	}
	if len(p.byAddr) != 2 || p.refused(netip.MustParseAddr("127.0.0.1")) != "" {
		t.Errorf("exempt loopback penalised: %d entries", len(p.byAddr))
	}

	small := newPenalties(penaltyConfig{noAuth: time.Second, min: 15 * time.Second, max: time.Minute, maxSources: 2}, nil, clock.now)
	for i, addr := range []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"} {
		for range 3 - i { // the first address's penalty is the longest
			small.penalise(netip.MustParseAddr(addr), penaltyNoAuth)
		}
	}
	if _, ok := small.byAddr[netip.MustParseAddr("10.1.0.3")]; len(small.byAddr) != 2 || ok {
		t.Errorf("past max-sources 2: %v, want the soonest to expire (10.1.0.3) forgotten", small.byAddr)
	}
}

// A client that fails to authenticate four times from an address that is not exempt is
// refused with sshd's "Not allowed at this time" until the penalty expires on the server's
// clock; MaxStartups 2 refuses a third connection while two authenticate.
func TestServePenalisesAndDrops(t *testing.T) {
	op, stranger := testKey(t), testKey(t)
	clock := &fakeClock{t: time.Now()}
	srv := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), penaltyExempt: "none", clock: clock.now, dropSeed: 1})
	for range 4 {
		if c, err := dial(srv.addr, "mallory", gossh.PublicKeys(stranger)); err == nil {
			c.Close()
			t.Fatal("an unknown key logged in")
		}
	}
	// firstLine is what the server at addr says first to a new connection: its SSH version,
	// or why it is dropped.
	firstLine := func(addr string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		return line
	}
	// The fourth failure (5 s each) activates the penalty once its connection has closed.
	eventually(t, "the penalty activated", func() bool {
		return strings.Contains(srv.log.String(), "penalty: activating penalty of 20s for penalty: failed authentication")
	})
	if got := firstLine(srv.addr); got != notAllowed {
		t.Errorf("a connection from the penalised address: read %q, want %q", got, notAllowed)
	}
	if _, err := dial(srv.addr, "alice", gossh.PublicKeys(op)); err == nil {
		t.Fatalf("a known key logged in from a penalised address:\n%s", srv.log.String())
	}
	if !strings.Contains(srv.log.String(), "connection dropped: PerSourcePenalties (penalty: failed authentication)") {
		t.Errorf("the log lacks the refusal:\n%s", srv.log.String())
	}
	clock.advance(601 * time.Second)
	c, err := dial(srv.addr, "alice", gossh.PublicKeys(op))
	if err != nil {
		t.Fatalf("after the penalty expired: %v", err)
	}
	c.Close()

	// MaxStartups 2: two silent connections authenticating, the third is dropped.
	capped := startServer(t, serveOptions{authorizedKeys: writeKeys(t, op), maxStartups: "2", maxUnauthPerAddr: 8, dropSeed: 1})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", capped.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	eventually(t, "two connections admitted", func() bool { return strings.Count(capped.log.String(), "connection opened") == 2 })
	if got := firstLine(capped.addr); got != notAllowed {
		t.Errorf("a third connection with MaxStartups 2: read %q, want %q", got, notAllowed)
	}
	if !strings.Contains(capped.log.String(), "connection dropped: MaxStartups (2 authenticating, 2:30:2)") {
		t.Errorf("the log lacks the MaxStartups drop:\n%s", capped.log.String())
	}
	for _, c := range held {
		c.Close()
	}
}
