package kvtier

import (
	"math"
	"slices"
)

// Tier names a lower tier as Dynamo's KV events do (StorageTier HostPinned, Disk).
type Tier uint8

const (
	G2 Tier = 2 // host memory
	G3 Tier = 3 // disk
)

// Stats counts one worker's tier traffic.
type Stats struct {
	Offloaded      int64 // blocks sent G1→G2
	OffloadSkipped int64 // G1 evictions a lower tier already held (presence filter)
	OffloadDropped int64 // G1 evictions with no room: G2 full of blocks still in transfer
	G2Evicted      int64 // blocks G2 evicted (to G3, or gone)
	G3Offloaded    int64 // blocks sent G2→G3
	G3Evicted      int64 // blocks G3 evicted (gone)
	G3Dropped      int64 // G2 evictions with no room in G3
	Onboards       int64 // requests that onboarded lower-tier blocks
	OnboardG2      int64 // blocks onboarded from G2
	OnboardG3      int64 // blocks onboarded from G3 (staged through the G3→G2 link)
	Loaded         int64 // onboards whose transfer has ended
	OnboardWaitUS  int64 // Σ per ended onboard: its end minus its start
	// Link busy time, µs: G1→G2, G2→G1, G2→G3, G3→G2.
	OffloadBusyUS, OnboardBusyUS, G3OffloadBusyUS, G3OnboardBusyUS int64
}

// Event is a change of a tier's contents for the router: blocks now visible there
// (Stored) or gone (not Stored).
type Event struct {
	Tier   Tier
	Stored bool
	Keys   []Key
}

// xfer is a transfer in flight: blocks into G2 or G3 (keys), or one leg of an onboard.
type xfer struct {
	kind    uint8
	keys    []Key
	onboard int32
}

const (
	intoG2 uint8 = iota
	intoG3
	stage // an onboard's G3 blocks, G3→G2
	load  // an onboard's blocks, G2→G1
)

// onboard is a swap-in: its blocks stay pinned in their tiers until its load ends, as the
// mocker's SwapInHandle holds its G2 blocks (kvbm_offload/engine.rs @ ddbc1663).
type onboard struct {
	start  int64
	keys   []Key // G2's, then G3's
	n2     int
	leg    int32 // the transfer in flight
	staged bool  // leg is the G3→G2 stage, the load still to come
	end    int64 // when its load ended; 0 while in flight
}

// Manager is one worker's G2 and G3 tiers and links. Single-threaded, like the engine.
type Manager struct {
	cfg                    Config
	g2, g3                 tier
	g1g2, g2g1, g2g3, g3g2 link

	evicted []Key // G1 evictions since the last Flush
	cascade []Key // G2 evictions bound for G3, within one Flush

	xfers    []xfer // by id; ended ones are reused through xfree
	xfree    []int32
	onboards []onboard

	hit  []Key // the last Lookup's blocks, G2's then G3's
	hit2 int

	events []Event
	stats  Stats
}

// New returns the tiers of c (valid: c.Validate()).
func New(c Config) *Manager {
	return &Manager{cfg: c, g2: newTier(c.NumG2Blocks), g3: newTier(c.NumG3Blocks),
		g1g2: newLink(c.G1ToG2GBps, c.OffloadBatchSize), g2g1: newLink(c.G2ToG1GBps, 0),
		g2g3: newLink(c.G2ToG3GBps, 1), g3g2: newLink(c.G3ToG2GBps, 0)}
}

// Stats returns the traffic so far, links' busy time included.
func (m *Manager) Stats() Stats {
	s := m.stats
	s.OffloadBusyUS, s.OnboardBusyUS = int64(math.Round(m.g1g2.busy)), int64(math.Round(m.g2g1.busy))
	s.G3OffloadBusyUS, s.G3OnboardBusyUS = int64(math.Round(m.g2g3.busy)), int64(math.Round(m.g3g2.busy))
	return s
}

// Len is how many blocks tier t holds (in transfer included).
func (m *Manager) Len(t Tier) int {
	if t == G2 {
		return m.g2.len()
	}
	return m.g3.len()
}

// Has reports which lower tier holds k (in transfer included), or 0.
func (m *Manager) Has(k Key) Tier {
	switch {
	case m.g2.has(k):
		return G2
	case m.g3.has(k):
		return G3
	}
	return 0
}

// Evicted records a block G1 evicted, to offload at the next Flush.
func (m *Manager) Evicted(k Key) { m.evicted = append(m.evicted, k) }

