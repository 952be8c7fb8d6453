package cli

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/routerlab/routerlab/model"
)

func newModelListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the embedded models, GPUs, precisions, vLLM versions and layouts",
		Long: `list prints every embedded timing table grouped by model, GPU, precision and vLLM version,
with the layouts (tp-moe_tp-moe_ep) priced. --format json gives the same groups with each
layout's numbers; --format csv one row per table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" && format != "csv" {
				return fmt.Errorf("--format: want table, json or csv, got %q", format)
			}
			ts, err := model.Embedded()
			if err != nil {
				return err
			}
			groups := tableGroups(ts)
			w := cmd.OutOrStdout()
			switch format {
			case "json":
				return writeJSON(w, groups)
			case "csv":
				cw := csv.NewWriter(w)
				_ = cw.Write([]string{"model_name", "hardware_sku", "precision", "checkpoint_precision", "architecture", "backend", "backend_version", "tp", "moe_tp", "moe_ep", "dynosim", "moe_backend"})
				for _, g := range groups {
					for _, l := range g.Layouts {
						_ = cw.Write([]string{g.Model, g.SKU, g.Precision, strconv.FormatBool(g.Checkpoint), g.Architecture, string(g.Backend), g.Version,
							strconv.Itoa(l.TP), strconv.Itoa(l.MoETP), strconv.Itoa(l.MoEEP), strconv.FormatBool(l.Dynosim), g.MoEBackend})
					}
				}
				cw.Flush()
				return cw.Error()
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%-34s %-9s %-12s %-19s %-18s %s\n", "model_name", "hardware", "precision", "architecture", "backend", "layouts (tp-moe_tp-moe_ep)")
			for _, g := range groups {
				q := g.Precision
				if g.Checkpoint {
					q += "*"
				}
				var ls []string
				for _, l := range g.Layouts {
					txt := fmt.Sprintf("%d-%d-%d", l.TP, l.MoETP, l.MoEEP)
					if l.Dynosim {
						txt += "+d"
					}
					if g.MoEBackend != "" {
						txt += "+" + strings.ToLower(g.MoEBackend)
					}
					ls = append(ls, txt)
				}
				fmt.Fprintf(&b, "%-34s %-9s %-12s %-19s %-18s %s\n", g.Model, g.SKU, q, g.Architecture, string(g.Backend)+"-"+g.Version, strings.Join(ls, " "))
			}
			b.WriteString("\n* the checkpoint's own precision (search_space.quantization unset); others are set with search_space.quantization\n")
			b.WriteString("+d also priced for timing_reference dynosim (Dynamo's mocker with AIConfigurator's kernel choice)\n")
			b.WriteString("+trtllm TensorRT-LLM's moe_config.backend TRTLLM (TRTLLM-Gen experts) instead of its default; what the measured InferenceX DeepSeek runs set\n")
			_, err = io.WriteString(w, b.String())
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	return cmd
}

// tableGroup is one line of model list: the embedded tables of one model on one GPU at one
// precision, backend and version, by layout.
type tableGroup struct {
	Model        string        `json:"model_name"`
	SKU          string        `json:"hardware_sku"`
	Precision    string        `json:"precision"`
	Checkpoint   bool          `json:"checkpoint_precision"` // the checkpoint's own (search_space.quantization unset)
	Architecture string        `json:"architecture"`
	Backend      model.Backend `json:"backend"`
	Version      string        `json:"backend_version"`
	MoEBackend   string        `json:"moe_backend,omitempty"` // TensorRT-LLM's moe_config.backend, when not the default
	Layouts      []tableLayout `json:"layouts"`
}

type tableLayout struct {
	TP      int  `json:"tp"`
	MoETP   int  `json:"moe_tp"`
	MoEEP   int  `json:"moe_ep"`
	Dynosim bool `json:"dynosim"` // also priced for timing_reference dynosim
}

// tableGroups groups the embedded tables (sorted by model.Embedded) for model list; a layout
// priced for the dynosim reference too is marked once, not listed twice.
func tableGroups(ts []*model.Table) []tableGroup {
	var groups []tableGroup
	type key struct {
		model, sku, precision, arch, version, moeBackend string
		backend                                          model.Backend
	}
	index := map[key]int{}
	type at struct {
		g int
		l tableLayout
	}
	var dynosim []at
	for _, t := range ts {
		g := tableGroup{Model: t.Model, SKU: t.HardwareSKU, Precision: t.Quantization, Backend: t.Backend, Version: t.BackendVersion, MoEBackend: t.MoEBackend, Architecture: t.LLM.Architecture}
		if g.Precision == "" {
			// The checkpoint's own: its experts' dtype when only they are quantised.
			g.Precision, g.Checkpoint = cmp.Or(t.LLM.ExpertQuant, t.GEMMQuant), true
		}
		if t.LLM.MoE() {
			g.Architecture += " MoE"
		}
		if t.LLM.MLA() {
			g.Architecture += " MLA"
		}
		k := key{g.Model, g.SKU, g.Precision, g.Architecture, g.Version, g.MoEBackend, g.Backend}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, g)
		}
		l := tableLayout{TP: t.Layout.TP, MoETP: t.Layout.MoETP, MoEEP: t.Layout.MoEEP}
		if t.TimingReference == model.ReferenceDynosim {
			dynosim = append(dynosim, at{i, l})
			continue
		}
		groups[i].Layouts = append(groups[i].Layouts, l)
	}
	for _, d := range dynosim {
		if j := slices.Index(groups[d.g].Layouts, d.l); j >= 0 {
			groups[d.g].Layouts[j].Dynosim = true
		}
	}
	// A group of dynosim tables alone has no layout of the silicon reference to list.
	return slices.DeleteFunc(groups, func(g tableGroup) bool { return len(g.Layouts) == 0 })
}
