package grow

import "testing"

// Filling a list by Append keeps every element and reallocates only when full, doubling:
// 64, 128, 256, … entries, so n appends copy fewer than 2n elements in all.
func TestAppendDoubles(t *testing.T) {
	var s []int
	grows, copied := 0, 0
	for i := range 100_000 {
		before := cap(s)
		s = Append(s, i)
		if cap(s) != before {
			grows++
			copied += i
			if before > 0 && cap(s) < 2*before {
				t.Fatalf("at %d entries the capacity went from %d to %d, less than double", i, before, cap(s))
			}
		}
	}
	for i, v := range s {
		if v != i {
			t.Fatalf("s[%d] = %d", i, v)
		}
	}
	if grows > 12 || copied >= 2*len(s) {
		t.Fatalf("%d reallocations copying %d elements for %d appends", grows, copied, len(s))
	}
}

// Room leaves a slice with enough spare capacity alone.
func TestRoomKeepsSpareCapacity(t *testing.T) {
	s := make([]int, 3, 10)
	if r := Room(s, 7); &r[:10][9] != &s[:10][9] {
		t.Fatal("Room reallocated a slice with room for 7 more")
	}
	if r := Room(s, 8); cap(r) < 11 {
		t.Fatalf("Room(s, 8) has capacity %d, want at least 11", cap(r))
	}
}
