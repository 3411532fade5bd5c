package rules_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/markers"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
)

// Scenario files (testdata/scenarios/rules/*.txtar) hold:
//
//	-- cell.py --   the target cell. A marker line under a line marks an expected finding:
//	                `#   ^^^^ code severity Exception [certain] [fix="new text"]`; the carets give the
//	                columns (the '#' counts as column 0; a marker may also start with '^').
//	                Marker lines are removed from the cell text. No marker: no finding.
//	-- facts.json --  the facts.Inspection the inspector reports for rules.Wanted(cell)
//	                (captured from a real kernel with -update, or written by hand).
//	-- env.json --  optional: notebook facts judge/lsp add to the Env, as
//	                {"cell": 3, "definers": {"model": [9, 14]}} (the checked cell's index;
//	                name -> [index of the cell that last bound it, its execution order]).
//	-- setup.py --  optional: code that builds the kernel state; the live test runs it in a
//	                real kernel, inspects Wanted(cell), checks, then runs the cell to prove
//	                the predicted exception (or its absence) is real.
//
// A fix="..." expectation is compared with the first edit of the preferred fix (or of the
// first fix when none is preferred); `nofix` expects a finding without fixes. `certain`
// expects a finding certain by construction (finding.Finding.Certain, which an editor shows
// before the shadow run answers); without it the finding must not be certain.

// markerSyntax reads what follows the carets: code, severity, exception, optionally
// certain, then fix="..." or nofix.
var markerSyntax = markers.New(`(\S+)\s+(\S+)\s+(\S+)(\s+certain)?(?:\s+fix=(".*")|\s+(nofix))?\s*`)

type want struct {
	rng       finding.Range
	code      string
	severity  finding.Severity
	exception string
	fix       *string
	noFix     bool
	certain   bool
}

type scenario struct {
	path  string
	cell  string
	facts *facts.Inspection
	setup string
	env   *envExtra
	want  []want
}

// envExtra is the optional env.json section: what judge/lsp know about the notebook besides
// the kernel's facts (the checked cell's index, and the cell and run that last bound names).
type envExtra struct {
	Cell     *int             `json:"cell"`
	Definers map[string][]int `json:"definers"` // name -> [cell index, execution order]
}

// apply adds the notebook facts to env.
func (x *envExtra) apply(env *rules.Env) *rules.Env {
	if x == nil {
		return env
	}
	if x.Cell != nil {
		env.Cell, env.HasCell = *x.Cell, true
	}
	if x.Definers != nil {
		env.LastDefiner = func(name string) (int, int, bool) {
			d, ok := x.Definers[name]
			if !ok || len(d) != 2 {
				return 0, 0, false
			}
			return d[0], d[1], true
		}
	}
	return env
}

