package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/routerlab/routerlab/internal/readlimit"

	"github.com/goccy/go-yaml"
	"github.com/parquet-go/parquet-go"
)

// Rows of the AIConfigurator operator tables (latency in milliseconds per call of one layer).

type gemmRow struct {
	Dtype   string  `parquet:"gemm_dtype,optional"`
	M       int64   `parquet:"m,optional"`
	N       int64   `parquet:"n,optional"`
	K       int64   `parquet:"k,optional"`
	Latency float64 `parquet:"latency,optional"`
}

type moeRow struct {
	Kernel       string  `parquet:"kernel_source,optional"`
	Dtype        string  `parquet:"moe_dtype,optional"`
	Tokens       int64   `parquet:"num_tokens,optional"`
	Hidden       int64   `parquet:"hidden_size,optional"`
	Inter        int64   `parquet:"inter_size,optional"`
	TopK         int64   `parquet:"topk,optional"`
	Experts      int64   `parquet:"num_experts,optional"`
	MoETP        int64   `parquet:"moe_tp_size,optional"`
	MoEEP        int64   `parquet:"moe_ep_size,optional"`
	Distribution string  `parquet:"distribution,optional"`
	Latency      float64 `parquet:"latency,optional"`
}

type attentionRow struct {
	Batch     int64   `parquet:"batch_size,optional"`
	ISL       int64   `parquet:"isl,optional"`
	Heads     int64   `parquet:"num_heads,optional"`
	KVHeads   int64   `parquet:"num_key_value_heads,optional"`
	HeadDim   int64   `parquet:"head_dim,optional"`
	Beam      int64   `parquet:"beam_width,optional"`
	AttnDtype string  `parquet:"attn_dtype,optional"`
	KVDtype   string  `parquet:"kv_cache_dtype,optional"`
	Step      int64   `parquet:"step,optional"`
	Window    int64   `parquet:"window_size,optional"`
	Latency   float64 `parquet:"latency,optional"`
}

type allreduceRow struct {
	Dtype   string  `parquet:"allreduce_dtype,optional"`
	GPUs    int64   `parquet:"num_gpus,optional"`
	Size    int64   `parquet:"message_size,optional"`
	Latency float64 `parquet:"latency,optional"`
	Mode    string  `parquet:"backend,optional"`
}

// readParquet reads every row of one table and records its digest.
func readParquet[T any](aicDir, rel string, srcs *[]Source) ([]T, error) {
	path := filepath.Join(aicDir, rel)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model import: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("model import: %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("model import: %s: %w", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	rows := make([]T, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("model import: %s: row %d: %w", path, n, err)
	}
	if int64(n) != pf.NumRows() {
		return nil, fmt.Errorf("model import: %s: read %d of %d rows", path, n, pf.NumRows())
	}
	*srcs = append(*srcs, Source{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(h.Sum(nil))})
	return rows, nil
}

// digestFile records the sha256 of a non-parquet input.
func digestFile(aicDir, rel string, srcs *[]Source) ([]byte, error) {
	b, err := readlimit.ReadFile(filepath.Join(aicDir, rel), 16<<20, "a model import's config or system file")
	if err != nil {
		return nil, fmt.Errorf("model import: %w", err)
	}
	sum := sha256.Sum256(b)
	*srcs = append(*srcs, Source{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:])})
	return b, nil
}

// systemFile is the part of an AIConfigurator system YAML the model needs.
type systemFile struct {
	GPU struct {
		MemBW        float64 `yaml:"mem_bw"`
		MemBWScaling float64 `yaml:"mem_bw_empirical_scaling_factor"`
		MemConstant  float64 `yaml:"mem_empirical_constant_latency"`
		MemCapacity  int64   `yaml:"mem_capacity"`
		BF16FLOPS    float64 `yaml:"bfloat16_tc_flops"`
	} `yaml:"gpu"`
	Misc struct {
		NCCLMem  map[int]int64 `yaml:"nccl_mem"`
		OtherMem int64         `yaml:"other_mem"`
	} `yaml:"misc"`
}

