package layout

import (
	"fmt"

	"github.com/routerlab/routerlab/model"
)

// ModelProbe sizes shapes with the model's memory arithmetic (model.LayoutCapacity) for a
// worker otherwise like d: a shape's KV tokens are its KV blocks × block_size, what one
// attention rank holds, which is where one sequence lives.
func ModelProbe(d model.Deployment) Probe {
	return func(s Shape) (Fit, error) {
		d.TP, d.AttentionDP, d.MoETP, d.MoEEP = s.TP, s.AttentionDP, s.MoETP, s.MoEEP
		c, untimed, err := model.LayoutCapacity(d)
		if err != nil {
			return Fit{}, err
		}
		f := Fit{KVTokens: int64(c.NumGPUBlocks) * int64(d.BlockSize)}
		if untimed != nil {
			f.Untimed = untimed.Error()
		}
		return f, nil
	}
}

// IsMoE reports whether the model has routed experts, from its embedded tables.
func IsMoE(modelName string) (bool, error) {
	heads, err := model.EmbeddedHeads()
	if err != nil {
		return false, err
	}
	for _, h := range heads {
		if h.Model == modelName {
			return h.MoE, nil
		}
	}
	return false, fmt.Errorf("layout: no embedded table of %s", modelName)
}
