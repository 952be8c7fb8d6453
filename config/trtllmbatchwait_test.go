package config

import "testing"

// trtllm_batch_wait_timeout_iters and trtllm_batch_wait_max_tokens_ratio reach the engine's
// TensorRT-LLM scheduler and the fingerprint, which lists them only when given; values
// outside their ranges are refused.
func TestTRTLLMBatchWaitKeys(t *testing.T) {
	f := Default()
	if _, ok := f.Fingerprint().Get("search_space.trtllm_batch_wait_timeout_iters"); ok {
		t.Fatal("the default fingerprint lists trtllm_batch_wait_timeout_iters")
	}
	if err := f.Apply([]string{"backend=trtllm", "trtllm_batch_wait_timeout_iters=40", "trtllm_batch_wait_max_tokens_ratio=0.8"}); err != nil {
		t.Fatal(err)
	}
	if sc := f.Scheduler; sc.TRTLLMBatchWaitTimeoutIters != 40 || sc.TRTLLMBatchWaitMaxTokensRatio != 0.8 {
		t.Fatalf("scheduler %+v", sc)
	}
	fp := f.Fingerprint()
	if v, ok := fp.Get("search_space.trtllm_batch_wait_timeout_iters"); !ok || v != "40" {
		t.Fatalf("fingerprint trtllm_batch_wait_timeout_iters %q, %v", v, ok)
	}
	if v, ok := fp.Get("search_space.trtllm_batch_wait_max_tokens_ratio"); !ok || v != "0.8" {
		t.Fatalf("fingerprint trtllm_batch_wait_max_tokens_ratio %q, %v", v, ok)
	}
	for _, bad := range []string{"trtllm_batch_wait_timeout_iters=-1", "trtllm_batch_wait_max_tokens_ratio=1.5"} {
		if err := Default().Apply([]string{bad}); err == nil {
			t.Fatalf("%s accepted", bad)
		}
	}
}

// The attention-DP balancing keys reach the scheduler and, when balancing is on, the
// fingerprint with its two counts.
func TestTRTLLMADPBalanceKeys(t *testing.T) {
	f := Default()
	if err := f.Apply([]string{"backend=trtllm", "trtllm_adp_balance=true", "trtllm_adp_timeout_iters=60"}); err != nil {
		t.Fatal(err)
	}
	if sc := f.Scheduler; !sc.TRTLLMADPBalance || sc.TRTLLMADPTimeoutIters != 60 || sc.TRTLLMADPBatchingWaitIters != 0 {
		t.Fatalf("scheduler %+v", sc)
	}
	if v, ok := f.Fingerprint().Get("search_space.trtllm_adp_timeout_iters"); !ok || v != "60" {
		t.Fatalf("fingerprint trtllm_adp_timeout_iters %q, %v", v, ok)
	}
	if _, ok := Default().Fingerprint().Get("search_space.trtllm_adp_balance"); ok {
		t.Fatal("the default fingerprint lists trtllm_adp_balance")
	}
	if err := Default().Apply([]string{"trtllm_adp_timeout_iters=-1"}); err == nil {
		t.Fatal("a negative timeout was accepted")
	}
}
