package main

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/routerlab/routerlab/tui"
)

// TestExplorerKeyTable requires docs/explorer.md's key table to name every key the explorer
// binds, so a new binding cannot go undocumented (the table is written by hand).
func TestExplorerKeyTable(t *testing.T) {
	data, err := os.ReadFile("docs/explorer.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	cell := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(line[2:], " | ")
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	if len(documented) < 10 {
		t.Fatalf("docs/explorer.md: found %d documented keys; is the key table still there?", len(documented))
	}
	arrows := map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→"}
	v := reflect.ValueOf(tui.DefaultKeyMap())
	for i := range v.NumField() {
		for _, k := range v.Field(i).Interface().(key.Binding).Keys() {
			if a, ok := arrows[k]; ok {
				k = a
			}
			if !documented[k] {
				t.Errorf("docs/explorer.md's key table lacks %q (KeyMap.%s)", k, v.Type().Field(i).Name)
			}
		}
	}
}
