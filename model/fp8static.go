package model

import (
	"fmt"
	"path/filepath"
)

// TensorRT-LLM's per-tensor FP8 GEMMs with static activation scales.
//
// A ModelOpt per-tensor FP8 checkpoint (the 70B runs here serve nvidia/Llama-3.3-70B-
// Instruct-FP8) carries a calibrated input_scale on every linear layer; the importer's GEMM
// mode for it is fp8_static (ImportOptions.GEMMQuant), as AIConfigurator names it.
// TensorRT-LLM's FP8QDQLinearMethod.apply (tensorrt_llm/_torch/modules/linear.py) then
// quantises a BF16 input with that fixed scale (static_quantize_e4m3_per_tensor, one kernel)
// and takes an input that is already FP8 as it is; only a layer without input_scale computes
// the scale from the activation's amax first (quantize_e4m3_per_tensor). AIConfigurator's
// TRT-LLM collector measures its fp8 GEMM rows on weights without input_scale, so each row
// holds that dynamic path — amax, quantise, GEMM (collector/trtllm/collect_gemm.py at
// 095f58a5: "the collected fp8 GEMM includes the compute-scale overhead"; the same weights at
// d1fe22a6, December 2025, when the 1.2.0rc5 tables were collected). Its quantize tables
// measure the two overheads apart (collect_computescale.py: compute_scale = dynamic −
// static quantisation, scale_matrix = the static quantisation), and AIConfigurator prices a
// static FP8 GEMM as the row less compute_scale, and less scale_matrix too where the input
// arrives in FP8 (aic-core operators/gemm.rs, GemmOp::query, fp8_static; floored at the
// GEMM's roofline). The importer does the same for TensorRT-LLM's fp8_static GEMMs; a
// checkpoint whose activation scales are unknown keeps the collector's fp8 rows as measured.
//
// Which inputs arrive in FP8 is trtllmFP8Inputs' rule (backendkernels.go).

// quantRow is one row of AIConfigurator's FP8 quantisation overhead tables
// (<sku>/quantize/<backend>/<version>/computescale_perf.parquet, scale_matrix_perf.parquet).
type quantRow struct {
	M       int64   `parquet:"m,optional"`
	K       int64   `parquet:"k,optional"`
	Dtype   string  `parquet:"quant_dtype,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// staticFP8 holds the two overhead tables and the GPU's memory bandwidth (the floor).
type staticFP8 struct {
	computeScale, scaleMatrix []quantRow
	computeRel, matrixRel     string
	memBW                     float64 // bytes per second
}

// gemmFP8Static is the GEMM mode of per-tensor FP8 weights with static activation scales
// (AIConfigurator's name for it): priced from the fp8 rows less the quantisation overheads.
const gemmFP8Static = "fp8_static"

// readStaticFP8 reads the quantisation overhead tables of backend b's version on sku for a
// GEMM mode of fp8_static; nil for any other mode. Only TensorRT-LLM's is priced: which GEMM
// inputs arrive in FP8 is its decoder layers' rule (trtllmFP8Inputs).
func readStaticFP8(aicDir, sku string, b Backend, version, gemmQuant string, gpu GPUSpec, srcs *[]Source) (*staticFP8, error) {
	if gemmQuant != gemmFP8Static {
		return nil, nil
	}
	if b != BackendTRTLLM {
		return nil, fmt.Errorf("model import: GEMM mode %s is priced under %s only, not %s", gemmFP8Static, BackendTRTLLM, b.OrDefault())
	}
	dir := filepath.Join(sku, "quantize", string(b), version)
	q := &staticFP8{computeRel: filepath.Join(dir, "computescale_perf.parquet"), matrixRel: filepath.Join(dir, "scale_matrix_perf.parquet"), memBW: gpu.MemBW}
	var err error
	if q.computeScale, err = readParquet[quantRow](aicDir, q.computeRel, srcs); err != nil {
		return nil, err
	}
	if q.scaleMatrix, err = readParquet[quantRow](aicDir, q.matrixRel, srcs); err != nil {
		return nil, err
	}
	return q, nil
}

// overhead is a quantisation table's latency (µs) for an m × k activation as a function of m:
// across k as acrossK reads GEMM rows.
func overhead(rows []quantRow, table string, k int) (func(float64) float64, error) {
	byK := map[int64][]point{}
	for _, r := range rows {
		if r.Dtype == "fp8" {
			byK[r.K] = append(byK[r.K], point{float64(r.M), msToUS(r.Latency)})
		}
	}
	c, lo, _, err := acrossK(byK, int64(k), func(x int64) (func(float64) float64, error) {
		s := newSeries(byK[x])
		return func(m float64) float64 { return s.at(m, 1) }, nil
	})
	if err == nil && lo == 0 {
		err = missing(table, fmt.Sprintf("fp8 k=%d (no measured k at or below it)", k))
	}
	return c, err
}

// gemm is a per-tensor FP8 GEMM curve of n × k weights priced as TensorRT-LLM runs it with a
// static input scale: the measured row less compute_scale, and less scale_matrix when the input
// arrives in FP8, never below the time its FP8 weights take to read at the memory bandwidth.
func (q *staticFP8) gemm(row func(float64) float64, n, k int, fp8Input bool) (func(float64) float64, error) {
	cs, err := overhead(q.computeScale, q.computeRel, k)
	if err != nil {
		return nil, err
	}
	sm := func(float64) float64 { return 0 }
	if fp8Input {
		if sm, err = overhead(q.scaleMatrix, q.matrixRel, k); err != nil {
			return nil, err
		}
	}
	floor := float64(n) * float64(k) / q.memBW * 1e6
	return func(m float64) float64 { return max(row(m)-cs(m)-sm(m), floor) }, nil
}
