package model

import (
	"strings"
	"testing"
)

func TestParseBackend(t *testing.T) {
	for in, want := range map[string]Backend{"": BackendVLLM, "vllm": BackendVLLM, "sglang": BackendSGLang, "trtllm": BackendTRTLLM} {
		if got, err := ParseBackend(in); err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseBackend("tensorrt"); err == nil || !strings.Contains(err.Error(), "vllm, sglang, trtllm") {
		t.Errorf("ParseBackend(tensorrt): %v, want the supported list", err)
	}
	if Backend("").OrDefault() != BackendVLLM || BackendSGLang.OrDefault() != BackendSGLang {
		t.Error("OrDefault: want vllm for unset, the backend otherwise")
	}
}
