package backend

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/routerlab/routerlab/model"
	"github.com/routerlab/routerlab/tui"
)

// fleetOption is one way to deploy a model on a GPU that has step-time tables: a parallel
// layout at a serving precision and backend version.
type fleetOption struct {
	name    string // as the layout knob shows it: tp4·ep4, tp4 (dense), tp2·ep2 nvfp4
	layout  model.Layout
	quant   string // search_space.quantization; "": the checkpoint's own
	version string // backend version of the tables
}

// catalog is what the explorer may deploy: for every embedded model, the GPUs it has tables
// on and, on each, the layouts — of the experiment's timing reference, at its backend
// version where the model has tables of it there (else the nearest version). It implements
// tui.Catalog, so stepping the model or GPU never lands on a combination without tables.
type catalog struct {
	models  []string
	gpus    map[string][]string         // by model, sorted
	options map[[2]string][]fleetOption // by model and GPU, in the layout knob's order
	moe     map[string]bool
}

var _ tui.Catalog = (*catalog)(nil)

// newCatalog lists the embedded tables' deployments under base's timing reference and
// backend version; initial, the experiment's own deployment, is always among them.
func newCatalog(base model.Deployment) (*catalog, error) {
	ts, err := model.EmbeddedHeads()
	if err != nil {
		return nil, err
	}
	ref := ""
	if base.Dynosim() {
		ref = model.ReferenceDynosim
	}
	c := &catalog{gpus: map[string][]string{}, options: map[[2]string][]fleetOption{}, moe: map[string]bool{}}
	version := map[[2]string]string{} // the version each pair is offered at
	for _, t := range ts {
		// The explorer offers each engine with its release's default kernels.
		if t.TimingReference != ref || t.MoEBackend != "" {
			continue
		}
		pair := [2]string{t.Model, t.HardwareSKU}
		if _, ok := version[pair]; !ok {
			version[pair] = model.NearestVersion(t.Model, t.HardwareSKU, base.BackendVersion)
		}
		if t.BackendVersion != version[pair] {
			continue
		}
		c.moe[t.Model] = t.MoE
		c.options[pair] = append(c.options[pair], fleetOption{
			name: layoutName(t.Layout, t.MoE, t.Quantization), layout: t.Layout, quant: t.Quantization, version: t.BackendVersion})
	}
	own := [2]string{base.ModelName, base.HardwareSKU}
	mine := fleetOption{name: layoutName(base.Layout(), c.moe[base.ModelName], base.Quantization),
		layout: base.Layout(), quant: base.Quantization, version: base.BackendVersion}
	if !slices.ContainsFunc(c.options[own], func(o fleetOption) bool { return o.name == mine.name }) {
		c.options[own] = append(c.options[own], mine) // a precision named by family (fp8 for fp8_block)
	}
	for pair, opts := range c.options {
		slices.SortFunc(opts, func(a, b fleetOption) int {
			return cmp.Or(cmp.Compare(a.layout.TP*a.layout.AttentionDP, b.layout.TP*b.layout.AttentionDP),
				cmp.Compare(a.quant, b.quant), cmp.Compare(b.layout.MoEEP, a.layout.MoEEP), strings.Compare(a.name, b.name))
		})
		c.options[pair] = opts
		c.models = append(c.models, pair[0])
		c.gpus[pair[0]] = append(c.gpus[pair[0]], pair[1])
	}
	slices.Sort(c.models)
	c.models = slices.Compact(c.models)
	for m := range c.gpus {
		slices.Sort(c.gpus[m])
	}
	return c, nil
}

// layoutName is how the explorer names a layout: tp4·ep4 or tp4·moe_tp4 for a mixture of
// experts (experts split by expert or tensor parallelism), tp4 or tp2·dp2 for a dense model
// (no experts to split), then the serving precision when it is not the checkpoint's own.
func layoutName(l model.Layout, moe bool, quant string) string {
	s := fmt.Sprintf("tp%d", l.TP)
	if l.AttentionDP > 1 {
		s += fmt.Sprintf("·dp%d", l.AttentionDP)
	}
	if moe && l.MoETP > 1 {
		s += fmt.Sprintf("·moe_tp%d", l.MoETP)
	}
	if moe && l.MoEEP > 1 {
		s += fmt.Sprintf("·ep%d", l.MoEEP)
	}
	if quant != "" {
		s += " " + quant
	}
	return s
}

