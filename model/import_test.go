package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const sharedAIC = "../../shared/aic"

// sharedAICDir returns ../shared/aic, skipping the test when it is absent.
func sharedAICDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(sharedAIC); err != nil {
		t.Skip("../shared/aic not present: cannot re-derive the embedded tables")
	}
	return sharedAIC
}

func embeddedTable(t *testing.T, name string) *Table {
	t.Helper()
	b, err := fs.ReadFile(tablesFS, "tables/"+name)
	if err != nil {
		t.Fatal(err)
	}
	var tb Table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	return &tb
}

// The embedded tables are exactly what the importer derives from the operator data.
func TestImportRoundTrip(t *testing.T) {
	dir := sharedAICDir(t)
	if testing.Short() {
		t.Skip("re-import reads ~2 MB of parquet; skipped in -short")
	}
	for _, o := range []ImportOptions{DefaultImportOptions(), DynosimImportOptions()} {
		tables, err := Import(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(tables) != len(o.Layouts) {
			t.Fatalf("%d tables for %d layouts", len(tables), len(o.Layouts))
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
		prov, err := os.ReadFile(filepath.Join("tables", ProvenanceFileName(o.TimingReference)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(prov, Provenance(tables)) {
			t.Fatalf("tables/%s differs from a fresh import", ProvenanceFileName(o.TimingReference))
		}
	}
}

// The router gate runs in FP32 on CUDA cores: memory-bound at decode sizes (its 3 MB of FP32
// weights), compute-bound at prefill sizes, where it costs far more than a BF16 GEMM would.
func TestFP32Gate(t *testing.T) {
	g := GPUSpec{MemBW: 7.7e12, MemBWScaling: 0.8, MemConstantUS: 3}
	bw := 7.7e12 * 0.8 / 1e6
	one := fp32GateUS(1, 256, 3072, 80e12, g)
	if want := 4*(256*3072+3072+256)/bw + 3 + 4*3072/bw; math.Abs(one-want) > 1e-9 {
		t.Fatalf("1 token: %g µs, want the weight read %g µs", one, want)
	}
	big := fp32GateUS(8192, 256, 3072, 80e12, g)
	if want := 2*8192*256*3072/80e12*1e6 + 3 + 4*8192*3072/bw; math.Abs(big-want) > 1e-9 {
		t.Fatalf("8192 tokens: %g µs, want the FP32 compute bound %g µs", big, want)
	}
	if big < 150 || big > 200 {
		t.Fatalf("8192 tokens: %g µs per layer", big)
	}
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Float64Range(1, 32768).Draw(t, "a")
		b := rapid.Float64Range(a, 65536).Draw(t, "b")
		if fp32GateUS(b, 256, 3072, 80e12, g) < fp32GateUS(a, 256, 3072, 80e12, g) {
			t.Fatalf("more tokens priced cheaper: %g < %g", b, a)
		}
	})
}

// Every source of the embedded tables is a file of ../shared/aic with the digest recorded.
func TestEmbeddedSourcesInShared(t *testing.T) {
	dir := sharedAICDir(t)
	for _, name := range []string{"minimax-m2.5_b200_sxm_vllm-0.19.0_tp4-adp1-moetp1-moeep4.json", "minimax-m2.5_b200_sxm_vllm-0.19.0_tp2-adp1-moetp2-moeep1.json"} {
		tb := embeddedTable(t, name)
		if len(tb.Sources) < 7 {
			t.Fatalf("%s: %d sources", name, len(tb.Sources))
		}
		for _, src := range tb.Sources {
			b, err := os.ReadFile(filepath.Join(dir, src.Path))
			if err != nil {
				t.Fatalf("%s: source %s: %v", name, src.Path, err)
			}
			if d := sha256.Sum256(b); hex.EncodeToString(d[:]) != src.SHA256 {
				t.Fatalf("%s: %s digest %s, ../shared has %x", name, src.Path, src.SHA256, d)
			}
		}
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
	o.MoE = MoEKernel{Source: "vllm_fused_moe", Quant: "fp8_block"}
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
