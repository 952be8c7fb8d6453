package config

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/routerlab/routerlab/model"
)

// The step-time probes of the simulator digest: every embedded timing table, under every
// engine setting that changes how it prices a step, asked for a grid of batch shapes. The
// table bytes alone do not name the code that reads them: a threshold, a fusion or a
// CUDA-graph rule that only one family of tables reaches (shared experts, MLA, sliding
// windows, one GPU) changes results on those tables only.

// probeBatches are the batch shapes asked of every worker: prefill chunks around the
// thresholds the step model switches at (CUDA-graph capture sizes, the shared-experts
// stream's 256 tokens, the all-reduce fusion's limits, grid nodes) with and without a cached
// prefix, beside decode batches from one request to a full engine.
func probeBatches() []model.Batch {
	var out []model.Batch
	for _, p := range []int{0, 1, 7, 64, 127, 128, 129, 200, 255, 256, 257, 384, 511, 512, 513, 1000, 2048, 4097, 8192, 16384} {
		for _, d := range []int{0, 1, 5, 48, 200, 512} {
			if p == 0 && d == 0 {
				continue
			}
			b := model.Batch{Decodes: d, DecodeContextTokens: int64(d) * 3000}
			if p > 0 {
				b.Prefill = []model.Chunk{{NewTokens: p, CachedTokens: 0}, {NewTokens: p / 3, CachedTokens: 9000}}
				b.FirstTokens, b.FirstTokenContextTokens = 1, int64(p)
			}
			out = append(out, b)
		}
	}
	return out
}

// probeSettings are the deployment settings a table is probed under, each from the table's
// own deployment: every KV dtype and FP32 precision it has a row for, and each knob that
// changes the step or capacity model.
func probeSettings(t *model.Table) []func(*model.Deployment) {
	var out []func(*model.Deployment)
	for _, a := range t.Attention {
		out = append(out, func(d *model.Deployment) { d.KVCacheDtype = a.KVCacheDtype })
	}
	for _, g := range t.RouterGate {
		out = append(out, func(d *model.Deployment) { d.Float32MatmulPrecision = g.Float32MatmulPrecision })
	}
	if t.Backend == model.BackendVLLM {
		// vLLM's own knobs: SGLang and TRT-LLM tables price every step alike under them
		// (decode-only CUDA graphs, no second shared-experts stream, no fusion pass), so their
		// probes would repeat the defaults' numbers.
		out = append(out,
			func(d *model.Deployment) { d.CUDAGraphMode = model.CUDAGraphPiecewise },
			func(d *model.Deployment) { d.CUDAGraphMode = model.CUDAGraphFullDecodeOnly },
			func(d *model.Deployment) { d.SharedExpertsStreamTokens = -1 },
			func(d *model.Deployment) { d.SharedExpertsStreamTokens = 100 },
			func(d *model.Deployment) { d.FuseAllReduceRMS = !d.FuseAllReduceRMS },
			func(d *model.Deployment) { d.AllReduceFusionMaxMB = 3 })
	}
	return append(out,
		func(d *model.Deployment) { d.MaxCUDAGraphCaptureSize, d.MaxNumSeqs = 96, 64 },
		func(d *model.Deployment) { d.MemoryBudget = model.MemoryBudgetAIConfigurator },
		func(d *model.Deployment) { d.MemoryBudget = model.MemoryBudgetVLLM },
		func(d *model.Deployment) { d.GPUMemoryUtilization, d.ContextLength, d.BlockSize = 0.6, 8192, 16 },
	)
}

// tableDeployment is the deployment that prices steps from table t with vLLM's defaults.
func tableDeployment(t *model.Table) model.Deployment {
	return model.Deployment{
		ModelName: t.Model, HardwareSKU: t.HardwareSKU, Backend: t.Backend, BackendVersion: t.BackendVersion,
		Quantization: t.Quantization, TP: t.Layout.TP, AttentionDP: t.Layout.AttentionDP, MoETP: t.Layout.MoETP, MoEEP: t.Layout.MoEEP,
		MaxNumBatchedTokens: 16384, MaxNumSeqs: 512, BlockSize: 64, GPUMemoryUtilization: 0.9, ContextLength: 131072,
		KVCacheDtype: model.KVFP8, TimingReference: t.TimingReference,
		FuseAllReduceRMS: t.Backend == model.BackendVLLM && model.VLLMFusesAllReduceRMS(t.BackendVersion, t.HardwareSKU, t.Layout.TP, t.Layout.AttentionDP),
	}
}

// stepProbes writes to w, for every embedded table and probe setting, the worker's KV
// capacity, its step times and their breakdown over probeBatches, and a decode stretch; a
// setting the table cannot price writes its error (deterministic, and so part of the name).
func stepProbes(w io.Writer) error {
	tables, err := model.Embedded()
	if err != nil {
		return err
	}
	batches := probeBatches()
	enc := json.NewEncoder(w)
	stretch := make([]int64, 24)
	for _, t := range tables {
		fmt.Fprintln(w, model.TableFileName(t))
		for i, set := range append([]func(*model.Deployment){func(*model.Deployment) {}}, probeSettings(t)...) {
			d := tableDeployment(t)
			set(&d)
			m, err := model.NewWorker(d)
			if err != nil {
				fmt.Fprintln(w, i, "error:", err)
				continue
			}
			if err := enc.Encode(m.Capacity()); err != nil {
				return err
			}
			for j := range batches {
				fmt.Fprintln(w, m.StepTimeUS(&batches[j]))
				if err := enc.Encode(m.Breakdown(&batches[j])); err != nil {
					return err
				}
			}
			for _, n := range []int{1, 33, 300} {
				m.DecodeStepsUS(n, 5000, stretch)
				fmt.Fprintln(w, stretch)
			}
		}
	}
	return nil
}
