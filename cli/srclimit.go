package cli

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// serve's start-up limits are sshd's, read from openssh/openssh-portable at 0ef0f5a83 (2026-08-21):
// MaxStartups' random early drop (sshd.c, should_drop_connection) and PerSourcePenalties
// (srclimit.c, srclimit_penalise and srclimit_penalty_check_allow), with sshd's defaults
// (servconf.c, fill_default_server_options). docs/trust.md states where serve differs.

// maxStartups is sshd's MaxStartups begin:rate:full.
type maxStartups struct{ begin, rate, full int }

// defaultMaxStartups is sshd's default, 10:30:100.
var defaultMaxStartups = maxStartups{10, 30, 100}

// parseMaxStartups reads "begin:rate:full" or a single number N (begin = full = N: a hard
// cap), as sshd's servconf.c does: begin ≤ full, 1 ≤ rate ≤ 100, begin and full positive.
func parseMaxStartups(s string) (maxStartups, error) {
	bad := fmt.Errorf("--max-startups %q: want begin:rate:full (sshd's MaxStartups, e.g. 10:30:100) or one number", s)
	parts := strings.Split(s, ":")
	var v []int
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n > 1<<20 {
			return maxStartups{}, bad
		}
		v = append(v, n)
	}
	var m maxStartups
	switch len(v) {
	case 1:
		m = maxStartups{v[0], 30, v[0]}
	case 3:
		m = maxStartups{v[0], v[1], v[2]}
		if m.begin > m.full || m.rate < 1 || m.rate > 100 {
			return maxStartups{}, bad
		}
	default:
		return maxStartups{}, bad
	}
	if m.begin <= 0 || m.full <= 0 {
		return maxStartups{}, bad
	}
	return m, nil
}

func (m maxStartups) String() string { return fmt.Sprintf("%d:%d:%d", m.begin, m.rate, m.full) }

// dropPercent is the chance, in percent, that a new connection is dropped while startups
// others are authenticating: 0 below begin, rate at begin rising linearly (in sshd's integer
// arithmetic) to 100 at full.
func (m maxStartups) dropPercent(startups int) int {
	switch {
	case startups < m.begin:
		return 0
	case startups >= m.full || m.rate == 100:
		return 100
	}
	return m.rate + (100-m.rate)*(startups-m.begin)/(m.full-m.begin)
}

// shouldDrop draws sshd's random early drop from rng: a uniform draw in [0, 100) below
// dropPercent.
func (m maxStartups) shouldDrop(startups int, rng *rand.Rand) bool {
	p := m.dropPercent(startups)
	switch p {
	case 0:
		return false
	case 100:
		return true
	}
	return rng.IntN(100) < p
}

// penaltyKind is why a connection that ended before authenticating is penalised.
type penaltyKind int

const (
	penaltyNone     penaltyKind = iota
	penaltyAuthFail             // it attempted authentication and failed
	penaltyNoAuth               // it ended without attempting authentication
	penaltyGrace                // it did not authenticate within --handshake-timeout (LoginGraceTime)
)

// penaltyConfig is sshd's PerSourcePenalties, in its defaults: authfail:5 noauth:1
// grace-exceeded:10 min:15 max:600 max-sources4/6:65536, overflow permissive. crash (90 s),
// invaliduser and refuseconnection have no counterpart in serve: a handshake's panic is
// recovered by the SSH library unseen, every user name is valid (keys decide), and there is
// no RefuseConnection.
type penaltyConfig struct {
	authFail, noAuth, grace time.Duration
	min, max                time.Duration
	maxSources              int // per address family
}

var defaultPenalties = penaltyConfig{authFail: 5 * time.Second, noAuth: time.Second, grace: 10 * time.Second,
	min: 15 * time.Second, max: 600 * time.Second, maxSources: 65536}

// reasons are sshd's words for each penalty.
var penaltyReasons = map[penaltyKind]string{
	penaltyAuthFail: "penalty: failed authentication",
	penaltyNoAuth:   "penalty: connections without attempting authentication",
	penaltyGrace:    "penalty: exceeded LoginGraceTime",
}

