package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/markers"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/notebook"
)

// The scenario format is described in doc.go.

// markerSyntax reads what follows the carets: the code, the severity and, quoted, a
// substring of the message.
var markerSyntax = markers.New(`(\S+)\s+(\S+)(?:\s+"(.*)")?\s*`)

type wantFinding struct {
	cell     int
	rng      finding.Range
	code     string
	severity finding.Severity
	message  string
}

// scenario is a parsed txtar scenario.
type scenario struct {
	nb   *notebook.Notebook
	opts Options
	want []wantFinding
}

func parseScenario(t *testing.T, path string) *scenario {
	t.Helper()
	file := testkitscenario.Load(t, path)
	sc := &scenario{nb: &notebook.Notebook{URI: path}}
	for _, f := range file.Sections {
		fields := strings.Fields(f.Name)
		if len(fields) == 0 {
			t.Fatalf("%s: empty section name", path)
		}
		switch fields[0] {
		case "namespace":
			sc.opts.Namespace = map[string]bool{}
			for _, n := range strings.Fields(string(f.Data)) {
				sc.opts.Namespace[n] = true
			}
			continue
		case "cell", "markdown":
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
		index := len(sc.nb.Cells)
		c := &notebook.Cell{ID: fmt.Sprintf("cell-%d", index), Kind: notebook.Code, Language: "python"}
		if fields[0] == "markdown" {
			c.Kind, c.Language = notebook.Markup, "markdown"
		}
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(kv, "=")
			switch {
			case !ok: // a cell number written for the reader
			case k == "run":
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %s: bad run=%q", path, f.Name, v)
				}
				c.ExecutionOrder = n
			case k == "lang":
				c.Language = v
			default:
				t.Fatalf("%s: %s: unknown key %q", path, f.Name, k)
			}
		}
		text, marks := markerSyntax.Parse(string(f.Data))
		for _, m := range marks {
			sc.want = append(sc.want, wantFinding{
				cell: index, code: m.Groups[0], severity: finding.Severity(m.Groups[1]), message: m.Groups[2], rng: m.Range,
			})
		}
		c.Text = text
		sc.nb.Cells = append(sc.nb.Cells, c)
	}
	return sc
}

// check runs one scenario file: the findings must match its markers exactly.
func check(t *testing.T, path string) {
	t.Helper()
	sc := parseScenario(t, path)
	res, err := NewAnalyzer().Analyze(context.Background(), sc.nb, sc.opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding.Finding
	for _, c := range sc.nb.Cells {
		got = append(got, res.Findings[c.ID]...)
	}
	used := make([]bool, len(got))
	for _, w := range sc.want {
		id := fmt.Sprintf("cell-%d", w.cell)
		found := false
		for i, g := range got {
			if !used[i] && g.Cell == id && g.Range == w.rng && g.Code == w.code && g.Severity == w.severity &&
				strings.Contains(g.Message, w.message) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing finding in %s at %d:%d-%d:%d: %s %s %q", id, w.rng.Start.Line, w.rng.Start.Character,
				w.rng.End.Line, w.rng.End.Character, w.code, w.severity, w.message)
		}
	}
	for i, g := range got {
		if !used[i] {
			t.Errorf("unexpected finding in %s at %d:%d-%d:%d: %s %s %q %v", g.Cell, g.Range.Start.Line, g.Range.Start.Character,
				g.Range.End.Line, g.Range.End.Character, g.Code, g.Severity, g.Message, g.Evidence)
		}
	}
	for _, g := range got {
		if g.Source != finding.SourceStatic || g.Message == "" || len(g.Evidence) == 0 {
			t.Errorf("finding lacks source, message or evidence: %+v", g)
		}
		if r, ok := finding.Lookup(g.Code); !ok || !r.Has(finding.SourceStatic) || g.Exception != "" && !slices.Contains(r.Exceptions, g.Exception) {
			t.Errorf("code %q (exception %q) is not registered for the static layer in finding/codes.go: %+v", g.Code, g.Exception, r)
		}
	}
}

// staticDir holds the static layer's scenarios.
func staticDir(t *testing.T) string { return testkitscenario.Dir(t, "scenarios", "static") }

func TestScenarios(t *testing.T) {
	for _, f := range testkitscenario.Paths(t, staticDir(t), 25) {
		t.Run(strings.TrimSuffix(filepath.Base(f), testkitscenario.Ext), func(t *testing.T) { check(t, f) })
	}
}
