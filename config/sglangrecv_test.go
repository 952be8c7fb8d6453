package config

import "testing"

// sglang_scheduler_recv_interval reaches the engine's SGLang scheduler and the fingerprint,
// where it is listed only when given; out of range it is refused by name.
func TestSGLangRecvIntervalKey(t *testing.T) {
	f := Default()
	if _, ok := f.Fingerprint().Get("search_space.sglang_scheduler_recv_interval"); ok {
		t.Fatal("the default fingerprint lists sglang_scheduler_recv_interval")
	}
	if err := f.Apply([]string{"backend=sglang", "sglang_scheduler_recv_interval=30"}); err != nil {
		t.Fatal(err)
	}
	if f.Scheduler.SGLangRecvInterval != 30 {
		t.Fatalf("scheduler %+v, want a receive interval of 30", f.Scheduler)
	}
	if v, ok := f.Fingerprint().Get("search_space.sglang_scheduler_recv_interval"); !ok || v != "30" {
		t.Fatalf("fingerprint sglang_scheduler_recv_interval %q, %v", v, ok)
	}
	if err := Default().Apply([]string{"sglang_scheduler_recv_interval=-1"}); err == nil {
		t.Fatal("a negative receive interval was accepted")
	}
}
