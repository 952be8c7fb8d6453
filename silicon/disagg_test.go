package silicon

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/routerlab/routerlab/model"
)

// disaggHeader is AIConfigurator's sample header, disaggregated columns included.
const disaggHeader = "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"

// A vLLM disaggregated row on embedded tables is replayed on a fleet of its pools, its TTFT
// holding the prompt's KV transfer at the stated bandwidth; SGLang's and TensorRT-LLM's are
// skipped with their reasons.
func TestDisaggRowReplays(t *testing.T) {
	csv := disaggHeader +
		"a,config_id=1; silicon_concurrency=4; measured=2026-01-01,vllm,0.19.0,Qwen/Qwen3-32B,h100_sxm,bf16,disagg,1024,64,,,,,,,,,1,2,2,1,1,0,0,4,1,2,1,1,0,0,100,10\n" +
		"b,config_id=2; silicon_concurrency=4; measured=2026-01-01,sglang,0.5.9,Qwen/Qwen3-32B,h100_sxm,bf16,disagg,1024,64,,,,,,,,,1,2,2,1,1,0,0,4,1,2,1,1,0,0,100,10\n" +
		"c,config_id=3; silicon_concurrency=4; measured=2026-01-01,trtllm,1.2.0rc5,Qwen/Qwen3-32B,h100_sxm,bf16,disagg,1024,64,,,,,,,,,1,2,2,1,1,0,0,4,1,2,1,1,0,0,100,10\n"
	rows, err := Parse(strings.NewReader(csv), "disagg.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{Benchmark: Ideal()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validated != 1 || rep.Rows[0].Skipped != "" || rep.Rows[0].ValidatedAs != "disagg" {
		t.Fatalf("validated %d; first row %+v", rep.Validated, rep.Rows[0])
	}
	w, err := model.NewWorker(Ideal().deployment(Row{Model: "Qwen/Qwen3-32B", System: "h100_sxm", BackendVersion: "0.19.0", TP: 2, MoETP: 2, MoEEP: 1, AttentionDP: 1, ISL: 1024, OSL: 64, Concurrency: 4}))
	if err != nil {
		t.Fatal(err)
	}
	transferMS := 1024 * float64(w.KVBytesPerTokenModel()) / (TransferGBps * 1e6) // the shortest prompt: ideal lengths are exact
	if r := rep.Rows[0]; r.PredTTFTMS <= transferMS || r.PredTPOTMS <= 0 {
		t.Fatalf("predicted TTFT %.3f ms (the transfer alone %.3f ms), TPOT %.3f ms", r.PredTTFTMS, transferMS, r.PredTPOTMS)
	}
	for i, want := range []string{"SGLang's disaggregated serving", "rejects TensorRT-LLM disaggregation"} {
		if r := rep.Rows[i+1]; !strings.Contains(r.Skipped, want) {
			t.Fatalf("row %d skipped %q, want it to say %q", i+2, r.Skipped, want)
		}
	}
}

// model validate accounts for every one of the sample's 1,602 disaggregated rows: each is
// validated or skipped with its reason, and the reasons are these.
func TestDisaggSampleAccounted(t *testing.T) {
	const path = "../../shared/aic/silicon_sample.csv"
	f, err := os.Open(path)
	if err != nil {
		t.Skip("../shared/aic/silicon_sample.csv not present: ", err)
	}
	defer f.Close()
	all, err := Parse(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, r := range all {
		if r.Mode == "disagg" {
			rows = append(rows, r)
		}
	}
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	for _, r := range rep.Rows {
		reason := r.Skipped
		switch {
		case reason == "":
			reason = "validated"
		case strings.HasPrefix(reason, "model: no step-time table"):
			reason = r.Backend + ": no step-time table"
		default:
			reason = r.Backend + ": " + reason
		}
		reasons[reason]++
	}
	want := map[string]int{
		"trtllm: mode disagg, TensorRT-LLM: not priced (Dynamo's replay rejects TensorRT-LLM disaggregation)":               1051,
		"sglang: mode disagg, SGLang: SGLang's disaggregated serving (its own KV transfer and scheduler) is not priced yet": 534,
		"vllm: no step-time table": 14,
		"vllm: silicon_concurrency not recorded in silicon_data_source: the load is unknown": 3,
	}
	if len(rows) != 1602 || len(reasons) != len(want) {
		t.Fatalf("%d disaggregated rows; reasons %v", len(rows), reasons)
	}
	for k, n := range want {
		if reasons[k] != n {
			t.Fatalf("reasons %v; want %d of %q", reasons, n, k)
		}
	}
}
