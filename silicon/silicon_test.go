package silicon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
	"pgregory.net/rapid"
)

const header = "config_id,concurrency,measured,backend_version,precision,gemm_quant_mode,moe_quant_mode,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"

// mustParse parses in and wants n rows.
func mustParse(t *testing.T, in, name string, n int) []Row {
	t.Helper()
	rows, err := Parse(strings.NewReader(in), name)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n {
		t.Fatalf("%s: %d rows, want %d", name, len(rows), n)
	}
	return rows
}

func TestParse(t *testing.T) {
	in := header +
		"634,8,2026-04-22,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n" +
		",16,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,16,4,1,1,4,76.0,10.75\n" +
		"691,64,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,16,4,4,1,16,146.9,16.2\n"
	rows := mustParse(t, in, "s.csv", 3)
	r := rows[0]
	if r.Line != 2 || r.ConfigID != "634" || r.Concurrency != 8 || r.ISL != 1024 || r.MoETP != 4 || r.TTFTMS != 67.5 || r.TPOTMS != 8.79 {
		t.Fatalf("row: %+v", r)
	}
	if rows[0].Layout() != "TP" || rows[1].Layout() != "TEP" || rows[2].Layout() != "DEP" {
		t.Fatalf("layouts %s %s %s", rows[0].Layout(), rows[1].Layout(), rows[2].Layout())
	}
}

func TestParseErrors(t *testing.T) {
	good := "634,8,2026-04-22,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n"
	cases := []struct{ in, want string }{
		{"", "s.csv:1: empty file"},
		{"config_id,concurrency\n", "s.csv:1: measured: missing column"},
		{header, "s.csv: no data rows"},
		{header + good + "634,x,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n", "s.csv:3: concurrency: \"x\" is not a positive integer"},
		{header + "634,8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,-1,8.79\n", "s.csv:2: silicon_ttft_ms: \"-1\""},
		{header + "634,8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,NaN\n", "s.csv:2: silicon_tpot_ms"},
		{header + "634,8,2026-04-03\n", "s.csv:2: row has 3 fields, header 16"},
		{header + "634,8,2026-04-03,,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n", "s.csv:2: backend_version: empty"},
		{header + "634,8,\"2026,0.19.0\n", "s.csv:2:"},
		{header + "634,8,yesterday,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n", `s.csv:2: measured: "yesterday" is not a date (YYYY-MM-DD)`},
		{header + "634,8,2026-04-03,0.19.0,fp8,fp8,fp8,1000000000,1024,8,4,1,4,1,67.5,8.79\n", "s.csv:2: isl: 1000000000 exceeds 4194304, the limit of a replayed row"},
		{header + "634,100000000,2026-04-03,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n", "s.csv:2: concurrency: 100000000 exceeds 65536"},
		{strings.TrimSuffix(header, "\n") + ",isl\n" + strings.TrimSuffix(good, "\n") + ",1\n", "s.csv:1: isl: duplicate column (columns 8 and 17)"},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.in), "s.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("input %q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(header + "634,8,2026-04-22,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n"))
	f.Add([]byte(sampleHeader + sampleAgg))
	f.Add([]byte(sampleHeader + sampleDisagg))
	f.Add([]byte(disaggHeader + "a,config_id=1; silicon_concurrency=4,vllm,0.19.0,Qwen/Qwen3-32B,h100_sxm,bf16,disagg,1024,64,,,,,,,,,1,2,2,1,1,0,0,4,1,2,1,1,0,0,100,10\n"))
	f.Add([]byte(disaggHeader + "d,config_id=2,vllm,0.19.0,Qwen/Qwen3-32B,h100_sxm,bf16,disagg,1024,64,,,,,,,,,1,2,2,1,1,0,0,3,2,2,1,1,0,0,100,20\n"))
	f.Add([]byte(sampleHeader + "x,\"silicon_concurrency=-1\",vllm,0.19.0,m,s,fp8,agg,1,1,fp8,fp8,1,1,1,0,1,1,1,1\n"))
	f.Add([]byte(header + "634,8,\"x\n"))
	f.Add([]byte("a,b\n1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := Parse(bytes.NewReader(b), "f.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		for _, r := range rows {
			if r.Line < 2 || r.BackendVersion == "" {
				t.Fatalf("row without a line or version: %+v", r)
			}
			if r.Unsupported != "" {
				continue // a sample row the validator skips, with its reason
			}
			if d := r.Disagg; d != nil {
				if r.Concurrency < 1 || r.ISL < 1 || r.OSL < 1 || d.PrefillWorkers < 1 || d.DecodeWorkers < 1 || d.PrefillTP < 1 || d.DecodeTP < 1 ||
					d.PrefillDP < 1 || d.DecodeDP < 1 || d.PrefillMoETP < 0 || d.PrefillMoEEP < 0 || d.DecodeMoETP < 0 || d.DecodeMoEEP < 0 {
					t.Fatalf("accepted an invalid disaggregated row: %+v %+v", r, *d)
				}
				continue
			}
			if r.Concurrency < 1 || r.ISL < 1 || r.OSL < 1 || r.TP < 1 || r.AttentionDP < 1 || r.MoETP < 1 || r.MoEEP < 1 ||
				r.BatchSize < 1 || !(r.TTFTMS > 0) || !(r.TPOTMS > 0) {
				t.Fatalf("accepted an invalid row: %+v", r)
			}
		}
	})
}