func parseScenario(t *testing.T, path string) *scenario {
	t.Helper()
	file := testkitscenario.Load(t, path)
	sc := &scenario{path: path}
	haveCell := false
	for _, f := range file.Sections {
		switch f.Name {
		case "cell.py":
			haveCell = true
			text, marks := markerSyntax.Parse(string(f.Data))
			for _, m := range marks {
				w := want{code: m.Groups[0], severity: finding.Severity(m.Groups[1]), exception: m.Groups[2], rng: m.Range}
				w.certain = m.Groups[3] != ""
				if m.Groups[4] != "" {
					s, err := strconv.Unquote(m.Groups[4])
					if err != nil {
						t.Fatalf("%s: bad fix %s: %v", path, m.Groups[4], err)
					}
					w.fix = &s
				}
				w.noFix = m.Groups[5] != ""
				if w.exception == "-" {
					w.exception = ""
				}
				sc.want = append(sc.want, w)
			}
			sc.cell = text
		case "facts.json":
			sc.facts = &facts.Inspection{}
			file.JSON(t, f, sc.facts)
		case "setup.py":
			sc.setup = string(f.Data)
		case "env.json":
			sc.env = &envExtra{}
			file.JSON(t, f, sc.env)
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
	}
	if !haveCell {
		t.Fatalf("%s: no cell.py section", path)
	}
	return sc
}

// envFrom turns an inspector answer into the rules' environment.
func envFrom(ins *facts.Inspection) *rules.Env {
	env := &rules.Env{Values: ins.Values, ExecutionCount: ins.ExecutionCount}
	if ins.Namespace != nil {
		env.Namespace = map[string]bool{}
		for _, n := range ins.Namespace {
			env.Namespace[n] = true
		}
	}
	if ins.Imported != nil {
		env.Imported = map[string]bool{}
		for _, n := range ins.Imported {
			env.Imported[n] = true
		}
	}
	return env
}

// compare checks findings against the scenario's markers, exactly.
func compare(t *testing.T, sc *scenario, got []finding.Finding) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range sc.want {
		found := false
		for i, g := range got {
			if used[i] || g.Range != w.rng || g.Code != w.code || g.Severity != w.severity || g.Exception != w.exception {
				continue
			}
			if w.fix != nil {
				if text, ok := fixText(g); !ok || text != *w.fix {
					t.Errorf("%s: %s at %s: fix = %q, want %q (fixes %+v)", sc.path, w.code, rangeText(w.rng), text, *w.fix, g.Fixes)
				}
			}
			if w.noFix && len(g.Fixes) > 0 {
				t.Errorf("%s: %s at %s: want no fix, got %+v", sc.path, w.code, rangeText(w.rng), g.Fixes)
			}
			if g.Certain != w.certain {
				t.Errorf("%s: %s at %s: certain = %v, want %v", sc.path, w.code, rangeText(w.rng), g.Certain, w.certain)
			}
			used[i], found = true, true
			break
		}
		if !found {
			t.Errorf("%s: missing finding at %s: %s %s %s", sc.path, rangeText(w.rng), w.code, w.severity, w.exception)
		}
	}
	for i, g := range got {
		if !used[i] {
			t.Errorf("%s: unexpected finding at %s: %s %s %s: %s %v", sc.path, rangeText(g.Range), g.Code, g.Severity, g.Exception, g.Message, g.Evidence)
		}
		if g.Source != finding.SourceRules || g.Message == "" || len(g.Evidence) == 0 || g.Confidence <= 0 || g.Cell != "cell" {
			t.Errorf("%s: finding lacks source, message, evidence, confidence or cell: %+v", sc.path, g)
		}
		checkRegistered(t, sc.path, g)
	}
}

// checkRegistered fails a finding whose code is not registered for the rules layer, or
// whose exception is not one the registry says the code predicts.
func checkRegistered(t *testing.T, path string, g finding.Finding) {
	t.Helper()
	r, ok := finding.Lookup(g.Code)
	switch {
	case !ok:
		t.Errorf("%s: code %q is not registered in finding/codes.go", path, g.Code)
	case !r.Has(g.Source):
		t.Errorf("%s: code %s is registered for %v, not for the %s layer", path, g.Code, r.Layers, g.Source)
	case g.Exception != "" && !slices.Contains(r.Exceptions, g.Exception):
		t.Errorf("%s: code %s predicts %s, which its registry entry does not list (%v)", path, g.Code, g.Exception, r.Exceptions)
	}
}

func fixText(f finding.Finding) (string, bool) {
	for _, x := range f.Fixes {
		if x.Preferred && len(x.Edits) > 0 {
			return x.Edits[0].NewText, true
		}
	}
	if len(f.Fixes) > 0 && len(f.Fixes[0].Edits) > 0 {
		return f.Fixes[0].Edits[0].NewText, true
	}
	return "", false
}

func rangeText(r finding.Range) string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
}

// rulesDir holds the rules' scenarios.
func rulesDir(t testing.TB) string { return testkitscenario.Dir(t, "scenarios", "rules") }

func scenarioFiles(t *testing.T) []string {
	t.Helper()
	return testkitscenario.Paths(t, rulesDir(t), 1)
}

// TestScenarios runs every scenario against its recorded facts.
func TestScenarios(t *testing.T) {
	for _, path := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), testkitscenario.Ext), func(t *testing.T) {
			sc := parseScenario(t, path)
			if sc.facts == nil {
				t.Skipf("%s has no facts.json yet: run go test -run TestLiveScenarios -update", path)
			}
			cf := analysis.ParseCell(sc.cell)
			rules.SetPanicHook(func(r any) { t.Errorf("rule panic: %v", r) })
			defer rules.SetPanicHook(nil)
			got := rules.Check("cell", cf, sc.env.apply(envFrom(sc.facts)))
			compare(t, sc, got)
		})
	}
}

// BenchmarkCheck measures Check alone (parse excluded) on a scenario with a wide frame and
// several statements.
func BenchmarkCheck(b *testing.B) {
	t := &testing.T{}
	sc := parseScenario(t, filepath.Join(rulesDir(b), "sklearn-split-propagation.txtar"))
	cf := analysis.ParseCell(sc.cell)
	env := envFrom(sc.facts)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rules.Check("cell", cf, env)
	}
}
