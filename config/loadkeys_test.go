package config

import (
	"strings"
	"testing"

	"github.com/routerlab/routerlab/router"
)

const loadYAML = `search_space:
  model_name: MiniMaxAI/MiniMax-M2.5
  hardware_sku: b200_sxm
  router_queue_threshold: [none, 1.0]
  router_queue_policy: [wspt, fcfs]
  router_assume_kv_reuse: [false]
  active_prefill_tokens_threshold: [4096]
`

// Load keys parse as search_space lists: dimensions when listed, Dynamo's default at the
// default point when a list offers it, and in the fingerprint only when not at that default.
func TestLoadKeysParseAndFingerprint(t *testing.T) {
	f, err := Parse([]byte(loadYAML), "load.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dims []string
	for _, d := range f.Dimensions() {
		dims = append(dims, d.Key)
	}
	if got := strings.Join(dims, " "); !strings.Contains(got, "router_queue_threshold router_queue_policy") {
		t.Fatalf("dimensions %q lack the load lists", got)
	}
	p := f.DefaultPoint()
	val := func(key string) Value { v, _ := f.At(p, key); return v }
	c := loadConfig(val)
	if c.QueueThreshold != nil || c.QueuePolicy != "" || !c.NoAssumeKVReuse || c.ActivePrefillTokensThreshold == nil || *c.ActivePrefillTokensThreshold != 4096 {
		t.Fatalf("default point's load config %+v: want no queue, fcfs, no KV reuse, busy above 4096 tokens", c)
	}
	fp := map[string]string{}
	for _, s := range f.Fingerprint() {
		fp[s.Key] = s.Value
	}
	if fp["search_space.router_queue_threshold"] != "[none, 1]" || fp["search_space.router_assume_kv_reuse"] != "false" {
		t.Errorf("fingerprint %v", fp)
	}
	for _, k := range []string{"router_track_active_blocks", "router_track_output_blocks", "active_decode_blocks_threshold"} {
		if _, ok := fp["search_space."+k]; ok {
			t.Errorf("%s at Dynamo's default is in the fingerprint", k)
		}
	}
	for _, s := range Default().Fingerprint() {
		if _, isLoad := loadBlock.lookup(strings.TrimPrefix(s.Key, "search_space.")); isLoad {
			t.Errorf("the seed's fingerprint lists %s", s.Key)
		}
	}
	if err := f.Set("router_queue_policy=lcfs"); err != nil {
		t.Fatal(err)
	}
	if got := loadConfig(func(key string) Value { v, _ := f.At(nil, key); return v }).QueuePolicy; got != router.QueueLCFS {
		t.Fatalf("--set router_queue_policy=lcfs gives %q", got)
	}
}

func TestBadLoadValuesNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"router_queue_policy: [fcfs, sjf]", `load.yaml:4: search_space.router_queue_policy: unsupported value "sjf"`},
		{"router_queue_threshold: -0.5", `load.yaml:4: search_space.router_queue_threshold: value "-0.5" out of range`},
		{"active_decode_blocks_threshold: [2]", `load.yaml:4: search_space.active_decode_blocks_threshold: value "2" out of range`},
		{"router_active_sequence_stride: [1.5]", `load.yaml:4: search_space.router_active_sequence_stride: value "1.5" out of range`},
		{"router_track_prefill_tokens: [maybe]", `load.yaml:4: search_space.router_track_prefill_tokens: unsupported value "maybe"`},
		{"router_prefill_load_model: [fast]", `load.yaml:4: search_space.router_prefill_load_model: unsupported value "fast"`},
	} {
		src := "search_space:\n  model_name: MiniMaxAI/MiniMax-M2.5\n  hardware_sku: b200_sxm\n  " + tc.line + "\n"
		_, err := Parse([]byte(src), "load.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.line, err, tc.want)
		}
	}
}

func TestLoadCombinationsDynamoRefuses(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"router_track_output_blocks=true", "router_track_active_blocks=[true, false]"}, "search_space.router_track_output_blocks: true requires router_track_active_blocks true"},
		{[]string{"router_prefill_load_model=aic", "router_track_prefill_tokens=false"}, "search_space.router_prefill_load_model: aic requires router_track_prefill_tokens true"},
	} {
		f := Default()
		err := f.Apply(tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.sets, err, tc.want)
		}
	}
}