// Models lists the models with tables under the experiment's timing reference.
func (c *catalog) Models() []string { return c.models }

// GPUs lists the GPUs model has tables on.
func (c *catalog) GPUs(model string) []string { return c.gpus[model] }

// Layouts lists model's layouts on gpu, by name, in the layout knob's order.
func (c *catalog) Layouts(model, gpu string) []string {
	var out []string
	for _, o := range c.options[[2]string{model, gpu}] {
		out = append(out, o.name)
	}
	return out
}

// option is the deployment named layout of model on gpu.
func (c *catalog) option(model, gpu, layout string) (fleetOption, error) {
	opts := c.options[[2]string{model, gpu}]
	if i := slices.IndexFunc(opts, func(o fleetOption) bool { return o.name == layout }); i >= 0 {
		return opts[i], nil
	}
	if len(opts) == 0 {
		return fleetOption{}, fmt.Errorf("explorer: %s has no step-time tables on %s (it has: %s)", model, gpu, strings.Join(c.gpus[model], ", "))
	}
	return fleetOption{}, fmt.Errorf("explorer: %s on %s has no layout %q (it has: %s)", model, gpu, layout, strings.Join(c.Layouts(model, gpu), ", "))
}

// Fit moves d onto a deployment with tables: d's GPU if its model has tables there, else the
// nearest of the model's GPUs in the knob's order; d's layout if the model has it there,
// else the nearest by GPUs per worker, then the same precision, then the same way of
// splitting experts. It says what moved and why ("" when nothing did).
func (c *catalog) Fit(d tui.Deployment) (tui.Deployment, string) {
	var notes []string
	short := d.Model[strings.LastIndex(d.Model, "/")+1:]
	if gpus := c.gpus[d.Model]; len(gpus) > 0 && !slices.Contains(gpus, d.GPU) {
		to := nearestGPU(gpus, d.GPU)
		notes = append(notes, fmt.Sprintf("%s has no tables on %s, so hardware_sku %s", short, d.GPU, to))
		d.GPU = to
	}
	opts := c.options[[2]string{d.Model, d.GPU}]
	if len(opts) == 0 || slices.ContainsFunc(opts, func(o fleetOption) bool { return o.name == d.Layout }) {
		return d, strings.Join(notes, "; ")
	}
	from, known := c.byName(d.Layout)
	best := opts[0]
	if known {
		score := func(o fleetOption) [3]int {
			g := func(l model.Layout) int { return bits.Len(uint(l.TP * l.AttentionDP)) }
			return [3]int{abs(g(o.layout) - g(from.layout)), b2i(o.quant != from.quant), b2i((o.layout.MoEEP > 1) != (from.layout.MoEEP > 1))}
		}
		for _, o := range opts[1:] {
			if s, bs := score(o), score(best); slices.Compare(s[:], bs[:]) < 0 {
				best = o
			}
		}
	}
	why := "the nearest there"
	if !c.moe[d.Model] && (strings.Contains(d.Layout, "·ep") || strings.Contains(d.Layout, "moe_tp")) {
		why = "a dense model has no experts to split"
	}
	notes = append(notes, fmt.Sprintf("layout %s → %s (%s; all: %s)", d.Layout, best.name, why, strings.Join(c.Layouts(d.Model, d.GPU), ", ")))
	d.Layout = best.name
	return d, strings.Join(notes, "; ")
}

// byName finds a layout by its name on any model and GPU: a name says one layout and
// precision wherever it appears.
func (c *catalog) byName(name string) (fleetOption, bool) {
	for _, m := range c.models {
		for _, g := range c.gpus[m] {
			for _, o := range c.options[[2]string{m, g}] {
				if o.name == name {
					return o, true
				}
			}
		}
	}
	return fleetOption{}, false
}

// nearestGPU is the GPU of list nearest to gpu in sorted order (the first after it, else the
// last): b200_sxm → b300_sxm, h100_sxm → h200_sxm.
func nearestGPU(list []string, gpu string) string {
	for _, g := range list {
		if g > gpu {
			return g
		}
	}
	return list[len(list)-1]
}

func abs(x int) int { return max(x, -x) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
