package llm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
)

// scenario is one prompt test read from testdata/llm/prompts/*.txtar.
type scenario struct {
	in   Input
	cfg  Config
	want []string
}

func loadScenario(t *testing.T, file *testkitscenario.File) scenario {
	t.Helper()
	path := file.Path
	var sc scenario
	type numbered struct {
		n    int
		text string
	}
	var cells []numbered
	for _, f := range file.Sections {
		data := string(f.Data)
		switch {
		case f.Verb() == "cell" && f.Arg() != "":
			n, err := strconv.Atoi(f.Arg())
			if err != nil {
				t.Fatalf("%s: bad section %q", path, f.Name)
			}
			cells = append(cells, numbered{n, strings.TrimRight(data, "\n")})
		case f.Name == "target":
			sc.in.Target = CellText{Index: 99, Text: strings.TrimRight(data, "\n")}
		case f.Name == "facts.json":
			file.JSON(t, f, &sc.in.Facts)
		case f.Name == "evidence.json":
			file.JSON(t, f, &sc.in.Evidence)
		case f.Name == "config.json":
			var c struct {
				SendValues      bool  `json:"send_values"`
				MaxPromptTokens int   `json:"max_prompt_tokens"`
				Dependencies    []int `json:"dependencies"`
				Slice           bool  `json:"slice"`
			}
			file.JSON(t, f, &c)
			sc.cfg.SendValues = c.SendValues
			sc.cfg.MaxPromptTokens = c.MaxPromptTokens
			sc.in.Dependencies = c.Dependencies
			if c.Slice {
				sc.in.Dependencies = []int{} // filled below
			}
		case f.Name == "want":
			for _, l := range strings.Split(data, "\n") {
				if strings.TrimSpace(l) != "" {
					sc.want = append(sc.want, l)
				}
			}
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].n < cells[j].n })
	for i, c := range cells {
		sc.in.Executed = append(sc.in.Executed, CellText{Index: i, ExecutionOrder: c.n, Text: c.text})
	}
	if sc.in.Dependencies != nil && len(sc.in.Dependencies) == 0 {
		sc.in.Dependencies = SliceDependencies(sc.in.Executed, sc.in.Target.Text)
	}
	return sc
}

// TestPromptScenarios checks the prompt actually built: which cells are sent, the facts and
// what of them is withheld, redaction, evidence and the numbered target.
func TestPromptScenarios(t *testing.T) {
	testkitscenario.Run(t, testkitscenario.Dir(t, "llm", "prompts"), 1, func(t *testing.T, file *testkitscenario.File) {
		sc := loadScenario(t, file)
		p := BuildPrompt(sc.in, sc.cfg)
		for _, w := range sc.want {
			op, arg := w[:1], strings.TrimSpace(w[1:])
			switch op {
			case "+":
				if !strings.Contains(p.User, arg) {
					t.Errorf("prompt lacks %q", arg)
				}
			case "-":
				if strings.Contains(p.User, arg) {
					t.Errorf("prompt contains %q", arg)
				}
			case "=":
				key, val, _ := strings.Cut(arg, " ")
				var got string
				switch key {
				case "cells":
					got = fmt.Sprint(p.Cells)
				case "dropped":
					got = fmt.Sprint(p.DroppedCells)
				case "withheld":
					got = fmt.Sprint(p.ValuesWithheld)
				case "redactions":
					got = fmt.Sprint(p.Redactions)
				case "max_tokens":
					if p.Tokens > sc.cfg.MaxPromptTokens {
						t.Errorf("prompt has %d tokens, budget %d", p.Tokens, sc.cfg.MaxPromptTokens)
					}
					continue
				default:
					t.Fatalf("unknown check %q", key)
				}
				if got != val {
					t.Errorf("%s = %s, want %s", key, got, val)
				}
			default:
				t.Fatalf("bad want line %q", w)
			}
		}
		if t.Failed() {
			t.Logf("user prompt:\n%s", p.User)
		}
	})
}

func TestPromptSystemAsksForReasoningAndJSON(t *testing.T) {
	p := BuildPrompt(Input{Target: CellText{Text: "x = 1"}}, Config{})
	for _, want := range []string{`"reasoning"`, `"crash"`, `"confidence"`, `"line"`, `"exception"`, `"fix"`, "step by step"} {
		if !strings.Contains(p.System, want) {
			t.Errorf("system prompt lacks %s", want)
		}
	}
	if strings.Contains(strings.ToLower(p.System+p.User), "documentation") {
		t.Error("prompt mentions API documentation; it must not carry any")
	}
	if p.Tokens <= 0 || p.Tokens != CountTokens(p.System)+CountTokens(p.User) {
		t.Errorf("Tokens = %d", p.Tokens)
	}
}

func TestNumberLines(t *testing.T) {
	got := numberLines("a = 1\n\nfor i in range(10):\n    a += i\nprint(a)\nx\ny\nz\nw\nv\n")
	want := " 1| a = 1\n 3| for i in range(10):\n 4|     a += i\n 5| print(a)\n 6| x\n 7| y\n 8| z\n 9| w\n10| v\n"
	if got != want {
		t.Errorf("numberLines:\n%s\nwant:\n%s", got, want)
	}
}

