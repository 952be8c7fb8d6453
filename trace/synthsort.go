package trace

// placed is a turn at its time in the trace.
type placed struct {
	at         float64
	seq        int32 // placement order: a session's turns in order
	sess, turn int32 // indices into generator.sessions and generator.turns
}

// before orders placed turns by time, equal times in placement order, so a session's turns
// never swap. (Times are never NaN, so plain comparisons order them as cmp.Compare would.)
// seq is unique, so the order is total: every correct sort gives the same list.
func (a placed) before(b placed) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// sortPlaced sorts by before in place: an introsort (quicksort on a ninther pivot, insertion
// sort for 16 elements or fewer, heapsort past a depth limit) with the comparison inlined. It
// replaced slices.SortFunc, whose comparison is a call through a func value: the sort was
// about 15 % of a one-request replay's instructions (30,000 turns in the toolagent trace).
// It allocates nothing (a radix sort, tried before, cost more in page faults than it saved).
func sortPlaced(s []placed) {
	depth := 0
	for n := len(s); n > 0; n >>= 1 {
		depth += 2
	}
	introsortPlaced(s, depth)
}

func introsortPlaced(s []placed, depth int) {
	for len(s) > 16 {
		if depth == 0 {
			heapsortPlaced(s)
			return
		}
		depth--
		// Tukey's ninther (the median of three medians of three) to s[0], then a partition
		// around it: turns arrive as interleaved rising runs, where a plain median of three
		// kept picking poor pivots.
		l, m := len(s)-1, len(s)/2
		e := len(s) / 8
		m = median3(s, median3(s, 0, e, 2*e), median3(s, m-e, m, m+e), median3(s, l-2*e, l-e, l))
		s[0], s[m] = s[m], s[0]
		pivot := s[0]
		i, j := 1, l
		for {
			for i <= j && s[i].before(pivot) {
				i++
			}
			for i <= j && pivot.before(s[j]) {
				j--
			}
			if i >= j {
				break
			}
			s[i], s[j] = s[j], s[i]
			i++
			j--
		}
		s[0], s[j] = s[j], s[0]
		// Recurse into the smaller side, loop on the larger.
		if j < len(s)-1-j {
			introsortPlaced(s[:j], depth)
			s = s[j+1:]
		} else {
			introsortPlaced(s[j+1:], depth)
			s = s[:j]
		}
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].before(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// median3 is the index of the median of s[a], s[b], s[c].
func median3(s []placed, a, b, c int) int {
	if s[b].before(s[a]) {
		a, b = b, a
	}
	if s[c].before(s[b]) {
		b = c
		if s[b].before(s[a]) {
			b = a
		}
	}
	return b
}

func heapsortPlaced(s []placed) {
	down := func(root, n int) {
		for {
			c := 2*root + 1
			if c >= n {
				return
			}
			if c+1 < n && s[c].before(s[c+1]) {
				c++
			}
			if !s[root].before(s[c]) {
				return
			}
			s[root], s[c] = s[c], s[root]
			root = c
		}
	}
	for i := len(s)/2 - 1; i >= 0; i-- {
		down(i, len(s))
	}
	for i := len(s) - 1; i > 0; i-- {
		s[0], s[i] = s[i], s[0]
		down(0, i)
	}
}
