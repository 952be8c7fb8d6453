package grow

import "testing"

// A Chunks list keeps every element in order, at an address that never changes, across
// chunk boundaries.
func TestChunks(t *testing.T) {
	var c Chunks[int]
	if c.Len() != 0 {
		t.Fatalf("empty list of %d", c.Len())
	}
	var first *int
	for i := range 3*chunkLen + 5 {
		c.Append(i)
		if i == 0 {
			first = c.At(0)
		}
	}
	if c.Len() != 3*chunkLen+5 || c.At(0) != first {
		t.Fatalf("%d elements; the first moved: %v", c.Len(), c.At(0) != first)
	}
	for i := range c.Len() {
		if *c.At(i) != i {
			t.Fatalf("element %d is %d", i, *c.At(i))
		}
	}
	*c.At(chunkLen) = -1
	if *c.At(chunkLen) != -1 || *c.At(chunkLen - 1) != chunkLen-1 {
		t.Fatal("writing through At changed the wrong element")
	}
}
