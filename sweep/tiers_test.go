package sweep

import (
	"context"
	"testing"
)

// The KV tiers as sweep dimensions: with G2 off the tier knobs are moot and collapse (one
// candidate per router configuration), with it on the host weight is searched; the disk
// weight, without G3, never is.
func TestTierDimensions(t *testing.T) {
	base, err := NewSpace(context.Background(), seedFile(t))
	if err != nil {
		t.Fatal(err)
	}
	f := seedFile(t, "num_g2_blocks=[0, 32768]", "host_cache_hit_weight=[0.5, 0.75, 1]", "disk_cache_hit_weight=[0, 0.5]")
	s, err := NewSpace(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	kv, rr := 0, 0
	for _, c := range base.Candidates {
		if c.Config["router_mode"] == "kv_router" {
			kv++
		} else {
			rr++
		}
	}
	// G2 off: the base space; G2 on: kv_router configurations × 3 host weights, round-robin once.
	if want := len(base.Candidates) + 3*kv + rr; len(s.Candidates) != want {
		t.Fatalf("%d candidates, want %d (base %d: %d kv_router, %d other)", len(s.Candidates), want, len(base.Candidates), kv, rr)
	}
	for _, c := range s.Candidates {
		_, host := c.Config["host_cache_hit_weight"]
		_, disk := c.Config["disk_cache_hit_weight"]
		on := c.Config["num_g2_blocks"] == "32768"
		if disk || host != (on && c.Config["router_mode"] == "kv_router") {
			t.Fatalf("candidate %s: host weight searched %v, disk %v, G2 on %v", c.Key, host, disk, on)
		}
	}
}
