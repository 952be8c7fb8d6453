// Package grow keeps long lists that are filled by appending without copying them as they
// grow.
//
// A slice grown by append (about 1.25× at a time once large) or by doubling copies — and
// faults in anew — everything it held at each growth, and leaves part of its capacity
// unused; the lists of a trace synthesis fill that way to tens of thousands of entries.
package grow

// chunkLen is how many elements a chunk of a Chunks holds.
const chunkLen = 1024

// Chunks is a list kept in chunks of chunkLen elements: appending never copies, nor
// faults in again, what it holds, and an element's address never changes. The zero value
// is an empty list.
type Chunks[T any] struct {
	chunks [][]T
	n      int
}

// Append adds v at the end.
func (c *Chunks[T]) Append(v T) {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// Len is the number of elements.
func (c *Chunks[T]) Len() int { return c.n }

// At is the address of element i (0 <= i < Len()).
func (c *Chunks[T]) At(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }
