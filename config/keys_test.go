package config

import (
	"strings"
	"testing"
)

// sampleValues are values the parser accepts for keys whose table entry does not start with
// one in backticks or name a number.
var sampleValues = map[string]string{
	"search_space.model_name":       "MiniMaxAI/MiniMax-M2.5",
	"search_space.backend_version":  "0.19.0",
	"search_space.parallel_configs": "[{tp: 4, moe_ep: 4, replicas: 8}]",
	"workload.trace_path":           "builtin:toolagent",
	"goal.sla":                      "{ttft_ms: 200}",
}

// TestKeyTableIsTheParsers sets every key of the table through --set, and requires each to be
// accepted, so a key in the table that the parser does not read fails here; it requires every
// list key of search_space in the table; and setNode refuses any other key missing from the
// table, so a scalar key the parser reads but the table lacks fails every test that uses it.
func TestKeyTableIsTheParsers(t *testing.T) {
	for _, k := range Keys() {
		v, ok := sampleValues[k.Key]
		if !ok {
			switch {
			case strings.HasPrefix(k.Want, "`"):
				v, _, _ = strings.Cut(strings.TrimPrefix(k.Want, "`"), "`")
			case strings.Contains(k.Want, "number in [0.05"):
				v = "0.5"
			default:
				v = "1"
			}
		}
		f := Default()
		if err := f.Set(k.Key + "=" + v); err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%s=%s: %v: the key table lists a key the parser does not read", k.Key, v, err)
		}
	}
	for _, l := range Default().lists {
		if k := l.key; !keyIndex["search_space."+k] {
			t.Errorf("search_space.%s: a list key the parser reads (File.lists) has no entry in the key table (config/keys.go): add one, then run go generate . to rewrite docs/experiment-file.md", k)
		}
	}
	if err := Default().Set("search_space.not_a_key=1"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("a key outside the table: %v, want unknown key", err)
	}
}
