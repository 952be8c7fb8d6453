// Package grow appends to long slices by doubling their capacity.
//
// append grows a large slice by about 1.25× at a time, so a list filled to hundreds of
// thousands of entries is copied — and its fresh pages faulted in — many times over; the
// lists of a trace synthesis or a block pool fill that way.
package grow

import "slices"

// Room returns s with room for k more elements, at least doubling its capacity (to 64 at
// least) when it must grow.
func Room[T any](s []T, k int) []T {
	if cap(s)-len(s) >= k {
		return s
	}
	return slices.Grow(s, max(k, len(s), 64))
}

// Append appends v to s, doubling the capacity when s is full.
func Append[T any](s []T, v T) []T {
	return append(Room(s, 1), v)
}
