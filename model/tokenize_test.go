package model

import (
	"strings"
	"testing"
)

// A release's tokenisation batching follows vLLM's history: AsyncMicrobatchTokenizer batches
// completion prompts into one parallel call until vllm#31366's guard, first released in
// 0.16.0; a deployment names its mode or takes serial, and an unknown mode is refused by name.
func TestTokenizeBatching(t *testing.T) {
	for v, want := range map[string]string{
		"0.10.2": TokenizeParallel, "0.11.2": TokenizeParallel, "0.12.0": TokenizeParallel, "0.15.1": TokenizeParallel,
		"0.16.0": TokenizeSerial, "0.17.0": TokenizeSerial, "0.18.0": TokenizeSerial, "0.19.0": TokenizeSerial,
	} {
		if got := TokenizeBatchingOf(v); got != want {
			t.Errorf("vLLM %s: %q, want %q", v, got, want)
		}
	}
	d := SeedDeployment()
	if d.TokenizeBatching() != TokenizeSerial {
		t.Fatalf("seed deployment batches %q, want serial", d.TokenizeBatching())
	}
	d.APIServerTokenizeBatching = TokenizeParallel
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	d.APIServerTokenizeBatching = "threads"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), `api_server_tokenize_batching "threads"`) {
		t.Fatalf("unknown batching: %v, want an error naming it", err)
	}
}
