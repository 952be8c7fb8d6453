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
	names := make([]string, 0, 3)
	for _, b := range Backends() {
		names = append(names, string(b))
	}
	return "", fmt.Errorf("backend %q is not supported (want one of %s)", s, strings.Join(names, ", "))
}

// OrDefault is b, or vLLM when b is unset.
func (b Backend) OrDefault() Backend {
	if b == "" {
		return BackendVLLM
	}
	return b
}