// TestFactsValuesWithheld checks, field by field, that no value fact reaches the prompt
// when SendValues is false, and that each does when it is true.
func TestFactsValuesWithheld(t *testing.T) {
	f1, f2 := 1.5, 99.25
	n := 3
	v := facts.Value{
		Name: "df", Exists: true, Type: "pandas.core.frame.DataFrame", Kind: facts.KindDataFrame,
		Shape: []int{10, 2}, HasNaN: ptr(true), NUnique: &n, Min: &f1, Max: &f2,
		Sample: []any{"SAMPLEVAL"}, Repr: "REPRVAL", Keys: []any{"KEYVAL"},
		Index:   &facts.Index{Type: "pandas.RangeIndex", Dtype: "int64", Sample: []any{"IDXVAL"}},
		Columns: []facts.Column{{Name: "Installs", Dtype: "object", NonNumericSample: []string{"NONNUMVAL"}, Min: &f1, Max: &f2}},
		Estimator: &facts.Estimator{Class: "LogisticRegression", Fitted: true, Classes: []any{"CLASSVAL"},
			Params: map[string]any{"C": 1.0, "solver": "PARAMSTR"}},
	}
	secret := []string{"SAMPLEVAL", "REPRVAL", "KEYVAL", "IDXVAL", "NONNUMVAL", "CLASSVAL", "PARAMSTR", "99.25", "1.5"}
	in := Input{Target: CellText{Text: "df['Installs'].astype(int)"}, Facts: map[string]facts.Value{"df": v}}

	off := BuildPrompt(in, Config{})
	for _, s := range secret {
		if strings.Contains(off.User, s) {
			t.Errorf("SendValues=false: prompt contains %s", s)
		}
	}
	for _, s := range []string{"shape (10, 2)", "'Installs':object", "has NaN yes", "3 unique", "LogisticRegression fitted", "C=1", "withheld"} {
		if !strings.Contains(off.User, s) {
			t.Errorf("SendValues=false: prompt lacks %q", s)
		}
	}
	if !off.ValuesWithheld {
		t.Error("ValuesWithheld = false")
	}
	on := BuildPrompt(in, Config{SendValues: true})
	for _, s := range secret {
		if !strings.Contains(on.User, s) {
			t.Errorf("SendValues=true: prompt lacks %s", s)
		}
	}
	if on.ValuesWithheld {
		t.Error("ValuesWithheld = true with SendValues")
	}
	if t.Failed() {
		t.Logf("off:\n%s\non:\n%s", off.User, on.User)
	}
}

func TestEvidenceSkipsLLMFindings(t *testing.T) {
	ev := []finding.Finding{
		{Source: finding.SourceLLM, Message: "OWN-ANSWER"},
		{Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-column", Exception: "KeyError", Message: "column 'Age' is not in df",
			Range: finding.Range{Start: finding.Position{Line: 2}}, Evidence: []string{"df: DataFrame 891x11"}},
	}
	got := renderEvidence(ev)
	if strings.Contains(got, "OWN-ANSWER") {
		t.Error("LLM finding fed back as evidence")
	}
	for _, want := range []string{"missing-column (certain) at line 3: KeyError: column 'Age' is not in df", "because: df: DataFrame 891x11"} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestSharedColumnsListedOnce(t *testing.T) {
	cols := []facts.Column{{Name: "a", Dtype: "int64"}, {Name: "b", Dtype: "int64"}, {Name: "c", Dtype: "float64"}, {Name: "d", Dtype: "object"}}
	frame := func(n string, rows int) facts.Value {
		return facts.Value{Name: n, Exists: true, Type: "pandas.core.frame.DataFrame", Kind: facts.KindDataFrame, Shape: []int{rows, 4}, Columns: cols}
	}
	in := Input{Target: CellText{Text: "m.fit(X_train, X_test)"}, Facts: map[string]facts.Value{"X_train": frame("X_train", 80), "X_test": frame("X_test", 20)}}
	p := BuildPrompt(in, Config{})
	if strings.Count(p.User, "'c':float64") != 1 || !strings.Contains(p.User, "columns (4) the same as X_train") {
		t.Errorf("shared columns:\n%s", p.User)
	}
}

func TestSubscriptStrings(t *testing.T) {
	got := subscriptStrings(`df['Age'] + df[["Fare", 'Sex']] ; x.loc[:, 'Cabin'] ; f('notsub') ; d["Age"]`)
	if fmt.Sprint(got) != "[Age Fare Sex Cabin]" {
		t.Errorf("subscriptStrings = %v", got)
	}
}

// TestWideFrameColumns: a wide DataFrame lists the columns the target subscripts, the first
// few, a dtype count of the rest, and the subscripted names it lacks.
func TestWideFrameColumns(t *testing.T) {
	var cols []facts.Column
	for i := 0; i < 100; i++ {
		dt := "int64"
		if i%4 == 0 {
			dt = "float64"
		}
		cols = append(cols, facts.Column{Name: fmt.Sprintf("c%d", i), Dtype: dt})
	}
	in := Input{Target: CellText{Text: "df['c77'] + df['Age']"}, Facts: map[string]facts.Value{
		"df": {Name: "df", Exists: true, Type: "pandas.core.frame.DataFrame", Kind: facts.KindDataFrame, Shape: []int{5, 100}, Columns: cols}}}
	p := BuildPrompt(in, Config{})
	for _, want := range []string{"columns (100) 'c0':float64, 'c1':int64,", "'c9':int64, 'c77':int64, ... 89 more (int64 67, float64 22); not columns: 'Age'", "shape (5, 100)"} {
		if !strings.Contains(p.User, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p.User)
		}
	}
	if strings.Contains(p.User, "'c50'") {
		t.Error("unmentioned column beyond the first ten listed")
	}
}