// penalty is an address's outstanding penalty: it refuses the address's connections while
// active, until expiry.
type penalty struct {
	expiry time.Time
	active bool
	reason string
}

// penalties is sshd's per-source penalty table (srclimit.c): each connection that ends
// before authenticating adds its penalty to its address's, which accumulates up to max and
// becomes active — refusing every new connection from that address — once more than min is
// outstanding. Addresses matching the exempt patterns (the from= pattern-list syntax) are
// never penalised. The caller holds its own lock; now is its clock.
type penalties struct {
	cfg    penaltyConfig
	exempt []string
	now    func() time.Time
	byAddr map[netip.Addr]*penalty
	v4, v6 int // entries per family
}

func newPenalties(cfg penaltyConfig, exempt []string, now func() time.Time) *penalties {
	return &penalties{cfg: cfg, exempt: exempt, now: now, byAddr: map[netip.Addr]*penalty{}}
}

// expire drops penalties past their expiry.
func (p *penalties) expire(now time.Time) {
	for a, e := range p.byAddr {
		if !e.expiry.After(now) {
			p.remove(a)
		}
	}
}

func (p *penalties) remove(a netip.Addr) {
	delete(p.byAddr, a)
	if a.Is4() {
		p.v4--
	} else {
		p.v6--
	}
}

// refused says why a new connection from a is refused ("" to let it in): an active,
// unexpired penalty.
func (p *penalties) refused(a netip.Addr) string {
	if matchFrom(p.exempt, a.AsSlice()) {
		return ""
	}
	now := p.now()
	e := p.byAddr[a]
	if e == nil || !e.expiry.After(now) || !e.active {
		return ""
	}
	return e.reason
}

// penalise adds kind's penalty to a's and says what it did, for the log ("" when nothing).
func (p *penalties) penalise(a netip.Addr, kind penaltyKind) string {
	secs := map[penaltyKind]time.Duration{penaltyAuthFail: p.cfg.authFail, penaltyNoAuth: p.cfg.noAuth, penaltyGrace: p.cfg.grace}[kind]
	if secs <= 0 || matchFrom(p.exempt, a.AsSlice()) {
		return ""
	}
	now := p.now()
	p.expire(now)
	reason := penaltyReasons[kind]
	e := p.byAddr[a]
	if e == nil {
		e = &penalty{expiry: now.Add(secs), active: secs > p.cfg.min, reason: reason}
		p.byAddr[a] = e
		n := &p.v6
		if a.Is4() {
			n = &p.v4
		}
		if *n++; *n > p.cfg.maxSources {
			p.evictSoonest(a.Is4()) // sshd's permissive overflow: forget the soonest to expire
		}
		if e.active {
			return fmt.Sprintf("new active penalty of %v for %s", secs, reason)
		}
		return ""
	}
	e.expiry = e.expiry.Add(secs)
	if e.expiry.Sub(now) > p.cfg.max {
		e.expiry = now.Add(p.cfg.max)
	}
	e.reason = reason
	if !e.active && e.expiry.Sub(now) > p.cfg.min {
		e.active = true
		return fmt.Sprintf("activating penalty of %v for %s", e.expiry.Sub(now).Round(time.Millisecond), reason)
	}
	return ""
}

// evictSoonest removes the entries of one family soonest to expire until it is within
// maxSources.
func (p *penalties) evictSoonest(v4 bool) {
	n := &p.v6
	if v4 {
		n = &p.v4
	}
	for *n > p.cfg.maxSources {
		var soonest netip.Addr
		var at time.Time
		for a, e := range p.byAddr {
			if a.Is4() == v4 && (!soonest.IsValid() || e.expiry.Before(at) || e.expiry.Equal(at) && a.Less(soonest)) {
				soonest, at = a, e.expiry
			}
		}
		p.remove(soonest)
	}
}
