package kvtier

import "slices"

// Tier names a lower tier as Dynamo's KV events do (StorageTier HostPinned, Disk).
type Tier uint8

const (
	G2 Tier = 2 // host memory
	G3 Tier = 3 // disk
)

// link is a FIFO of transfers: one starts when the link is free and lasts its bytes over
// the bandwidth.
type link struct {
	gbps float64
	tail int64 // when the last queued transfer finishes
	busy int64 // µs spent transferring
}

// submit queues n blocks at now and returns when they have arrived.
func (l *link) submit(c *Config, now int64, n int) int64 {
	d := c.transferUS(n, l.gbps)
	start := max(now, l.tail)
	l.tail = start + d
	l.busy += d
	return l.tail
}

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
	OnboardWaitUS  int64 // Σ per onboard: its finish minus its start
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

// pending is a block in transfer into a tier, to announce when it arrives.
type pending struct {
	key   Key
	ready int64
}

// Manager is one worker's G2 and G3 tiers and links. Single-threaded, like the engine.
type Manager struct {
	cfg                    Config
	g2, g3                 tier
	g1g2, g2g1, g2g3, g3g2 link

	evicted []Key // G1 evictions since the last Flush
	cascade []Key // G2 evictions bound for G3, within one Flush
	// Transfers into G2 and G3 in arrival order (each link is FIFO, so arrival times never
	// decrease), announced by Advance.
	arriving [2][]pending
	arrHead  [2]int
	hit      []Key // the last Lookup's blocks, G2's then G3's
	hit2     int

	events []Event
	stats  Stats
}

// New returns the tiers of c (valid: c.Validate()).
func New(c Config) *Manager {
	m := &Manager{cfg: c, g2: newTier(c.NumG2Blocks), g3: newTier(c.NumG3Blocks)}
	m.g1g2.gbps, m.g2g1.gbps, m.g2g3.gbps, m.g3g2.gbps = c.G1ToG2GBps, c.G2ToG1GBps, c.G2ToG3GBps, c.G3ToG2GBps
	return m
}

// Stats returns the traffic so far, links' busy time included.
func (m *Manager) Stats() Stats {
	s := m.stats
	s.OffloadBusyUS, s.OnboardBusyUS, s.G3OffloadBusyUS, s.G3OnboardBusyUS = m.g1g2.busy, m.g2g1.busy, m.g2g3.busy, m.g3g2.busy
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
	m.send(now, m.evicted, &m.g2, &m.g1g2, 0, &m.stats.Offloaded, &m.stats.OffloadDropped, func(batch []Key, k Key) bool {
		// Already below G1: held, in this batch, or on its way from G2 to G3.
		if m.Has(k) != 0 || slices.Contains(batch, k) || slices.Contains(m.cascade, k) {
			m.stats.OffloadSkipped++
			return true
		}
		return false
	})
	m.evicted = m.evicted[:0]
	m.send(now, m.cascade, &m.g3, &m.g2g3, 1, &m.stats.G3Offloaded, &m.stats.G3Dropped, nil)
	m.cascade = m.cascade[:0]
}

// send moves keys into tier t in batches of offload_batch_size, each batch one transfer on
// link l at now, its blocks queued to be announced (arriving[arr]) when it ends. A block
// skip refuses (given the batch's blocks kept so far), or that t has no room for (counted in
// dropped), stays out; sent counts the rest.
func (m *Manager) send(now int64, keys []Key, t *tier, l *link, arr int, sent, dropped *int64, skip func(batch []Key, k Key) bool) {
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
		ready := l.submit(&m.cfg, now, keep)
		for _, k := range batch[:keep] {
			t.insert(k, ready)
			m.arriving[arr] = append(m.arriving[arr], pending{k, ready})
		}
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

// Advance announces the blocks whose transfer into G2 or G3 has finished by now.
func (m *Manager) Advance(now int64) {
	for i, t := range [2]Tier{G2, G3} {
		q, h := m.arriving[i], m.arrHead[i]
		for h < len(q) && q[h].ready <= now {
			m.event(t, true, q[h].key)
			h++
		}
		if h == len(q) {
			m.arriving[i], h = q[:0], 0
		}
		m.arrHead[i] = h
	}
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

// Onboard starts moving the last Lookup's blocks into G1 at now and returns when they have
// arrived: G3's are staged over the G3→G2 link first, then all go over the G2→G1 link.
// The blocks become the most recently used of their tiers.
func (m *Manager) Onboard(now int64) int64 {
	n2, n3 := m.hit2, len(m.hit)-m.hit2
	ready := now
	if n3 > 0 {
		ready = m.g3g2.submit(&m.cfg, now, n3)
	}
	done := m.g2g1.submit(&m.cfg, ready, n2+n3)
	for _, k := range m.hit[:n2] {
		m.g2.touch(k)
	}
	for _, k := range m.hit[n2:] {
		m.g3.touch(k)
	}
	m.stats.Onboards++
	m.stats.OnboardG2 += int64(n2)
	m.stats.OnboardG3 += int64(n3)
	m.stats.OnboardWaitUS += done - now
	return done
}
