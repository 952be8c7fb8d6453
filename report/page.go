package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Page is a self-contained HTML document: headings, paragraphs, tables and figures, with
// every chart inline as SVG. It loads nothing from anywhere and prints one figure per page
// region without splitting it.
type Page struct {
	Title  string
	blocks []block
}

type block struct {
	Kind    string // h2, p, table, figure, pre
	Text    string
	Head    []string
	Rows    [][]string
	SVG     template.HTML
	Caption string
	fig     *Figure // a chart HTML draws
}

// Heading starts a section.
func (p *Page) Heading(text string) { p.blocks = append(p.blocks, block{Kind: "h2", Text: text}) }

// Para adds a paragraph of plain text.
func (p *Page) Para(format string, args ...any) {
	p.blocks = append(p.blocks, block{Kind: "p", Text: fmt.Sprintf(format, args...)})
}

// Pre adds preformatted text (a command line, a fingerprint).
func (p *Page) Pre(text string) { p.blocks = append(p.blocks, block{Kind: "pre", Text: text}) }

// Table adds a table; cells are plain text.
func (p *Page) Table(head []string, rows [][]string) {
	p.blocks = append(p.blocks, block{Kind: "table", Head: head, Rows: rows})
}

// Figure adds a chart. HTML draws it as SVG, a page's charts at once, one per core.
func (p *Page) Figure(f Figure) {
	p.blocks = append(p.blocks, block{Kind: "figure", Caption: f.Caption, fig: &f})
}

// drawFigures renders the charts of the figure blocks as SVG on one goroutine per core; the
// error is the first chart's in page order that fails.
func drawFigures(blocks []block) error {
	var figs []int
	for i, b := range blocks {
		if b.fig != nil {
			figs = append(figs, i)
		}
	}
	errs := make([]error, len(figs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(figs)) {
		wg.Go(func() {
			for j := int(next.Add(1) - 1); j < len(figs); j = int(next.Add(1) - 1) {
				b := &blocks[figs[j]]
				svg, err := b.fig.Render("svg")
				if err != nil {
					errs[j] = err
					continue
				}
				// The XML prolog is not allowed inside HTML; the <svg> element is.
				if i := bytes.Index(svg, []byte("<svg")); i > 0 {
					svg = svg[i:]
				}
				b.SVG = template.HTML(svg)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; max-width: 62rem; margin: 1.5rem auto; padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: .5rem; }
h2 { font-size: 1.15rem; margin-top: 1.8rem; border-bottom: 1px solid #ccc; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .85rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: .2rem .5rem; text-align: right; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
figure { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .85rem; color: #444; }
pre { background: #f6f6f6; padding: .6rem; overflow-x: auto; font-size: .8rem; white-space: pre-wrap; word-break: break-all; }
@media print { body { max-width: none; margin: 0; } h2 { break-after: avoid; } table, pre { break-inside: avoid; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Blocks}}{{if eq .Kind "h2"}}<h2>{{.Text}}</h2>
{{else if eq .Kind "p"}}<p>{{.Text}}</p>
{{else if eq .Kind "pre"}}<pre>{{.Text}}</pre>
{{else if eq .Kind "table"}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{else if eq .Kind "figure"}}<figure>
{{.SVG}}
{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}
</figure>
{{end}}{{end}}</body>
</html>
`))

// HTML renders the page.
func (p *Page) HTML() ([]byte, error) {
	blocks := slices.Clone(p.blocks)
	if err := drawFigures(blocks); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		Title  string
		Blocks []block
	}{p.Title, blocks})
	return b.Bytes(), err
}

// WriteFigures writes each figure as dir/NAME.FORMAT (format "svg" or "png"), for slides.
func WriteFigures(dir, format string, figs []Figure) error {
	format = strings.ToLower(format)
	if format != "svg" && format != "png" {
		return fmt.Errorf("--plots: want svg or png, got %q", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		data, err := f.Render(format)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name+"."+format), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
