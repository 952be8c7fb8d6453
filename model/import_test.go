package model

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sharedAIC = "../../shared/aic"

// The embedded tables are exactly what the importer derives from the shared operator data.
func TestImportRoundTrip(t *testing.T) {
	if _, err := os.Stat(sharedAIC); err != nil {
		t.Skip("../shared/aic not present: cannot re-derive the embedded tables")
	}
	if testing.Short() {
		t.Skip("re-import reads ~1.4 MB of parquet; skipped in -short")
	}
	tables, err := Import(sharedAIC, DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("%d tables", len(tables))
	}
	for _, tb := range tables {
		got, err := MarshalTable(tb)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fs.ReadFile(tablesFS, "tables/"+TableFileName(tb))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("embedded %s differs from a fresh import; re-run `routerlab model import`", TableFileName(tb))
		}
	}
	prov, err := os.ReadFile(filepath.Join("tables", "PROVENANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(prov, Provenance(tables)) {
		t.Fatal("tables/PROVENANCE.md differs from a fresh import")
	}
}

func TestImportMissingData(t *testing.T) {
	dir := t.TempDir()
	_, err := Import(dir, DefaultImportOptions())
	if err == nil || !strings.Contains(err.Error(), "MiniMaxAI--MiniMax-M2.5_config.json") {
		t.Fatalf("missing config: %v", err)
	}
	if _, err := os.Stat(sharedAIC); err != nil {
		return
	}
	o := DefaultImportOptions()
	o.Layouts = []Layout{{TP: 4, AttentionDP: 4, MoETP: 1, MoEEP: 16}}
	if _, err := Import(sharedAIC, o); err == nil || !strings.Contains(err.Error(), "attention_dp") {
		t.Fatalf("DEP layout: %v", err)
	}
	o.BackendVersion = "0.1.0"
	if _, err := Import(sharedAIC, o); err == nil || !strings.Contains(err.Error(), "0.1.0") {
		t.Fatalf("missing version: %v", err)
	}
}

func TestSeriesInterpolation(t *testing.T) {
	s := newSeries([]point{{4, 10}, {1, 5}, {8, 30}, {4, 12}})
	if len(s) != 3 || s[1].us != 11 {
		t.Fatalf("sorted/deduplicated: %+v", s)
	}
	for _, c := range []struct{ x, pow, want float64 }{
		{0.5, 1, 5}, {1, 1, 5}, {4, 1, 11}, {6, 1, 20.5}, {16, 1, 60}, {16, 2, 120},
	} {
		if got := s.at(c.x, c.pow); got != c.want {
			t.Fatalf("at(%g, %g) = %g, want %g", c.x, c.pow, got, c.want)
		}
	}
}

func FuzzParseLLMSpec(f *testing.F) {
	f.Add([]byte(`{"num_hidden_layers":62,"hidden_size":3072,"num_attention_heads":48,"num_key_value_heads":8,"head_dim":128,"intermediate_size":1536,"vocab_size":200064,"num_experts_per_tok":8,"num_local_experts":256,"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}`))
	f.Add([]byte(`{"num_hidden_layers":-1}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseLLMSpec("config.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model import: config.json: ") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		if s.Layers <= 0 || s.Hidden <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.WeightBlock <= 0 {
			t.Fatalf("accepted a spec with non-positive sizes: %+v", s)
		}
	})
}

func FuzzParseGPUSpec(f *testing.F) {
	f.Add([]byte("gpu:\n  mem_bw: 7700000000000\n  mem_bw_empirical_scaling_factor: 0.8\n  mem_empirical_constant_latency: 0.000003\n  mem_capacity: 193273528320\nmisc:\n  nccl_mem:\n    4: 411041792\n  other_mem: 3758096384\n"))
	f.Add([]byte("gpu: [1, 2"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := parseGPUSpec("sys.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model import: sys.yaml: ") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		if g.MemBW <= 0 || g.MemCapacity <= 0 || g.MemBWScaling <= 0 || len(g.NCCLMem) == 0 {
			t.Fatalf("accepted an incomplete spec: %+v", g)
		}
	})
}