func parseGPUSpec(path string, b []byte) (GPUSpec, error) {
	var s systemFile
	if err := yaml.Unmarshal(b, &s); err != nil {
		return GPUSpec{}, fmt.Errorf("model import: %s: %w", path, err)
	}
	switch {
	case s.GPU.MemBW <= 0:
		return GPUSpec{}, fmt.Errorf("model import: %s: field gpu.mem_bw: missing or not positive", path)
	case s.GPU.MemBWScaling <= 0:
		return GPUSpec{}, fmt.Errorf("model import: %s: field gpu.mem_bw_empirical_scaling_factor: missing or not positive", path)
	case s.GPU.MemCapacity <= 0:
		return GPUSpec{}, fmt.Errorf("model import: %s: field gpu.mem_capacity: missing or not positive", path)
	case len(s.Misc.NCCLMem) == 0:
		return GPUSpec{}, fmt.Errorf("model import: %s: field misc.nccl_mem: missing", path)
	}
	return GPUSpec{MemCapacity: s.GPU.MemCapacity, MemBW: s.GPU.MemBW, MemBWScaling: s.GPU.MemBWScaling,
		MemConstantUS: s.GPU.MemConstant * 1e6, NCCLMem: s.Misc.NCCLMem, OtherMem: s.Misc.OtherMem}, nil
}

// bf16PeakFLOPS is a system file's dense BF16 tensor-core peak (0 when it names none).
func bf16PeakFLOPS(b []byte) float64 {
	var s systemFile
	if yaml.Unmarshal(b, &s) != nil {
		return 0
	}
	return s.GPU.BF16FLOPS
}

// checkContextAttention refuses context-attention rows of the model's head shape that imply
// more than twice the GPU's dense BF16 peak: a causal prefill of isl tokens costs
// 2 × batch × isl² × head_dim × heads FLOPs (QKᵀ and PV over half the square), and a row
// that much faster than the peak allows is not a measurement of that work. Twice, not once:
// the system files' peaks are datasheet figures (B300's is quoted from 2.25 to 2.5 PFLOP/s,
// and its 0.19.0 table has a row at 2.5), so only rows no clock or datasheet difference
// explains are refused — AIConfigurator's H200 vLLM 0.19.0 table has such rows at
// isl ≥ 4,096, up to 4.3 PFLOP/s against 989 TFLOP/s.
func checkContextAttention(rel string, rows []attentionRow, kvHeads, headDim int, peak float64) error {
	if peak <= 0 {
		return nil
	}
	worst, at := 0.0, attentionRow{}
	for _, r := range rows {
		if r.KVHeads != int64(kvHeads) || r.HeadDim != int64(headDim) || r.Window != 0 || r.Latency <= 0 {
			continue
		}
		flops := 2 * float64(r.Batch) * float64(r.ISL) * float64(r.ISL) * float64(r.HeadDim) * float64(r.Heads)
		if rate := flops / (r.Latency / 1e3); rate > worst {
			worst, at = rate, r
		}
	}
	if worst > 2*peak {
		return fmt.Errorf("%s: the row batch %d, isl %d, %d heads, %d KV heads, head_dim %d, %s KV (%.3f ms) implies %.0f TFLOP/s, more than twice the GPU's dense BF16 peak of %.0f: not a physical measurement; price attention from another version (--attention-version)",
			rel, at.Batch, at.ISL, at.Heads, at.KVHeads, at.HeadDim, at.KVDtype, at.Latency, worst/1e12, peak/1e12)
	}
	return nil
}

func msToUS(ms float64) float64 { return ms * 1000 }

// missing is the error for a filter that matched no measured rows.
func missing(table, what string) error {
	return fmt.Errorf("%s: no rows for %s", table, what)
}
