package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/routerlab/routerlab/config"
)

// Markers around docs/experiment-file.md's generated reference.
const (
	referenceStart = "<!-- generated from config's key table by TestExperimentFileReference: go generate . rewrites it -->\n"
	referenceEnd   = "<!-- end of the generated reference -->\n"
)

// TestExperimentFileReference requires docs/experiment-file.md's key reference to be what
// config.KeyReference renders from the parser's own key table; -update rewrites it.
func TestExperimentFileReference(t *testing.T) {
	const path = "docs/experiment-file.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, referenceStart), strings.Index(doc, referenceEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated reference between %q and %q", path, referenceStart, referenceEnd)
	}
	want := doc[:i+len(referenceStart)] + config.KeyReference() + "\n" + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s regenerated", path)
		return
	}
	t.Errorf("%s's key reference differs from config's key table:\n%s\nRegenerate with: go generate .",
		path, diffLines(doc[i:], want[i:]))
}

// ranElsewhere are README commands that no generated block can run (they serve or wait), with
// the end-to-end script that runs them; each flag of the command must appear in it.
var ranElsewhere = map[string]string{
	"go test ./...": "", // the command that runs this test
	"routerlab serve --ssh 0.0.0.0:2222 --authorized-keys team_operators --viewer-keys team_viewers": ".ci/tui-e2e.sh",
	"routerlab worker --nats nats://nats-host:4222 --nats-nkey worker.nk":                            ".ci/nats-e2e.sh",
	"routerlab sweep --out runs/seed --nats nats://nats-host:4222 --nats-nkey coordinator.nk":        ".ci/nats-e2e.sh",
}

// TestREADMECommands requires every command in README.md's sh blocks to be run by a test: a
// generated block of README.md or docs/*.md runs it, the explorer's screens run `go run .`,
// or an end-to-end script runs it (ranElsewhere, whose flags are checked against the script).
func TestREADMECommands(t *testing.T) {
	generated := map[string]bool{}
	for _, doc := range documents(t) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blockRE.FindAllStringSubmatch(string(data), -1) {
			for _, line := range strings.Split(b[1], "\n") {
				if cmd, ok := strings.CutPrefix(line, "$ "); ok {
					if explorerLine.MatchString(cmd) {
						cmd = "go run ."
					}
					generated[strings.TrimSuffix(cmd, " > /dev/null")] = true
				}
			}
		}
	}
	cmds := shCommands(t, "README.md")
	if len(cmds) == 0 {
		t.Fatal("README.md has no sh block")
	}
	for _, cmd := range cmds {
		if generated[cmd] {
			continue
		}
		script, ok := ranElsewhere[cmd]
		if !ok {
			t.Errorf("README.md: %q is run by no generated block and by no script of ranElsewhere", cmd)
			continue
		}
		if script == "" {
			continue
		}
		body, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(cmd)
		for _, f := range append([]string{fields[1]}, fields[2:]...) {
			if strings.HasPrefix(f, "--") && !strings.Contains(string(body), f) {
				t.Errorf("README.md: %q: %s does not run %s", cmd, script, f)
			}
		}
		if !strings.Contains(string(body), " "+fields[1]+" ") {
			t.Errorf("README.md: %q: %s does not run %s", cmd, script, fields[1])
		}
	}
}

// shCommands are the commands of a document's ```sh blocks, without their # comments.
func shCommands(t *testing.T, doc string) []string {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in:
			cmd, _, _ := strings.Cut(line, " #")
			if cmd = strings.TrimSpace(cmd); cmd != "" {
				cmds = append(cmds, cmd)
			}
		}
	}
	return cmds
}