// Flush offloads the blocks G1 evicted since the last Flush, in batches of
// offload_batch_size, each one transfer on the G1→G2 link starting at now; then the blocks
// G2 evicted for room go on to G3 the same way over the G2→G3 link.
func (m *Manager) Flush(now int64) {
	m.Advance(now) // a block is announced in its tier before it can be evicted from it
	m.send(now, m.evicted, &m.g2, &m.g1g2, intoG2, &m.stats.Offloaded, &m.stats.OffloadDropped, func(batch []Key, k Key) bool {
		// Already below G1: held, in this batch, or on its way from G2 to G3.
		if m.Has(k) != 0 || slices.Contains(batch, k) || slices.Contains(m.cascade, k) {
			m.stats.OffloadSkipped++
			return true
		}
		return false
	})
	m.evicted = m.evicted[:0]
	m.send(now, m.cascade, &m.g3, &m.g2g3, intoG3, &m.stats.G3Offloaded, &m.stats.G3Dropped, nil)
	m.cascade = m.cascade[:0]
	m.Advance(now) // over an instant link a block arrives in the flush that sends it
}

// send moves keys into tier t in batches of offload_batch_size, each batch one transfer on
// link l at now, its blocks announced when it ends. A block
// skip refuses (given the batch's blocks kept so far), or that t has no room for (counted in
// dropped), stays out; sent counts the rest.
func (m *Manager) send(now int64, keys []Key, t *tier, l *link, kind uint8, sent, dropped *int64, skip func(batch []Key, k Key) bool) {
	bs := m.cfg.OffloadBatchSize
	for i := 0; i < len(keys); i += bs {
		batch := keys[i:min(i+bs, len(keys))]
		keep := 0
		for _, k := range batch {
			if skip != nil && skip(batch[:keep], k) {
				continue
			}
			if !m.room(t, now, keep) {
				*dropped++
				continue
			}
			batch[keep] = k
			keep++
		}
		if keep == 0 {
			continue
		}
		id := m.newXfer(kind, -1)
		m.xfers[id].keys = append(m.xfers[id].keys[:0], batch[:keep]...)
		for _, k := range batch[:keep] {
			t.insert(k, math.MaxInt64)
		}
		l.start(float64(now), id, m.bytes(keep))
		*sent += int64(keep)
	}
}

// room makes room for one more block in t beyond reserved ones the caller is about to
// insert, evicting its LRU visible block when full (a G2 block evicted goes on to G3);
// false when every block is still in transfer.
func (m *Manager) room(t *tier, now int64, reserved int) bool {
	if t.len()+reserved < t.cap {
		return true
	}
	m.Advance(now) // a block that arrived in this flush is announced before it can be evicted
	k, ok := t.evictLRU(now)
	if !ok {
		return false
	}
	if t == &m.g2 {
		m.stats.G2Evicted++
		m.event(G2, false, k)
		if m.cfg.NumG3Blocks > 0 {
			m.cascade = append(m.cascade, k)
		}
	} else {
		m.stats.G3Evicted++
		m.event(G3, false, k)
	}
	return true
}

// newXfer returns the id of a fresh transfer record.
func (m *Manager) newXfer(kind uint8, ob int32) int32 {
	id := slot(&m.xfers, &m.xfree)
	m.xfers[id].kind, m.xfers[id].onboard = kind, ob
	return id
}

func (m *Manager) bytes(n int) float64 { return float64(int64(n) * m.cfg.BlockBytes) }

// Advance ends the transfers due by now, in the order they end across the links:
// blocks arrive in their tier (announced to the router), a G3 stage starts its load on the
// G2→G1 link, a load unpins its blocks.
func (m *Manager) Advance(now int64) {
	// The G3→G2 link last: a stage ending at t starts a load on a G2→G1 link already at t.
	links := [4]*link{&m.g1g2, &m.g2g3, &m.g2g1, &m.g3g2}
	to := float64(now)
	for {
		t := math.Inf(1)
		for _, l := range links {
			t = min(t, l.next())
		}
		if t > to+1e-9 {
			break
		}
		for _, l := range links {
			l.advance(t, m.ended)
		}
	}
	for _, l := range links {
		l.advance(to, m.ended)
	}
}

