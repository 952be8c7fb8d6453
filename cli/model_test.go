package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runCmd executes one command with args and returns its stdout, stderr and error.
func runCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// The benchmark switches reach the replay and the JSON report; bad values name the flag.
func TestModelValidateBenchmarkFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.csv")
	csv := "config_id,concurrency,measured,backend_version,precision,gemm_quant_mode,moe_quant_mode,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n" +
		",8,2026-04-03,0.19.0,fp8,fp8,fp8,1024,256,8,4,1,4,1,60.0,8.0\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	ttft := func(args ...string) (float64, map[string]any) {
		out, _, err := runCmd(t, newModelValidateCmd(), append([]string{"--silicon", path, "--format", "json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var js map[string]any
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		return js["rows"].([]any)[0].(map[string]any)["pred_ttft_ms"].(float64), js
	}
	fixed, js := ttft()
	if js["range_ratio"] != 1.0 || js["async_scheduling"] != false || js["requests_per_slot"] != 10.0 {
		t.Fatalf("default benchmark %v %v %v", js["range_ratio"], js["async_scheduling"], js["requests_per_slot"])
	}
	spread, _ := ttft("--range-ratio", "0.8")
	both, js := ttft("--range-ratio", "0.8", "--async-scheduling")
	if js["range_ratio"] != 0.8 || js["async_scheduling"] != true {
		t.Fatalf("benchmark %v %v", js["range_ratio"], js["async_scheduling"])
	}
	if !(spread < fixed && both > spread) {
		t.Fatalf("TTFT fixed %.1f, spread %.1f, spread+async %.1f ms", fixed, spread, both)
	}
	for _, bad := range []string{"0", "1.2", "-0.5"} {
		_, _, err := runCmd(t, newModelValidateCmd(), "--silicon", path, "--range-ratio", bad)
		if err == nil || !strings.Contains(err.Error(), "--range-ratio "+bad) {
			t.Fatalf("--range-ratio %s: %v", bad, err)
		}
	}
}
