package model

import "testing"

// Each run's release prices on its own collection where AIConfigurator measured it on that
// GPU, else on the nearest, the older on a tie; a build naming no release on the embedded one.
func TestSGLangTablesVersion(t *testing.T) {
	for _, c := range []struct{ sku, run, want string }{
		{"h200_sxm", "0.5.6.post2", "0.5.6.post2"}, // the run's own collection
		{"h100_sxm", "0.5.1.post1", "0.5.6.post2"}, // nearest: 5 patches below, 0.5.9 eight
		{"h100_sxm", "0.5.8.post1", "0.5.9"},       // 1 from 0.5.9, 2 from 0.5.6
		{"b200_sxm", "0.5.6", "0.5.9"},             // B200 holds no 0.5.6.post2
		{"b200_sxm", "0.5.3rc1", "0.5.9"},
		{"b300_sxm", "0.5.10.post1", "0.5.10"},
		{"b300_sxm", "0.5.12", "0.5.10"}, // 2 either side: the older
		{"b300_sxm", "0.5.9", "0.5.9"},
		{"b200_sxm", "nightly-dev-20260216-d3bae71e", sglangVersion},
		{"h200_sxm", "glm5-hopper", sglangVersion},
		{"h200_sxm", "", sglangVersion},
		{"gb200", "0.5.8.post1", sglangVersion}, // no SGLang collection on that GPU
	} {
		if got := SGLangTablesVersion(c.sku, c.run); got != c.want {
			t.Errorf("SGLangTablesVersion(%s, %q) = %s, want %s", c.sku, c.run, got, c.want)
		}
	}
}

// A table of another SGLang release than the embedded one is for model validate alone.
func TestSGLangReleaseTablesValidateOnly(t *testing.T) {
	for _, c := range []struct {
		t    Table
		want bool
	}{
		{Table{Backend: BackendSGLang, BackendVersion: sglangVersion}, false},
		{Table{Backend: BackendSGLang, BackendVersion: "0.5.10"}, true},
		{Table{Backend: BackendVLLM, BackendVersion: "0.18.0"}, false},
		{Table{Backend: BackendSGLang, BackendVersion: sglangVersion, MoEBackend: MoERunnerFlashInferTRTLLM}, true},
	} {
		if got := c.t.ValidateOnly(); got != c.want {
			t.Errorf("%s %s %q: ValidateOnly %v, want %v", c.t.Backend, c.t.BackendVersion, c.t.MoEBackend, got, c.want)
		}
	}
}