// The columns of AIConfigurator's published sample (aic-core/.../systems/silicon_sample.csv).
const sampleHeader = "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,decode_batch_size,silicon_ttft_ms,silicon_tpot_ms\n"

const (
	sampleAgg    = "r1,\"db-dump/2026-04-27; config_id=634; silicon_concurrency=8; measured=2026-04-22T00:00:00.000Z\",vllm,0.19.0,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,1024,fp8,fp8,8,4,1,1,4,1,,,67.5,8.79\n"
	sampleDisagg = "r2,\"config_id=9; silicon_concurrency=64; measured=2026-03-01\",trtllm,1.2.0,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,8192,1024,nvfp4,nvfp4,,,,,,,4,64,900.5,30.1\n"
)

// AIConfigurator's sample is read as it is published: the run's id, concurrency and date come
// out of silicon_data_source, aggregated rows become ordinary rows naming their checkpoint,
// and a row that cannot be replayed (disaggregated, pipeline-parallel, a field missing or
// invalid) is kept with its reason instead of failing the file.
func TestParseSample(t *testing.T) {
	in := sampleHeader + sampleAgg + sampleDisagg +
		"r3,\"source_file=x.csv; measured=2026-01-23\",trtllm,1.2.0,deepseek-ai/DeepSeek-R1,gb200,fp8,agg,1024,1024,fp8,fp8,8,4,1,1,4,1,,,50,9\n" +
		"r4,\"silicon_concurrency=16; measured=2026-04-01\",vllm,0.19.0,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,1024,fp8,fp8,16,4,2,1,4,1,,,70,9\n" +
		"r5,\"silicon_concurrency=abc\",vllm,0.19.0,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,1024,fp8,fp8,16,4,1,1,4,1,,,70,9\n" +
		"r6,\"silicon_concurrency=8\",sglang,,deepseek-ai/DeepSeek-V3,b200_sxm,fp4,agg,1024,8192,nvfp4,nvfp4,16,4,1,1,4,1,,,595,14\n" +
		"r7,\"silicon_concurrency=8\",vllm,0.19.0,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,1024,fp8,fp8,8,4,1,0,4,1,,,67,8\n"
	rows := mustParse(t, in, "sample.csv", 7)
	a := rows[0]
	if a.Unsupported != "" || a.ConfigID != "634" || a.Concurrency != 8 || a.Measured != "2026-04-22" || a.Model != "MiniMaxAI/MiniMax-M2.5" ||
		a.System != "b200_sxm" || a.Backend != "vllm" || a.TP != 4 || a.MoETP != 4 || a.BatchSize != 8 || a.TTFTMS != 67.5 || a.Layout() != "TP" {
		t.Fatalf("aggregated row %+v", a)
	}
	for i, want := range []string{
		"", "mode disagg", "silicon_concurrency not recorded", "pp_size 2", `sample.csv:6: silicon_data_source: silicon_concurrency="abc"`,
		"", `sample.csv:8: attention_dp_size: "0" is not a positive integer`,
	} {
		if got := rows[i].Unsupported; (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Fatalf("row %d: unsupported %q, want %q", i+2, got, want)
		}
	}
	// The shared format stays strict: a bad field is an error naming file, line and field.
	if _, err := Parse(strings.NewReader(header+"634,abc,2026-04-22,0.19.0,fp8,fp8,fp8,1024,1024,8,4,1,4,1,67.5,8.79\n"), "s.csv"); err == nil ||
		!strings.Contains(err.Error(), "s.csv:2: concurrency") {
		t.Fatalf("shared format, bad concurrency: %v", err)
	}
	rep, err := Validate(context.Background(), rows[:3], Options{Benchmark: Benchmark{Name: "tiny", KVCacheDtype: model.KVFP8,
		BlockSize: 32, GPUMemoryUtilization: 0.9, BatchedTokensPerISL: 2, MaxNumSeqs: 1024, Float32MatmulPrecision: model.PrecisionHigh,
		RangeRatio: 1, RequestsPerSlot: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validated != 1 || rep.Skipped != 2 || !strings.Contains(rep.Rows[1].Skipped, "mode disagg") ||
		!strings.Contains(rep.Rows[2].Skipped, "silicon_concurrency not recorded") {
		t.Fatalf("validated %d skipped %d: %+v", rep.Validated, rep.Skipped, rep.Rows)
	}
}

// InferenceX's script set VLLM_FLOAT32_MATMUL_PRECISION=high from 2026-04-21 (commit
// 41ed82dc1): the rows measured from the next day are replayed with the TF32 gate, earlier
// and undated ones with vLLM's default; an explicit precision applies to every row.
func TestFloat32PrecisionByDate(t *testing.T) {
	b := InferenceX()
	for _, c := range []struct{ measured, want string }{
		{"2026-04-22", model.PrecisionHigh}, {"2026-05-01T10:00:00Z", model.PrecisionHigh},
		{"2026-04-21", model.PrecisionHighest}, {"2026-04-03", model.PrecisionHighest}, {"", model.PrecisionHighest}, {"soon", model.PrecisionHighest},
	} {
		if got := b.deployment(Row{Measured: c.measured, TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4, ISL: 1024, OSL: 1024}).Float32MatmulPrecision; got != c.want {
			t.Fatalf("measured %q: %s, want %s", c.measured, got, c.want)
		}
	}
	b.Float32MatmulPrecision = model.PrecisionHighest
	if got := b.deployment(Row{Measured: "2026-04-22", TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4}).Float32MatmulPrecision; got != model.PrecisionHighest {
		t.Fatalf("explicit highest: %s", got)
	}
	b.Float32MatmulPrecision = "medium"
	if err := b.check(); err == nil || !strings.Contains(err.Error(), "float32_matmul_precision") {
		t.Fatalf("medium: %v", err)
	}
}

// A short closed-loop replay: predictions exist, identical rows share one replay, unsupported
// rows are skipped with a reason, and the JSON carries the documented keys.
func TestValidateSmall(t *testing.T) {
	in := header +
		",4,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,4,4,1,4,1,30.0,8.0\n" +
		",4,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,4,4,1,4,1,32.0,8.4\n" +
		",4,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,4,4,1,1,4,30.0,8.0\n" +
		"691,16,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,16,4,4,1,16,70.0,10.0\n" +
		",16,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,4,1,4,1,4,70.0,10.0\n" +
		"691,16,2026-04-03,0.19.0,fp8,fp8,fp8,256,64,4,4,4,1,16,76.0,10.6\n" +
		",4,2026-04-03,0.19.0,nvfp4,nvfp4,nvfp4,256,64,4,4,1,4,1,30.0,8.0\n" +
		",4,2026-04-03,0.11.0,fp8,fp8,fp8,256,64,4,4,1,4,1,30.0,8.0\n"
	rows, err := Parse(strings.NewReader(in), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{Override: func(b *Benchmark) { b.RequestsPerSlot = 3 }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validated != 6 || rep.Skipped != 2 {
		t.Fatalf("validated %d skipped %d", rep.Validated, rep.Skipped)
	}
	a, b := rep.Rows[0], rep.Rows[1]
	if a.PredTTFTMS <= 0 || a.PredTPOTMS <= 0 || a.PredTTFTMS != b.PredTTFTMS || a.PredTPOTMS != b.PredTPOTMS {
		t.Fatalf("identical rows: %+v / %+v", a, b)
	}
	if want := (a.PredTPOTMS - 8.0) / 8.0 * 100; a.TPOTErrPct != want {
		t.Fatalf("error %g, want %g", a.TPOTErrPct, want)
	}
	// A decode step of 4 requests costs milliseconds on this model, a 256-token prefill more.
	if a.PredTPOTMS < 4 || a.PredTPOTMS > 15 || a.PredTTFTMS < a.PredTPOTMS {
		t.Fatalf("implausible prediction: TTFT %g ms, TPOT %g ms", a.PredTTFTMS, a.PredTPOTMS)
	}
	// Labelled attention_dp 4 on TP-4 attention with batch = concurrency / 4: a TEP run.
	if c := rep.Rows[5]; c.Skipped != "" || c.ValidatedAs != "TEP" || !strings.Contains(c.Note, "validated as TEP (tp 4, moe_ep 4) at batch = concurrency 16") {
		t.Fatalf("converted row: %+v", c)
	}
	for i, want := range map[int]string{3: "attention_dp 4", 4: "attention_dp 4"} {
		if !strings.Contains(rep.Rows[i].Skipped, want) {
			t.Fatalf("row %d skipped %q, want %q", i, rep.Rows[i].Skipped, want)
		}
	}
	// An NVFP4 row runs NVIDIA's FP4 checkpoint's tables; a row of a version without tables
	// is replayed on the nearest embedded one, and says so.
	if r := rep.Rows[6]; r.Skipped != "" || r.PredTPOTMS <= 0 || r.PredTPOTMS >= rep.Rows[0].PredTPOTMS {
		t.Fatalf("nvfp4 row: %+v (FP8 row TPOT %g ms)", r, rep.Rows[0].PredTPOTMS)
	}
	if r := rep.Rows[7]; r.Skipped != "" || r.BackendVersion != "0.11.0" || r.ReplayedVersion != "0.19.0" {
		t.Fatalf("0.11.0 row: %+v", r)
	}
	wantMAPE := 0.0
	for _, i := range []int{0, 1, 2, 5, 6, 7} {
		wantMAPE += abs(rep.Rows[i].TPOTErrPct) / 6
	}
	if d := rep.TPOTMAPE - wantMAPE; d > 1e-9 || d < -1e-9 {
		t.Fatalf("TPOT MAPE %g, want %g", rep.TPOTMAPE, wantMAPE)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	row := js["rows"].([]any)[0].(map[string]any)
	for _, k := range []string{"pred_ttft_ms", "pred_tpot_ms", "silicon_ttft_ms", "silicon_tpot_ms", "concurrency", "tp_size", "moe_ep_size"} {
		if _, ok := row[k]; !ok {
			t.Fatalf("row JSON lacks %s: %v", k, row)
		}
	}
	for _, k := range []string{"ttft_mape", "tpot_mape"} {
		if _, ok := js[k]; !ok {
			t.Fatalf("report JSON lacks %s", k)
		}
	}
	buf.Reset()
	if err := rep.WriteTable(&buf); err != nil || !strings.Contains(buf.String(), "TPOT MAPE") || !strings.Contains(buf.String(), "skipped: attention_dp 4") {
		t.Fatalf("table: %v\n%s", err, buf.String())
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// validateFile parses a silicon CSV and replays it under the default benchmark.
func validateFile(t *testing.T, r io.Reader, path string) ([]Row, *Report) {
	t.Helper()
	rows, err := Parse(r, path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rows, rep
}

// The shared silicon rows: the accuracy docs/validation.md reports, guarded against regressions.
func TestValidateSharedSilicon(t *testing.T) {
	const path = "../../shared/aic/silicon_minimax_m2.5_b200_vllm_isl1024_tp4.csv"
	f, err := os.Open(path)
	if err != nil {
		t.Skip("../shared/aic silicon rows not present: ", err)
	}
	defer f.Close()
	if testing.Short() {
		t.Skip("replays 34 closed-loop benchmarks; skipped in -short")
	}
	rows, rep := validateFile(t, f, path)
	// The 8 rows labelled attention_dp 4 are TEP runs (converted labels): none is skipped.
	if rep.Validated != 34 || rep.Skipped != 0 || rep.Benchmark.Name != "inferencex" {
		t.Fatalf("%s: validated %d, skipped %d; want all 34", rep.Benchmark.Name, rep.Validated, rep.Skipped)
	}
	notes := 0
	for _, r := range rep.Rows {
		if r.Note != "" {
			notes++
			if r.ValidatedAs != "TEP" || r.AttentionDP != 4 {
				t.Fatalf("line %d: labelled adp %d validated as %s", r.Line, r.AttentionDP, r.ValidatedAs)
			}
		}
	}
	if notes != 8 {
		t.Fatalf("%d rows carry a conversion note, want the 8 labelled attention_dp 4", notes)
	}
	high := 0
	for _, r := range rep.Rows {
		if r.Float32MatmulPrecision == model.PrecisionHigh {
			high++
		}
	}
	if high != 8 {
		t.Fatalf("%d rows replayed with VLLM_FLOAT32_MATMUL_PRECISION=high, want the 8 measured on 2026-04-22", high)
	}
	t.Logf("TTFT MAPE %.1f%%, TPOT MAPE %.1f%%", rep.TTFTMAPE, rep.TPOTMAPE)
	if rep.TTFTMAPE > TTFTMAPEBound || rep.TPOTMAPE > TPOTMAPEBound {
		t.Fatalf("TTFT MAPE %.1f%% (bound %g), TPOT MAPE %.1f%% (bound %g)", rep.TTFTMAPE, TTFTMAPEBound, rep.TPOTMAPE, TPOTMAPEBound)
	}
	// What remains of TTFT is a shortfall at every concurrency (docs/validation.md: per-concurrency table).
	for _, c := range rep.Concurrencies {
		if c.TTFTGapMS <= 0 {
			t.Errorf("concurrency %d: TTFT over-predicted by %.1f ms; docs/validation.md says short everywhere", c.Concurrency, -c.TTFTGapMS)
		}
	}

	// The textbook replay (8192 batched tokens, fixed lengths, step-synchronous) is further off.
	ideal, err := Validate(context.Background(), rows, Options{Benchmark: Ideal()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ideal: TTFT MAPE %.1f%%, TPOT MAPE %.1f%%", ideal.TTFTMAPE, ideal.TPOTMAPE)
	if !(ideal.TTFTMAPE > rep.TTFTMAPE+5) {
		t.Fatalf("ideal TTFT MAPE %.1f%%, inferencex %.1f%%: replaying the benchmark as run should be clearly closer", ideal.TTFTMAPE, rep.TTFTMAPE)
	}
}

// The client's lengths: uniform integers in [⌊hi × ratio⌋, hi], at least 1, the same for a
// seed; ratio 1 is the fixed length.
func TestSampleLengths(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(t, "n")
		hi := rapid.IntRange(1, 100000).Draw(t, "hi")
		ratio := rapid.Float64Range(0.01, 1).Draw(t, "ratio")
		seed := rapid.Uint64().Draw(t, "seed")
		got := sampleLengths(n, hi, ratio, seed)
		lo := max(int(float64(hi)*ratio), 1)
		if len(got) != n {
			t.Fatalf("%d lengths, want %d", len(got), n)
		}
		for _, v := range got {
			if v < lo || v > hi {
				t.Fatalf("length %d outside [%d, %d]", v, lo, hi)
			}
		}
		if !slices.Equal(got, sampleLengths(n, hi, ratio, seed)) {
			t.Fatal("same seed, different lengths")
		}
		if ratio == 1 && slices.ContainsFunc(got, func(v int) bool { return v != hi }) {
			t.Fatalf("ratio 1 gave %v", got)
		}
	})
	// 10,000 draws from [800, 1000] average 900 within 2.
	if m := mean(sampleLengths(10000, 1000, 0.8, 1)); m < 898 || m > 902 {
		t.Fatalf("mean length %g, want about 900", m)
	}
}

func mean(v []int) float64 {
	s := 0
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

// The inferencex profile is the benchmark as InferenceX ran it: server arguments per row,
// the client's length spread, a warm-up that is not measured.
func TestInferenceXProfile(t *testing.T) {
	b := InferenceX()
	row := Row{BackendVersion: "0.19.0", Concurrency: 8, ISL: 1024, OSL: 1024, BatchSize: 8, TP: 4, AttentionDP: 1, MoETP: 1, MoEEP: 4}
	d := b.deployment(row)
	if d.MaxNumBatchedTokens != 2048 || d.BlockSize != 32 || d.KVCacheDtype != "fp8" || d.MaxNumSeqs != 1024 ||
		!d.AsyncScheduling || !d.NoPrefixCaching || d.ContextLength != 2248 || d.GPUMemoryUtilization != 0.9 {
		t.Fatalf("inferencex deployment for ISL 1024: %+v", d)
	}
	row.ISL = 8192
	if d := b.deployment(row); d.MaxNumBatchedTokens != 16384 {
		t.Fatalf("batched tokens at ISL 8192: %d, want 2 × ISL", d.MaxNumBatchedTokens)
	}
	if b.RangeRatio != 0.8 || b.WarmupPerSlot != 2 || b.RequestsPerSlot != 10 {
		t.Fatalf("client: %+v", b)
	}
	// The client's request path as measured (silicon/requestpath), in every InferenceX run.
	if d := b.deployment(row); d.RequestPathUS != InferenceXRequestPathUS || d.StreamEndUS != InferenceXStreamEndUS ||
		InferenceXRequestPathUS <= 0 || InferenceXStreamEndUS <= 0 || !strings.Contains(b.String(), "request path") {
		t.Fatalf("inferencex request path %d µs, stream end %d µs (%s)", d.RequestPathUS, d.StreamEndUS, b)
	}
	for _, run := range InferenceXRuns() {
		if run.Benchmark.Name == "inferencex" && (run.Benchmark.RequestPathUS != InferenceXRequestPathUS || run.Benchmark.StreamEndUS != InferenceXStreamEndUS) {
			t.Fatalf("%s %s: request path %d / %d µs", run.Model, run.System, run.Benchmark.RequestPathUS, run.Benchmark.StreamEndUS)
		}
	}
	// The script's --max-cudagraph-capture-size 2048, and the text prompts its client sends.
	if d := b.deployment(row); d.MaxCUDAGraphCaptureSize != 2048 || d.CUDAGraphMaxTokens() != 2048 || d.APIServerTokenizeNS != 3400 {
		t.Fatalf("inferencex graphs and tokenisation: capture %d (graphs up to %d tokens), tokenise %d ns/token; want 2048, 2048, 3400",
			d.MaxCUDAGraphCaptureSize, d.CUDAGraphMaxTokens(), d.APIServerTokenizeNS)
	}
	if got, err := BenchmarkNamed("inferencex"); err != nil || got != b {
		t.Fatalf("named profile: %+v %v", got, err)
	}
	if _, err := BenchmarkNamed("mlperf"); err == nil || !strings.Contains(err.Error(), "inferencex, ideal") {
		t.Fatalf("unknown profile: %v", err)
	}

	rows, err := Parse(strings.NewReader(header+",8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,256,8,4,1,4,1,60.0,8.0\n"), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	// These rows are the seed's (MiniMax-M2.5 FP8 on B200 from 2026-04-03), whose run is
	// InferenceX(); each variant changes one setting of it.
	run := func(b Benchmark) Result {
		rep, err := Validate(context.Background(), rows, Options{Override: func(x *Benchmark) { *x = b }, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Benchmark != b {
			t.Fatalf("report names benchmark %+v, ran %+v", rep.Benchmark, b)
		}
		return rep.Rows[0]
	}
	// The warm-up drains before the timed requests start and prefix caching is off, so it
	// leaves no trace in what is measured.
	noWarm := b
	noWarm.WarmupPerSlot = 0
	if w, n := run(b), run(noWarm); w.PredTTFTMS != n.PredTTFTMS || w.PredTPOTMS != n.PredTPOTMS {
		t.Fatalf("warm-up counted: TTFT %.3f vs %.3f ms without it", w.PredTTFTMS, n.PredTTFTMS)
	}
	// Fixed lengths keep the eight prompts in lock-step: every wave prefills together. The
	// client's spread breaks the lock-step, so TTFT drops.
	fixed := b
	fixed.RangeRatio = 1
	f, s := run(fixed).PredTTFTMS, run(b).PredTTFTMS
	if !(s < 0.9*f) {
		t.Fatalf("TTFT fixed %.1f ms, spread %.1f ms: want the spread clearly lower", f, s)
	}
	// Async scheduling makes a prompt arriving at a busy worker wait one more step.
	sync := b
	sync.AsyncScheduling = false
	if a, y := run(b).PredTTFTMS, run(sync).PredTTFTMS; !(a > y) {
		t.Fatalf("TTFT async %.1f ms, sync %.1f ms: want async higher", a, y)
	}
	rep, err := Validate(context.Background(), rows, Options{Benchmark: b})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil || !strings.Contains(buf.String(), "benchmark inferencex: fp8 KV cache, block 32, sized as vLLM's profiler sizes it, max_num_batched_tokens 2 × ISL") ||
		!strings.Contains(buf.String(), "CUDA graphs up to 2048 tokens, all-reduce + RMSNorm fused where the vLLM release does by default (from 0.18 at TP > 1); lengths uniform in [0.8 × ISL/OSL, ISL/OSL], text prompts tokenised by the API server at 3400 ns/token, a 2 ms window's prompts one after another, released together when the last is done (vLLM 0.16 on), request path 1960 µs from send to handler and 980 µs from a stream's last token to the next send (measured here, not on the DGX host), 2 warm-up + 10 timed requests per slot") {
		t.Fatalf("table: %v\n%s", err, buf.String())
	}
	for _, bad := range []func(*Benchmark){
		func(b *Benchmark) { b.RangeRatio = 1.5 },
		func(b *Benchmark) { b.RequestsPerSlot = 0 },
		func(b *Benchmark) { b.BatchedTokensPerISL, b.MaxNumBatchedTokens = 0, 0 },
	} {
		if _, err := Validate(context.Background(), rows, Options{Override: bad}); err == nil || !strings.Contains(err.Error(), "benchmark inferencex") {
			t.Fatalf("bad benchmark: %v", err)
		}
	}
}

// What the replays hold: shared rows TTFT 12.6 %, TPOT 5.7 %; other shapes of testdata TTFT
// 6.0 %, TPOT 3.7 % (6.5 / 3.8 % before model validate sized caches by vLLM's budget), with the seed script's --max-cudagraph-capture-size 2048 (bddbf403), its
// text prompts tokenised by the API server, the client's request path as measured
// (silicon/requestpath: 13.1 / 5.7 % and 6.4 / 3.8 % without it), vLLM 0.19's default fused
// all-reduce + RMSNorm (model.VLLMFusesAllReduceRMS) and MiniMax's per-layer QK-norm priced
// as the three kernels vLLM 0.19 runs (model import's default). The 2 × 2 ablation of the
// last two (docs/validation.md, "QK-norm by the source"): AIConfigurator's QK-norm op list 10.3 / 5.2 %
// fused, 7.6 / 6.0 % unfused; vLLM's kernels unfused 10.4 / 4.5 %. Issue 19's targets, 10 % and
// 5 %, are missed on the shared rows: both mechanisms the source says those runs had shorten
// every step, and so widen the TTFT shortfall that remains unexplained (docs/validation.md, "What the
// remaining shortfall is").
const (
	TTFTMAPEBound = 13.0
	TPOTMAPEBound = 6.0
)

// A file of thousands of other rows (AIConfigurator's whole sample) would bury the table in
// skipped lines: past listSkipped they are counted by reason, without the row's own details.
func TestTableGroupsManySkippedRows(t *testing.T) {
	rep := &Report{Benchmark: InferenceX()}
	for i := 0; i < 50; i++ {
		reason := fmt.Sprintf("sample.csv:%d: tp_size: \"x\" is not a positive integer", i+2)
		if i%5 == 0 {
			reason = "model: no step-time table for A on b with vllm 1, layout tp1 (want embedded tables/a.json; have …)"
		}
		rep.Rows = append(rep.Rows, Result{Row: Row{Line: i + 2}, Skipped: reason})
	}
	rep.summarise()
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"(50 skipped)", "skipped rows by reason",
		"    40  tp_size: \"x\" is not a positive integer (first: line 3)",
		"    10  model: no step-time table for A on b with vllm 1, layout tp1 (first: line 2)",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "skipped: ") {
		t.Fatalf("skipped rows listed one by one past %d:\n%s", listSkipped, out)
	}
}

// An SGLang or TRT-LLM row labelled tp = moe_tp × moe_ep with moe_tp = moe_ep = N ≥ 4 is read
// as the TEP worker of N GPUs it measured; other labels (tp 4 with 2 × 2 among them), and vLLM
// rows, are left as they are.
func TestProductTEP(t *testing.T) {
	for _, c := range []struct {
		backend                    string
		tp, dp, moeTP, moeEP, want int
	}{{"trtllm", 64, 1, 8, 8, 8}, {"sglang", 16, 1, 4, 4, 4}, {"trtllm", 8, 1, 8, 1, 0}, {"trtllm", 8, 1, 1, 8, 0},
		{"trtllm", 1, 64, 8, 8, 0}, {"trtllm", 32, 1, 4, 8, 0}, {"trtllm", 4, 1, 2, 2, 0}, {"vllm", 64, 1, 8, 8, 0}, {"", 16, 1, 4, 4, 0}} {
		r, note, ok := productTEP(Row{Backend: c.backend, TP: c.tp, AttentionDP: c.dp, MoETP: c.moeTP, MoEEP: c.moeEP})
		if ok != (c.want > 0) || ok && (r.TP != c.want || r.MoETP != 1 || r.MoEEP != c.want || r.Layout() != "TEP" || !strings.Contains(note, "validated as TEP")) {
			t.Fatalf("%s tp %d dp %d moe_tp %d moe_ep %d: %v %q %+v, want tp %d", c.backend, c.tp, c.dp, c.moeTP, c.moeEP, ok, note, r, c.want)
		}
	}
}

// A row whose MoE labels span more GPUs than its tp, with attention_dp left blank, is read as
// AIConfigurator writes its layouts (dp × tp = moe_tp × moe_ep): vLLM data-parallel attention.
// Complete labels and dense labels are left as they are.
func TestImpliedDP(t *testing.T) {
	for _, c := range []struct {
		tp, moeTP, moeEP, wantDP int
	}{{1, 2, 1, 2}, {1, 4, 1, 4}, {2, 4, 1, 2}, {2, 1, 2, 0}, {4, 4, 1, 0}, {4, 1, 1, 0}, {4, 2, 1, 0}, {3, 4, 1, 0}} {
		r, note, ok := impliedDP(Row{TP: c.tp, AttentionDP: 1, MoETP: c.moeTP, MoEEP: c.moeEP})
		if ok != (c.wantDP > 0) || ok && (r.AttentionDP != c.wantDP || r.Layout() != "DP" || !strings.Contains(note, fmt.Sprintf("--data-parallel-size %d", c.wantDP))) {
			t.Fatalf("tp %d moe_tp %d moe_ep %d: %v %q %+v, want attention_dp %d", c.tp, c.moeTP, c.moeEP, ok, note, r, c.wantDP)
		}
	}
	if _, _, ok := impliedDP(Row{TP: 1, AttentionDP: 2, MoETP: 2, MoEEP: 1}); ok {
		t.Fatal("a row with attention_dp labelled was re-read")
	}
	if _, _, ok := impliedDP(Row{Backend: "sglang", TP: 1, AttentionDP: 1, MoETP: 2, MoEEP: 1}); ok {
		t.Fatal("an SGLang row was read with vLLM's flags")
	}
}
