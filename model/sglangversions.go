package model

// sglangCollections are the SGLang releases AIConfigurator collected operator tables for on
// each GPU: the version directories of ../shared/aic/<gpu>/gemm/sglang/ with a
// collection_meta.yaml of their own. 0.5.12's are reuse.yaml pointers to 0.5.14's rows (not a
// collection), and only H100 and H200 hold 0.5.6.post2.
var sglangCollections = map[string][]string{
	"h100_sxm": {"0.5.6.post2", "0.5.9", "0.5.10", "0.5.14"},
	"h200_sxm": {"0.5.6.post2", "0.5.9", "0.5.10", "0.5.14"},
	"b200_sxm": {"0.5.9", "0.5.10", "0.5.14"},
	"b300_sxm": {"0.5.9", "0.5.10", "0.5.14"},
}

// SGLangTablesVersion is the SGLang collection whose tables price a run of release version on
// sku, by one rule for every row: the run's own release where AIConfigurator collected it on
// that GPU, else the nearest collected release by release number (major.minor.patch; a .postN
// or rcN build and an image's CUDA suffix count as their release), the older on a tie. A
// version that names no release (a nightly build, a custom image, none recorded) and a GPU
// without SGLang collections take the embedded release, sglangVersion.
func SGLangTablesVersion(sku, version string) string {
	want, ok := releaseNumber(version)
	have := sglangCollections[sku]
	if !ok || len(have) == 0 {
		return sglangVersion
	}
	best, bestDist := "", 0
	for _, v := range have {
		n, _ := releaseNumber(v)
		dist := max(want-n, n-want)
		if best == "" || dist < bestDist { // have is oldest first: a tie keeps the older
			best, bestDist = v, dist
		}
	}
	return best
}
