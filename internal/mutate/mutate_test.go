package mutate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each kind of mutant finds its sites, names them, and Apply writes exactly that change
// and restores the file.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	src := `package p

func f(x int, err error) int {
	var a [4]int
	if err != nil {
		return 0
	}
	if x < 256 {
		x += a[1]
	}
	return x * 3
}
`
	path := filepath.Join(dir, "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := Sites(dir, []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
	}
	want := []string{"p.go:8 flip < → <=", "p.go:8 nudge 256 → 128", "p.go:8 drop if … {1 statements} → if … {}",
		"p.go:9 nudge 1 → 2", "p.go:11 nudge 3 → 4"}
	// Walk order puts the if before its condition's parts.
	want = []string{want[2], want[0], want[1], want[3], want[4]}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		m    Mutant
		want string
	}{
		{ms[0], "if x < 256 {\n\n\t}"},
		{ms[1], "if x <= 256 {"},
		{ms[2], "if x < 128 {"},
		{ms[4], "return x * 4"},
	} {
		restore, err := Apply(dir, c.m)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: file lacks %q:\n%s", c.m, c.want, b)
		}
		if err := restore(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != src {
			t.Fatalf("%s: not restored", c.m)
		}
	}
	// A listed mutant whose site is not there any more is refused.
	stale := ms[2]
	stale.From = "512"
	if _, err := Apply(dir, stale); err == nil {
		t.Error("stale mutant applied")
	}
}

// A sample is seeded: the same seed picks the same mutants, another seed others.
func TestSample(t *testing.T) {
	var ms []Mutant
	for i := range 50 {
		ms = append(ms, Mutant{File: "f.go", Kind: Nudge, Index: i})
	}
	a, b, c := Sample(ms, 10, 1), Sample(ms, 10, 1), Sample(ms, 10, 2)
	if len(a) != 10 || strings.Join(names(a), ",") != strings.Join(names(b), ",") {
		t.Fatalf("same seed, different samples: %v %v", names(a), names(b))
	}
	if strings.Join(names(a), ",") == strings.Join(names(c), ",") {
		t.Errorf("seeds 1 and 2 sample alike: %v", names(a))
	}
}

func names(ms []Mutant) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m.Index))
	}
	return out
}