// TestREADMEShape holds README.md to a guide's size, with what a newcomer comes for early:
// the set-up commands, the explorer's keys and the seed experiment in the first 120 lines.
func TestREADMEShape(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) > 400 {
		t.Errorf("README.md has %d lines, want at most 400: depth belongs in docs/", len(lines))
	}
	head := strings.Join(lines[:min(120, len(lines))], "\n")
	for _, want := range []string{"go run .          #", "go test ./...     #", "| `m` |", "| `q`, `ctrl+c` |",
		"## The seed experiment", "go run . sweep --out runs/seed"} {
		if !strings.Contains(head, want) {
			t.Errorf("README.md: %q is not in the first 120 lines", want)
		}
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks requires every relative link of README.md and docs/*.md to name a file that
// exists and, when it names a heading of a Markdown file, a heading that exists.
func TestDocLinks(t *testing.T) {
	for _, doc := range documents(t) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripFences(string(data)), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := doc
			if file != "" {
				target = filepath.Join(filepath.Dir(doc), file)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s: %v", doc, link, err)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !headingAnchors(t, target)[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", doc, link, target, frag)
			}
		}
	}
}

// stripFences returns a document with its fenced blocks blanked: their text is output, not
// links or prose.
func stripFences(doc string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.Split(doc, "\n") {
		if f := strings.TrimLeft(line, "`"); len(line)-len(f) >= 3 {
			switch {
			case fence == "":
				fence = line[:len(line)-len(f)]
			case strings.TrimSpace(line) == fence:
				fence = ""
			}
			b.WriteString("\n")
			continue
		}
		if fence == "" {
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// headingAnchors are a Markdown file's heading anchors as GitHub derives them.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors, seen := map[string]bool{}, map[string]int{}
	for _, line := range strings.Split(stripFences(string(data)), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && unicode.IsLetter(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// figureRE finds a measured figure in prose: a decimal with a unit or a percentage.
var figureRE = regexp.MustCompile(`\d[\d,]*(\.\d+)? ?(%|ms|µs|ns|MB|GB|GiB|MiB)|\d[\d,]*\.\d+ ?(s\b|×)`)

// sourceRE is a line that says where a section's figures come from: a command or source file
// in backticks and, after it on the line, the commit (7 to 40 hex digits) "at" or "@" which it
// produced them — "> Figures: `COMMAND` at COMMIT" in this project's documents.
var sourceRE = regexp.MustCompile("(?m)`[^`\n]+`[^\n]*\\b(at|@) [`*]*[0-9a-f]{7,40}\\b")

// TestDocFigures requires every section of docs/*.md whose prose quotes a measured figure to
// say where its figures come from: a line naming the command (or source) and the commit, as
// "> Figures: `COMMAND` at COMMIT", or else every figure must be printed by a generated block
// of the section (which TestREADME re-runs).
func TestDocFigures(t *testing.T) {
	for _, doc := range documents(t)[1:] {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range sections(string(data)) {
			if sourceRE.MatchString(sec.text) {
				continue
			}
			var printed strings.Builder
			for _, b := range blockRE.FindAllStringSubmatch(sec.text, -1) {
				printed.WriteString(b[1])
			}
			prose := regexp.MustCompile("`[^`\n]*`").ReplaceAllString(stripFences(sec.text), "")
			for _, f := range figureRE.FindAllString(prose, -1) {
				n := numberRE.FindString(f)
				if !regexp.MustCompile(`(^|[^\d.,])` + regexp.QuoteMeta(n) + `($|[^\d,])`).MatchString(printed.String()) {
					t.Errorf("%s, %q: quotes %q, which no generated block of the section prints, and has no \"> Figures: `COMMAND` at COMMIT\" line", doc, sec.heading, f)
					break
				}
			}
		}
	}
}

var numberRE = regexp.MustCompile(`\d[\d,]*(\.\d+)?`)

type section struct{ heading, text string }

// sections splits a document at its headings of level 1 to 3 (outside fenced blocks); a
// deeper heading stays in its section.
func sections(doc string) []section {
	var out []section
	cur := section{heading: "(top)"}
	blank := strings.Split(stripFences(doc), "\n")
	for i, line := range strings.Split(doc, "\n") {
		if h := blank[i]; strings.HasPrefix(h, "# ") || strings.HasPrefix(h, "## ") || strings.HasPrefix(h, "### ") {
			out = append(out, cur)
			cur = section{heading: strings.TrimLeft(h, "# ")}
		}
		cur.text += line + "\n"
	}
	return append(out, cur)
}
