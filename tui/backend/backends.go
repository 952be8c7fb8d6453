package backend

import (
	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/tui"
)

// deploy sets d, the experiment's worker, to the explorer's deployment dk: its model, GPU,
// layout (with the catalog's precision and vLLM version), engine arguments and backend.
// SGLang and TensorRT-LLM run their embedded release without vLLM's all-reduce fusion, as the
// experiment file's backend key does (config.File.deployment).
func (s *Sim) deploy(d *model.Deployment, dk tui.Deployment) error {
	if dk.Model != "" {
		d.ModelName = dk.Model
	}
	if dk.GPU != "" {
		d.HardwareSKU = dk.GPU
	}
	o, err := s.catalog.option(d.ModelName, d.HardwareSKU, dk.Layout)
	if err != nil {
		return err
	}
	l := o.layout
	d.TP, d.AttentionDP, d.MoETP, d.MoEEP = l.TP, l.AttentionDP, l.MoETP, l.MoEEP
	d.Quantization, d.BackendVersion, d.ContextLength = o.quant, o.version, s.contextLength(d.ModelName)
	d.MaxNumBatchedTokens, d.MaxNumSeqs, d.KVCacheDtype, d.AsyncScheduling = dk.MaxBatchedTokens, dk.MaxSeqs, dk.KVCacheDtype, dk.Async
	d.NumGPUBlocks = s.exp.File.NumGPUBlocks // 0: derived from memory for this deployment
	if dk.Backend != "" {
		d.Backend = model.Backend(dk.Backend)
	}
	if v := d.Backend.EmbeddedVersion(); v != "" {
		d.BackendVersion, d.FuseAllReduceRMS = v, false
	}
	return nil
}

// backendFits says why the explorer's deployment dk cannot run on its backend: a layout the
// backend's rules forbid (model.Backend.CheckLayout), or no step-time table of the backend for
// the model, GPU, layout and precision; "" when it can.
func (s *Sim) backendFits(dk tui.Deployment) string {
	d := s.base.Worker
	if err := s.deploy(&d, dk); err != nil {
		return err.Error()
	}
	if err := d.Backend.CheckLayout(d.Layout(), false); err != nil {
		return err.Error()
	}
	if _, err := s.worker(d); err != nil {
		return err.Error()
	}
	return ""
}

// explicitBackend is the explorer's backend knob for the experiment's backend: "" for vLLM,
// the default, so that a vLLM experiment's knobs and commands read as before.
func explicitBackend(b model.Backend) string {
	if b.OrDefault() == model.BackendVLLM {
		return ""
	}
	return string(b)
}