// ended completes transfer id at end.
func (m *Manager) ended(id int32, end float64) {
	x := &m.xfers[id]
	switch x.kind {
	case intoG2, intoG3:
		t, tr := &m.g2, G2
		if x.kind == intoG3 {
			t, tr = &m.g3, G3
		}
		for _, k := range x.keys {
			t.arrived(k, whole(end))
			m.event(tr, true, k)
		}
	case stage:
		ob := &m.onboards[x.onboard]
		ob.leg, ob.staged = m.newXfer(load, x.onboard), false
		m.g2g1.start(end, ob.leg, m.bytes(len(ob.keys)))
	case load:
		ob := &m.onboards[x.onboard]
		ob.end = max(whole(end), ob.start)
		for i, k := range ob.keys {
			if i < ob.n2 {
				m.g2.pin(k, -1)
			} else {
				m.g3.pin(k, -1)
			}
		}
		ob.keys = nil
		m.stats.Loaded++
		m.stats.OnboardWaitUS += ob.end - ob.start
	}
	x.keys = x.keys[:0]
	m.xfree = append(m.xfree, id)
}

// event appends k to the last event when it is of the same tier and kind, else opens one.
func (m *Manager) event(t Tier, stored bool, k Key) {
	if n := len(m.events); n > 0 && m.events[n-1].Tier == t && m.events[n-1].Stored == stored {
		m.events[n-1].Keys = append(m.events[n-1].Keys, k)
		return
	}
	m.events = append(m.events, Event{Tier: t, Stored: stored, Keys: []Key{k}})
}

// Events returns the tier changes since the last call, in order, and forgets them.
func (m *Manager) Events() []Event {
	ev := m.events
	m.events = nil
	return ev
}

// Lookup counts the blocks keys[from:to] (sub-block j mod g of the trace block keyed
// keys[j]) that continue a prefix in the lower tiers at now: first a run visible in G2, then
// one visible in G3. Onboard moves what the last Lookup found.
func (m *Manager) Lookup(now int64, keys []uint64, from, to, g int32) (n2, n3 int) {
	m.Advance(now)
	m.hit = m.hit[:0]
	j := from
	for ; j < to; j++ {
		k := Key{keys[j], uint8(j % g)}
		if !m.g2.visible(k, now) {
			break
		}
		m.hit = append(m.hit, k)
	}
	m.hit2 = len(m.hit)
	for ; j < to; j++ {
		k := Key{keys[j], uint8(j % g)}
		if !m.g3.visible(k, now) {
			break
		}
		m.hit = append(m.hit, k)
	}
	return m.hit2, len(m.hit) - m.hit2
}

// Onboard starts moving the last Lookup's blocks into G1 at now, G3's staged over the
// G3→G2 link first, then all over the G2→G1 link; the blocks become the most recently used
// of their tiers and stay pinned there until the load ends. It returns the onboard's
// handle for Loaded.
func (m *Manager) Onboard(now int64) int32 {
	m.Advance(now)
	n2, n3 := m.hit2, len(m.hit)-m.hit2
	h := int32(len(m.onboards))
	ob := onboard{start: now, keys: slices.Clone(m.hit), n2: n2}
	for _, k := range m.hit[:n2] {
		m.g2.touch(k)
		m.g2.pin(k, 1)
	}
	for _, k := range m.hit[n2:] {
		m.g3.touch(k)
		m.g3.pin(k, 1)
	}
	if n3 > 0 {
		ob.leg, ob.staged = m.newXfer(stage, h), true
		m.g3g2.start(float64(now), ob.leg, m.bytes(n3))
	} else {
		ob.leg = m.newXfer(load, h)
		m.g2g1.start(float64(now), ob.leg, m.bytes(n2))
	}
	m.onboards = append(m.onboards, ob)
	m.stats.Onboards++
	m.stats.OnboardG2 += int64(n2)
	m.stats.OnboardG3 += int64(n3)
	m.Advance(now) // over instant links it has ended
	return h
}

// Loaded reports whether onboard h has ended by now, and when it ended or, if not, when it
// will if no other transfer starts beside it (a later start can only put that off).
func (m *Manager) Loaded(h int32, now int64) (int64, bool) {
	m.Advance(now)
	ob := &m.onboards[h]
	if ob.end > 0 || ob.keys == nil {
		return ob.end, true
	}
	if ob.staged {
		solo := m.bytes(len(ob.keys)) / m.g2g1.perUS
		return max(whole(m.g3g2.deadline(ob.leg)+solo), now+1), false
	}
	return max(whole(m.g2g1.deadline(ob.leg)), now+1), false
}
