package model

import (
	"cmp"
	"errors"
	"fmt"
)

// LayoutCapacity is the KV capacity of d's layout, and why no step-time table prices that
// layout at d's precision (nil when one does). The memory arithmetic needs the architecture,
// the GPU's memory and how the weights are stored, none of which depends on the layout, so a
// layout without its own table is sized from any embedded table of d's model, GPU, backend
// version, precision and timing reference: the derived search space (package layout) keeps
// or drops a shape for its KV capacity before asking whether routerlab can time it. err is
// set when the model has no table at that precision on the GPU at all.
func LayoutCapacity(d Deployment) (c Capacity, untimed, err error) {
	if err := d.Validate(); err != nil {
		return Capacity{}, nil, err
	}
	var dpUntimed error // attention data parallelism: why its ranks or experts have no table
	if d.AttentionDP > 1 {
		w, err := newAttentionDPWorker(d)
		switch {
		case err == nil && w.table.Quantization == d.Quantization:
			return w.Capacity(), nil, nil
		case err == nil || errors.Is(err, ErrNoRankTable): // or loadTable's fallback to the one precision a layout has
			err = fmt.Errorf("no step-time table of a rank of layout %s (tp %d) at %s (routerlab model list)", d.Layout(), d.TP, precisionWords(d.Quantization))
		case errors.Is(err, ErrNoExpertsTable):
			err = fmt.Errorf("no step-time table of the experts of layout %s (tp %d, moe_tp %d, moe_ep %d) at %s (routerlab model list)",
				d.Layout(), d.TP*d.AttentionDP, d.MoETP, d.MoEEP, precisionWords(d.Quantization))
		}
		dpUntimed = err
	}
	heads, err := EmbeddedHeads()
	if err != nil {
		return Capacity{}, nil, err
	}
	ref := ""
	if d.Dynosim() {
		ref = ReferenceDynosim
	}
	var sized *Table
	for _, h := range heads {
		// A table of another precision would misprice the weights (loadTable falls back to
		// the one precision a layout has, e.g. NVFP4 at TP 8 for an FP8 checkpoint).
		if h.Model != d.ModelName || h.HardwareSKU != d.HardwareSKU || h.BackendVersion != d.BackendVersion ||
			h.Quantization != d.Quantization || h.TimingReference != ref || h.MoEBackend != d.MoEBackend {
			continue
		}
		sib := d
		sib.TP, sib.AttentionDP, sib.MoETP, sib.MoEEP = h.Layout.TP, h.Layout.AttentionDP, h.Layout.MoETP, h.Layout.MoEEP
		t, err := loadTable(sib)
		if err != nil || t.Quantization != d.Quantization {
			continue
		}
		if h.Layout == d.Layout() {
			return (&Worker{d: d, table: t}).Capacity(), nil, nil
		}
		if sized == nil {
			sized = t
		}
	}
	if sized == nil {
		return Capacity{}, nil, fmt.Errorf("model: no table of %s on %s with %s %s at %s to size a layout from (routerlab model list)",
			d.ModelName, d.HardwareSKU, d.Backend, d.BackendVersion, precisionWords(d.Quantization))
	}
	untimed = cmp.Or(sized.LLM.checkLayout(d.Layout()), dpUntimed)
	if untimed == nil {
		untimed = fmt.Errorf("no step-time table of layout %s at %s (routerlab model list)", d.Layout(), precisionWords(d.Quantization))
	}
	return (&Worker{d: d, table: sized}).Capacity(), untimed, nil
}

func precisionWords(q string) string {
	if q == "" {
		return "the checkpoint's precision"
	}
	return "quantization " + q
}
