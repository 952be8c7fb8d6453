package model

import (
	"math"
	"testing"

	"github.com/routerlab/routerlab/specdec"
)

// An MTP step of DeepSeek-R1 on TensorRT-LLM (B200 FP8, TEP 8, 3 drafts) is the target model
// on 1 + k tokens per decode with its LM head on every one of them, one MTP layer on the same
// tokens, then k − 1 more on one token per request, each with the shared head: priced from
// the same worker's parts. It costs more than a plain step and far less than 1 + k of them,
// which is what makes drafting pay.
func TestMTPStep(t *testing.T) {
	d := SeedDeployment()
	d.ModelName, d.Backend, d.BackendVersion = "deepseek-ai/DeepSeek-R1", BackendTRTLLM, trtllmVersion
	d.TP, d.MoETP, d.MoEEP, d.KVCacheDtype, d.BlockSize = 8, 1, 8, KVFP8, 32
	plain, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	d.Speculative = specdec.Config{DraftLen: 3}
	mtp, err := NewWorker(d)
	if err != nil {
		t.Fatal(err)
	}
	L := float64(plain.table.LLM.Layers)
	if L != 61 {
		t.Fatalf("DeepSeek-R1 has %v layers, want 61", L)
	}
	for _, n := range []int{1, 8, 64} {
		b := Batch{Decodes: n, DecodeContextTokens: int64(n) * 2000}
		attn := plain.decode.at(float64(n), 2000)
		target := plain.nonAttentionAt(4*n, false) + plain.logits.at(float64(4*n)) + attn
		first := (plain.nonAttentionAt(4*n, false)+attn)/L + plain.logits.at(float64(n))
		later := (plain.nonAttentionAt(n, false)+attn)/L + plain.logits.at(float64(n))
		want := int64(math.Ceil(target + first + 2*later))
		got, one := mtp.StepTimeUS(&b), plain.StepTimeUS(&b)
		if got != want || got <= one || got >= 2*one {
			t.Errorf("%d decodes: MTP step %d µs, want %d; plain step %d µs (want it between 1× and 2×)", n, got, want, one)
		}
		steps := make([]int64, 3)
		mtp.DecodeStepsUS(n, b.DecodeContextTokens, steps)
		if steps[0] != got {
			t.Errorf("%d decodes: the decode stretch prices %d µs, the step %d", n, steps[0], got)
		}
	}
	// A prompt's step drafts too: the MTP layer over the prompt, then two one-token forwards.
	p := Batch{Prefill: []Chunk{{NewTokens: 1024}}}
	if got, one := mtp.StepTimeUS(&p), plain.StepTimeUS(&p); got <= one || float64(got) > 1.1*float64(one) {
		t.Errorf("a 1,024-token prompt: MTP step %d µs, plain %d µs; want a little more", got, one)
	}
}
