package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/routerlab/routerlab/engine"
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/trace"
)

// Fingerprint is the canonical description of an experiment: every setting that changes a
// result, as key=value pairs in a fixed order (routerlab's version, the trace, the timing
// tables, the deployment and router, the workload, then goal, sweep and validation settings
// when it describes a sweep). Keys are the experiment file's dotted keys where there is one.
// Its JSON form, an object whose keys keep that order, is its stable encoding: equal
// fingerprints encode to equal bytes.
type Fingerprint []Setting

// Setting is one key=value pair of a Fingerprint.
type Setting struct{ Key, Value string }

// KeyVersion is the fingerprint key of the routerlab version. A changed version is worth
// reporting but does not make two experiments different.
const KeyVersion = "routerlab_version"

// KeyTimingTables is the fingerprint key of the timing tables the experiment's deployments
// use: their digests (model.Worker.TableDigest), sorted, joined by "; ".
const KeyTimingTables = "timing_tables"

// Get returns the value of key.
func (fp Fingerprint) Get(key string) (string, bool) {
	for _, s := range fp {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// MarshalJSON writes the fingerprint as one JSON object with its keys in order.
func (fp Fingerprint) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, s := range fp {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(s.Key)
		v, _ := json.Marshal(s.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of string values, keeping its key order. Duplicate or
// empty keys are errors.
func (fp *Fingerprint) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("experiment fingerprint: want a JSON object of strings")
	}
	out := Fingerprint{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("experiment fingerprint: %w", err)
		}
		key, _ := tok.(string)
		if key == "" || seen[key] {
			return fmt.Errorf("experiment fingerprint: empty or duplicate key %q", key)
		}
		seen[key] = true
		tok, err = dec.Token()
		if err != nil {
			return fmt.Errorf("experiment fingerprint: %s: %w", key, err)
		}
		val, ok := tok.(string)
		if !ok {
			return fmt.Errorf("experiment fingerprint: %s: want a string value", key)
		}
		out = append(out, Setting{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("experiment fingerprint: %w", err)
	}
	*fp = out
	return nil
}

// Digest is the SHA-256 of the fingerprint's JSON encoding, in hex: a short name of the
// experiment.
func (fp Fingerprint) Digest() string {
	b, _ := fp.MarshalJSON()
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Change is one key whose value differs between two fingerprints. A key missing on one
// side has the value "(absent)" there.
type Change struct{ Key, Old, New string }

func (c Change) String() string { return fmt.Sprintf("%s: %s → %s", c.Key, c.Old, c.New) }

const absent = "(absent)"

// Diff lists the keys whose values differ from old to new: old's keys in old's order, then
// keys only new has.
func Diff(old, new Fingerprint) []Change {
	var out []Change
	for _, s := range old {
		v, ok := new.Get(s.Key)
		if !ok {
			v = absent
		}
		if v != s.Value {
			out = append(out, Change{s.Key, s.Value, v})
		}
	}
	for _, s := range new {
		if _, ok := old.Get(s.Key); !ok {
			out = append(out, Change{s.Key, absent, s.Value})
		}
	}
	return out
}

// Version is this build's routerlab version: the module version `go install …@version`
// stamps, else the VCS revision `go build` stamps (with "+dirty" for uncommitted changes),
// else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "devel"
	case dirty:
		return rev + "+dirty"
	}
	return rev
}

// Fingerprint describes a sweep of the file: its search space as lists, workload, goal, sweep
// and validation settings. Without the trace loaded it cannot name the trace's content or the
// timing tables; Experiment.Fingerprint can.
func (f *File) Fingerprint() Fingerprint {
	return f.fingerprint(nil, "", f.listText, -1)
}

// Fingerprint describes a sweep of the experiment: File.Fingerprint with the trace's content
// and the timing tables of every deployment in the search space.
func (e *Experiment) Fingerprint() Fingerprint {
	return e.File.fingerprint(e.Trace, e.tableDigests(), e.File.listText, -1)
}

// PointFingerprint describes one replay: the experiment at point p on its first `requests`
// requests (0 = all), without the sweep's settings.
func (e *Experiment) PointFingerprint(p Point, requests int) Fingerprint {
	at := func(key string) string {
		v, _ := e.File.At(p, key)
		return canonical(key, v)
	}
	return e.File.fingerprint(e.Trace, e.tableDigests(), at, len(e.Trace.First(requests).Requests))
}

func (e *Experiment) tableDigests() string {
	var ds []string
	for _, w := range e.workers {
		ds = append(ds, w.TableDigest())
	}
	slices.Sort(ds)
	return strings.Join(slices.Compact(ds), "; ")
}

// listText is a list-capable key's values: one value, or a flow list.
func (f *File) listText(key string) string {
	vals := f.Values(key)
	if len(vals) == 1 {
		return canonical(key, vals[0])
	}
	texts := make([]string, len(vals))
	for i, v := range vals {
		texts[i] = canonical(key, v)
	}
	return "[" + strings.Join(texts, ", ") + "]"
}

// canonical writes a value of key one way: numbers (1.0 and 1 are the same credit), and
// kv_cache_dtype auto as the dtype it means.
func canonical(key string, v Value) string {
	if key == KeyKVCacheDtype {
		return kvCacheDtype(v)
	}
	if v.IsNum {
		return num(v.Num)
	}
	return v.Text
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// fingerprint lists the settings in canonical order. tr and tables may be unknown (nil, "");
// list gives a list-capable search_space key's value; replayRequests >= 0 describes a replay
// of that many requests instead of a sweep.
func (f *File) fingerprint(tr *trace.Trace, tables string, list func(string) string, replayRequests int) Fingerprint {
	return append(Fingerprint{{KeyVersion, Version()}, {KeySimulator, SimulatorDigest()}}, f.settings(tr, tables, list, replayRequests)...)
}

// settings is the fingerprint after the build's version and simulator digest: what the
// file says. It never computes the digest, so the digest's own replays can name --set keys.
func (f *File) settings(tr *trace.Trace, tables string, list func(string) string, replayRequests int) Fingerprint {
	var fp Fingerprint
	add := func(key, value string) { fp = append(fp, Setting{key, value}) }
	w := f.Workload
	path := w.TracePath
	if !strings.HasPrefix(path, trace.BuiltinPrefix) {
		path = filepath.Clean(path) // ./t and t are the same file (its bytes are in trace_digest)
	}
	add("workload.trace_path", path)
	if tr != nil {
		add("workload.trace_digest", tr.Digest)
		add("workload.trace_requests", strconv.Itoa(len(tr.Requests)))
	}
	if w.TraceFormat != "" && w.TraceFormat != string(trace.FormatMooncake) {
		// Absent for the default, as before other formats existed: the same bytes can read
		// as other requests (mooncake-delta).
		add("workload.trace_format", w.TraceFormat)
	}
	add("workload.trace_block_size", strconv.Itoa(w.TraceBlockSize))
	if tables != "" {
		add(KeyTimingTables, tables)
	}
	add("search_space.model_name", f.ModelName)
	if f.Quantization != "" { // absent from the checkpoint's own precision, as before the key existed
		add("search_space.quantization", f.Quantization)
	}
	add("search_space.backend_version", f.BackendVersion)
	if f.derive { // the derived list depends on the budgets; listed only when derived, so earlier experiments keep their fingerprint
		add("search_space.gpu_budget", strconv.Itoa(f.GPUBudget))
		add("search_space.min_gpu_budget", strconv.Itoa(f.MinGPUBudget))
	}
	for _, l := range f.lists {
		v := list(l.key)
		if atRouterDefault(l.key, v) || !f.disaggregated() && slices.Contains(disaggListKeys, l.key) || slices.Contains(plannerListKeys, l.key) && v == "default" {
			continue // listed only when not Dynamo's default, so earlier experiments keep their fingerprint
		}
		add("search_space."+l.key, v)
	}
	util := f.GPUMemoryUtilization
	if util == 0 {
		util = 0.9
	}
	blocks := "derived"
	if f.NumGPUBlocks > 0 {
		blocks = strconv.Itoa(f.NumGPUBlocks)
	}
	add("search_space.context_length", strconv.Itoa(f.ContextLength))
	add("search_space.gpu_memory_utilization", num(util))
	add("search_space.num_gpu_blocks", blocks)
	blockSize := strconv.Itoa(f.BlockSize)
	if f.blockSizeFor(model.BackendTRTLLM) != f.BlockSize && slices.ContainsFunc(f.Values(KeyBackend), func(v Value) bool { return v.Text == string(model.BackendTRTLLM) }) {
		blockSize += fmt.Sprintf(" (trtllm: %d)", engine.TRTLLMTokensPerBlock) // its own default, not given
	}
	add("search_space.block_size", blockSize)
	add("search_space.async_scheduling", strconv.FormatBool(f.AsyncScheduling))
	add("search_space.api_server_tokenize_ns", strconv.Itoa(f.APIServerTokenizeNS))
	if f.APIServerTokenizeBatching != "" { // listed only when given, so earlier experiments keep their fingerprint
		add("search_space.api_server_tokenize_batching", f.APIServerTokenizeBatching)
	}
	if f.RequestPathUS != 0 || f.StreamEndUS != 0 { // listed only when given, so earlier experiments keep their fingerprint
		add("search_space.request_path_us", strconv.Itoa(f.RequestPathUS))
		add("search_space.stream_end_us", strconv.Itoa(f.StreamEndUS))
	}
	add("search_space.max_cudagraph_capture_size", strconv.Itoa(f.MaxCUDAGraphCaptureSize))
	if f.CUDAGraphMode != "" { // listed only when given, so earlier experiments keep their fingerprint
		add("search_space.cudagraph_mode", f.CUDAGraphMode)
	}
	add("search_space."+KeyFloat32MatmulPrecision, f.float32Precision())
	if f.SharedExpertsStreamTokens != 0 { // listed only when given, so earlier experiments keep their fingerprint
		add("search_space.shared_experts_stream_tokens", strconv.Itoa(f.SharedExpertsStreamTokens))
	}
	if f.MemoryBudget != "" { // listed only when given, so earlier experiments keep their fingerprint
		add("search_space.memory_budget", f.MemoryBudget)
	}
	// The SGLang and TensorRT-LLM scheduler arguments, listed only when given.
	if sc := f.Scheduler; sc.SGLangPolicy != "" {
		add("search_space.sglang_schedule_policy", sc.SGLangPolicy)
	}
	if sc := f.Scheduler; sc.SGLangMaxPrefillTokens != 0 {
		add("search_space.sglang_max_prefill_tokens", strconv.Itoa(sc.SGLangMaxPrefillTokens))
	}
	if sc := f.Scheduler; sc.SGLangRecvInterval != 0 {
		add("search_space.sglang_scheduler_recv_interval", strconv.Itoa(sc.SGLangRecvInterval))
	}
	if sc := f.Scheduler; sc.SGLangConservativeness != 0 {
		add("search_space.sglang_schedule_conservativeness", num(sc.SGLangConservativeness))
	}
	if f.Scheduler.TRTLLMChunkedPrefill {
		add("search_space.trtllm_enable_chunked_prefill", "true")
	}
	if sc := f.Scheduler; sc.TRTLLMBatchWaitTimeoutIters != 0 {
		add("search_space.trtllm_batch_wait_timeout_iters", strconv.Itoa(sc.TRTLLMBatchWaitTimeoutIters))
	}
	if sc := f.Scheduler; sc.TRTLLMBatchWaitMaxTokensRatio != 0 {
		add("search_space.trtllm_batch_wait_max_tokens_ratio", num(sc.TRTLLMBatchWaitMaxTokensRatio))
	}
	if sc := f.Scheduler; sc.TRTLLMADPBalance {
		add("search_space.trtllm_adp_balance", "true")
		add("search_space.trtllm_adp_timeout_iters", strconv.Itoa(sc.TRTLLMADPTimeoutIters))
		add("search_space.trtllm_adp_batching_wait_iters", strconv.Itoa(sc.TRTLLMADPBatchingWaitIters))
	}
	if f.FuseAllReduceRMS != nil { // listed only when given (else backend_version's default)
		add("search_space.fuse_allreduce_rms", strconv.FormatBool(*f.FuseAllReduceRMS))
	}
	f.disaggSettings(add)
	f.plannerFingerprint(add) // listed only when not at their defaults
	add("workload.replay_concurrency", strconv.Itoa(w.ReplayConcurrency))
	add("workload.arrival_speedup_ratio", num(w.ArrivalSpeedupRatio))
	add("workload.seed", strconv.FormatUint(w.Seed, 10))
	add("workload.strict", strconv.FormatBool(w.Strict))
	if g := f.Goal; g.SLA.Set() { // listed only when given, so earlier experiments keep their fingerprint
		add("goal.sla.ttft_ms", num(g.SLA.TTFTMS))
		add("goal.sla.tpot_ms", num(g.SLA.TPOTMS))
		add("goal.sla.e2e_latency_ms", num(g.SLA.E2EMS))
		add("goal.sla.percentile", num(g.SLAPercentile))
	}
	if replayRequests >= 0 {
		add("workload.requests", strconv.Itoa(replayRequests))
		return fp
	}
	add("workload.search_requests", strconv.Itoa(w.SearchRequests))
	g := f.Goal
	add("goal.target", g.Target)
	add("goal.max_ttft_ms", num(g.MaxTTFTMS))
	add("goal.max_tpot_ms", num(g.MaxTPOTMS))
	add("goal.max_e2e_latency_ms", num(g.MaxE2EMS))
	for _, b := range [...]struct {
		key   string
		bound float64
	}{{"goal.max_itl_ms", g.MaxITLMS}, {"goal.max_p95_ttft_ms", g.MaxP95TTFTMS}, {"goal.max_p95_tpot_ms", g.MaxP95TPOTMS}, {"goal.max_p95_e2e_latency_ms", g.MaxP95E2EMS}} {
		if b.bound > 0 { // listed only when given, so earlier experiments keep their fingerprint
			add(b.key, num(b.bound))
		}
	}
	// sweep.parallel_evals is left out: results do not depend on it.
	s := f.Sweep
	add("sweep.algorithm", s.Algorithm)
	add("sweep.max_rounds", strconv.Itoa(s.MaxRounds))
	add("sweep.candidates_per_round", strconv.Itoa(s.CandidatesPerRound))
	add("sweep.seed", strconv.FormatUint(s.Seed, 10))
	add("validate.enabled", strconv.FormatBool(f.Validate.Enabled))
	add("validate.requests", strconv.Itoa(f.Validate.Requests))
	return fp
}
