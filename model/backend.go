package model

import (
	"fmt"
	"strings"
)

// Backend is the serving engine a worker runs: it picks the operator tables that price its
// steps (AIConfigurator measures each engine's kernels under its own directory) and, in the
// engine package, the scheduler that forms its batches.
type Backend string

// The engines Dynamo serves and AIConfigurator measures.
const (
	BackendVLLM   Backend = "vllm"
	BackendSGLang Backend = "sglang"
	BackendTRTLLM Backend = "trtllm"
)

// Backends lists the supported backends, the default first.
func Backends() []Backend { return []Backend{BackendVLLM, BackendSGLang, BackendTRTLLM} }

// BackendNames lists the supported backends' names, the default first.
func BackendNames() []string {
	var out []string
	for _, b := range Backends() {
		out = append(out, string(b))
	}
	return out
}

// ParseBackend reads a backend's name ("" is vLLM, the default).
func ParseBackend(s string) (Backend, error) {
	if s == "" {
		return BackendVLLM, nil
	}
	for _, b := range Backends() {
		if string(b) == s {
			return b, nil
		}
	}
	return "", fmt.Errorf("backend %q is not supported (want one of %s)", s, strings.Join(BackendNames(), ", "))
}

// OrDefault is b, or vLLM when b is unset.
func (b Backend) OrDefault() Backend {
	if b == "" {
		return BackendVLLM
	}
	return b
}

// CheckLayout says why a layout cannot run on backend b, as AIConfigurator's parallel-config
// enumeration filters it (ai-dynamo/aiconfigurator src/aiconfigurator/sdk/utils.py,
// enumerate_parallel_config, "backend specific filters"): TensorRT-LLM runs attention data
// parallelism only with attention TP 1; vLLM shards experts by TP or by EP, never both;
// SGLang's EP-only MoE backends (DeepEP wide-EP, MegaMoE) force moe_tp 1, so epOnlyMoE says
// whether the deployment's expert kernel is one of them. nil: the layout runs.
func (b Backend) CheckLayout(l Layout, epOnlyMoE bool) error {
	switch b.OrDefault() {
	case BackendTRTLLM:
		if l.AttentionDP > 1 && l.TP > 1 {
			return fmt.Errorf("backend trtllm: attention data parallelism runs with tp 1 only (have tp %d, attention_dp %d)", l.TP, l.AttentionDP)
		}
	case BackendVLLM:
		if l.MoETP > 1 && l.MoEEP > 1 {
			return fmt.Errorf("backend vllm: experts are sharded by moe_tp or by moe_ep, not both (have moe_tp %d, moe_ep %d)", l.MoETP, l.MoEEP)
		}
	case BackendSGLang:
		if epOnlyMoE && l.MoETP > 1 {
			return fmt.Errorf("backend sglang: the expert-parallel-only MoE backend needs moe_tp 1 (have %d)", l.MoETP)
		}
	}
	return nil
}

// EmbeddedVersion is the release of backend b whose tables the binary embeds for SGLang and
// TensorRT-LLM (backendImports); "" for vLLM, whose version the experiment names.
func (b Backend) EmbeddedVersion() string {
	switch b {
	case BackendSGLang:
		return sglangVersion
	case BackendTRTLLM:
		return trtllmVersion
	}
	return ""
}
