package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Hostile or broken input ends in one clear error naming the place (file:line where there is
// one), never a panic, an out-of-memory crash or a silent success.
func TestBadInputEndsInANamedError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	line := func(ts int64) string {
		return `{"timestamp": ` + strconv.FormatInt(ts, 10) + `, "input_length": 600, "output_length": 20, "hash_ids": [1, 2]}` + "\n"
	}
	empty := write("empty.jsonl", "")
	blank := write("blank.jsonl", "\n  \n\n")
	huge := write("huge.jsonl", line(0)+line(1e17))
	late := write("late.jsonl", line(0)+line(5)+line(1e13))
	broken := write("broken.jsonl", line(0)+"\n"+`{"timestamp": 3, "input_length": 600, "output_length": 20, "hash_ids": [1]}`+"\n")
	long := write("long.jsonl", line(0)+`{"timestamp": 1, "input_length": 140000, "output_length": 20, "hash_ids": [`+strings.Repeat("7, ", 273)+`7]}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"empty trace", []string{"replay", "--trace", empty}, empty + ": no requests (the trace is empty)"},
		{"blank-line trace", []string{"trace", "stats", blank}, blank + ": no requests"},
		{"empty trace in a sweep", []string{"sweep", "--trace", empty, "--out", filepath.Join(dir, "s1")}, empty + ": no requests"},
		{"timestamp beyond the clock", []string{"replay", "--trace", huge, "--set", "workload.replay_concurrency=0"},
			huge + ":2: timestamp: 100000000000000000 ms / arrival_speedup_ratio 1 is beyond the simulation clock"},
		{"tiny speedup ratio", []string{"replay", "--trace", late, "--set", "workload.replay_concurrency=0", "--set", "workload.arrival_speedup_ratio=0.000001"},
			late + ":3: timestamp: 10000000000000 ms / arrival_speedup_ratio 1e-06"},
		{"bad line after a blank one", []string{"replay", "--trace", broken}, broken + ":3: hash_ids: has 1 ids"},
		{"strict over-long request", []string{"replay", "--trace", long, "--strict"}, long + ":2: input_length 140000 + output_length 20 = 140020 exceeds context_length 131072"},
		{"all requests rejected", []string{"replay", "--trace", long, "--requests", "1", "--set", "context_length=100"},
			long + ": all 1 requests rejected: input_length + output_length exceeds context_length 100 (first: " + long + ":1)"},
		{"negative --requests", []string{"replay", "--requests", "-5"}, "--requests: -5 must not be negative"},
		{"negative --parallel", []string{"sweep", "--parallel", "-2"}, "--parallel: -2 must not be negative"},
		{"negative --requests of a sweep", []string{"sweep", "--requests", "-1"}, "--requests: -1 must not be negative"},
		{"negative --first", []string{"trace", "subset", "--first", "-3", empty}, "--first: -3 must not be negative"},
		{"negative synth --requests", []string{"trace", "synth", "--requests", "-1"}, "--requests: -1 must not be negative"},
		{"negative --max-ttft-mape", []string{"model", "validate", "--silicon", empty, "--max-ttft-mape", "-1"}, "--max-ttft-mape: -1 must not be negative"},
		{"negative seed", []string{"sweep", "--seed", "-1"}, "sweep.seed: want a non-negative integer seed"},
		{"nats audit above 1", []string{"sweep", "--nats-audit", "1.5"}, "--nats-audit: 1.5 must be between 0 and 1"},
		{"nkey seed file that never ends", []string{"worker", "--nats", "nats://127.0.0.1:1", "--nats-nkey", "/dev/zero"}, "--nats-nkey: /dev/zero is not a regular file"},
		{"ack wait of 1ns", []string{"worker", "--nats", "nats://127.0.0.1:1", "--ack-wait", "1ns"}, "--ack-wait: 1ns must be at least 1s"},
		{"ack wait of 0s", []string{"worker", "--nats", "nats://127.0.0.1:1", "--ack-wait", "0s"}, "--ack-wait: 0s must be at least 1s"},
		{"negative ack wait", []string{"worker", "--nats", "nats://127.0.0.1:1", "--ack-wait", "-5s"}, "--ack-wait: -5s must not be negative"},
		{"worker --parallel 100000", []string{"worker", "--nats", "nats://127.0.0.1:1", "--parallel", "100000"}, "--parallel: 100000 must be between 1 and 1024"},
		{"NaN --fp32-tflops", []string{"model", "import", "--fp32-tflops", "NaN"}, "--fp32-tflops: NaN is not a finite number"},
		{"kernel flag without a deployment", []string{"model", "import", "--aic", dir, "--out", dir, "--attention-version", "0.18.0"},
			"model import: --attention-version applies to one deployment"},
		{"--moe-shape without a deployment", []string{"model", "import", "--aic", dir, "--out", dir, "--moe-shape", "3584,3072,896,16"},
			"model import: --moe-shape applies to one deployment"},
		{"malformed --moe-shape", []string{"model", "import", "--aic", dir, "--out", dir, "--sku", "h200_sxm", "--moe-shape", "3584,3072"},
			"model import: --moe-shape: moe shape \"3584,3072\": want hidden,inter,experts,topk"},
		{"NaN --max-ttft-mape", []string{"model", "validate", "--silicon", empty, "--max-ttft-mape", "NaN"}, "--max-ttft-mape: NaN is not a finite number"},
		{"trace copies past the budget", []string{"replay", "--requests", "100", "--trace", "builtin:toolagent:x10000"},
			"toolagent:x10000: 10000 copies of 23608 requests are 236080000, beyond the memory budget of 5000000 requests in a trace (at most :x211)"},
		{"synth past the budget", []string{"trace", "synth", "--requests", "2000000000"}, "toolagent: 2000000000 requests exceed the memory budget of 5000000 requests"},
		{"requests per slot past the budget", []string{"model", "validate", "--silicon", empty, "--requests-per-slot", "100000000"},
			"--requests-per-slot 100000000: want 1 to 1000 (per-slot counts: the memory budget of a row's replay)"},
		{"YAML nested 100,000 deep through --set", []string{"replay", "--set", "router_temperature=" + strings.Repeat("[", 100000)},
			"--set: search_space.router_temperature: nested more than 32 levels deep"},
		{"YAML .nan", []string{"replay", "--set", "router_temperature=.nan"}, "search_space.router_temperature: .nan is not a finite number"},
		{"infinite --max-tpot-mape", []string{"model", "validate", "--silicon", empty, "--max-tpot-mape", "+Inf"}, "--max-tpot-mape: +Inf is not a finite number"},
		{"model info --block-size 2^63-1", []string{"model", "info", "--block-size", "9223372036854775807"}, "block_size 9223372036854775807 must be at most 65536 tokens"},
		{"model info --max-num-seqs 2^63-1", []string{"model", "info", "--max-num-seqs", "9223372036854775807"}, "max_num_seqs 9223372036854775807 must be at most 1048576"},
		{"model info --moe-ep 2^63-1", []string{"model", "info", "--moe-ep", "9223372036854775807"}, "tp, attention_dp, moe_tp and moe_ep must be at most 4096"},
		{"--shared-experts-stream-tokens -2", []string{"model", "info", "--shared-experts-stream-tokens", "-2"}, "--shared-experts-stream-tokens: -2: want -1 (see --help) or a number from 0 up"},
		{"curve --router with a knob twice", []string{"curve", "--router", "prefill_load_scale=4,prefill_load_scale=8"},
			`--router "prefill_load_scale=4,prefill_load_scale=8": prefill_load_scale is set twice`},
		{"block_size 1 on the whole trace", []string{"replay", "--set", "block_size=1"},
			"block_size: 1 tokens makes the KV caches of this replay up to 27758336 blocks (the smaller of 8 workers × num_gpu_blocks 3469792 and the 207434482 blocks its 23608 requests fill), about 8047 MiB, over the 384 MiB a replay may take"},
	} {
		var out, errb bytes.Buffer
		code := Execute(tc.args, strings.NewReader(""), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want an error containing %q", tc.name, code, errb.String(), tc.want)
		}
	}
}

// /dev/zero, a file without a single newline, as a trace or an experiment file ends at the
// documented size limit with a clear error instead of exhausting memory.
func TestEndlessInputHitsTheSizeLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--trace", "/dev/zero"}, "/dev/zero:1: line does not open a JSON object and runs past 1 MiB: not read further (a row may be up to the 64 MiB limit)"},
		{[]string{"replay", "--config", "/dev/zero"}, "/dev/zero: (document): larger than the 1 MiB limit of an experiment file"},
		{[]string{"model", "validate", "--silicon", "/dev/zero"}, "/dev/zero: larger than the 16 MiB limit of a silicon CSV"},
		{[]string{"compare", "/dev/zero", "/dev/zero"}, "/dev/zero: larger than the 16 MiB limit of a replay report"},
	} {
		var out, errb bytes.Buffer
		if code := Execute(tc.args, strings.NewReader(""), &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// A UTF-8 byte-order mark, as some editors write, is accepted at the start of a trace and of
// an experiment file.
func TestByteOrderMarkIsAccepted(t *testing.T) {
	dir := t.TempDir()
	bom := "\xef\xbb\xbf"
	tr := filepath.Join(dir, "bom.jsonl")
	if err := os.WriteFile(tr, []byte(bom+`{"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [1, 2]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile("../examples/router-sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "bom.yaml")
	if err := os.WriteFile(cfg, append([]byte(bom), seed...), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Execute([]string{"replay", "--config", cfg, "--trace", tr, "--format", "json"}, strings.NewReader(""), &out, &errb); code != 0 ||
		!strings.Contains(out.String(), `"requests_completed": 1`) {
		t.Errorf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
}

// --shared-experts-stream-tokens -1 means no second stream, as --help says: accepted, and it
// changes nothing for a model without shared experts (MiniMax-M2.5).
func TestSharedExpertsStreamTokensMinusOne(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Execute([]string{"model", "info", "--shared-experts-stream-tokens", "-1"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var plain bytes.Buffer
	Execute([]string{"model", "info"}, strings.NewReader(""), &plain, &errb)
	if out.String() != plain.String() {
		t.Errorf("-1 changed model info of a model without shared experts:\n%s\nwant\n%s", out.String(), plain.String())
	}
}

// A control character in a value (here an escape sequence in a model name) is printed
// escaped in the error, never raw to the terminal.
func TestErrorsEscapeControlCharacters(t *testing.T) {
	var out, errb bytes.Buffer
	code := Execute([]string{"replay", "--set", "model_name=foo\x1b[2J\u009bbar\x07"}, strings.NewReader(""), &out, &errb)
	if code == 0 || strings.ContainsAny(errb.String(), "\x1b\x07") || strings.Contains(errb.String(), "\u009b") ||
		!strings.Contains(errb.String(), `foo\x1b[2J\u009bbar\a`) {
		t.Errorf("exit %d, stderr %q: want the name with its control characters escaped", code, errb.String())
	}
	if got := terminalSafe("plain\ttext\nnext é"); got != "plain\ttext\nnext é" {
		t.Errorf("terminalSafe changed plain text: %q", got)
	}
	if got := terminalSafe("bad\xffbyte"); got != `bad\xffbyte` {
		t.Errorf("terminalSafe of a non-UTF-8 byte: %q", got)
	}
}
