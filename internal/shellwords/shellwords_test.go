package shellwords

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		`go run . compare a b --fail-if 'mean_e2e_latency_ms>+2%'`: {"go", "run", ".", "compare", "a", "b", "--fail-if", "mean_e2e_latency_ms>+2%"},
		`routerlab replay --set 'x=[1, 2]'  --set 'it'\''s'`:       {"routerlab", "replay", "--set", "x=[1, 2]", "--set", "it's"},
		`a\ b ''`: {"a b", ""},
		"routerlab replay \\\n  --set a=1 \\\n  --set 'b c'": {"routerlab", "replay", "--set", "a=1", "--set", "b c"},
	} {
		got, err := Split(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Split("a 'b"); err == nil {
		t.Error("unterminated quote accepted")
	}
}
