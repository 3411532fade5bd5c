package rules

import (
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

func TestSuggest(t *testing.T) {
	cols := []string{"PassengerId", "Survived", "Age", "Fare", "Total Gross (millions)", "Embarked", "fare_usd"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"age", "Age", true}, // case
		{"Total_Gross_(millions)", "Total Gross (millions)", true}, // spacing/underscores
		{"Embraked", "Embarked", true},                             // transposition
		{"Survive", "Survived", true},                              // near miss
		{"Cabin", "", false},                                       // nothing close
		{"Far", "Fare", true},                                      // one edit
		{"x", "", false},                                           // too short to guess
	} {
		got, ok := suggest(tc.name, cols)
		if got != tc.want || ok != tc.ok {
			t.Errorf("suggest(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// two equally close candidates: no guess
	if got, ok := suggest("fare", []string{"Fare", "FARE"}); ok {
		t.Errorf("ambiguous case match suggested %q", got)
	}
}

func TestBroadcast(t *testing.T) {
	for _, tc := range []struct {
		a, b, want []int
		ok         bool
	}{
		{[]int{2, 3}, []int{3}, []int{2, 3}, true},
		{[]int{2, 3}, []int{4}, nil, false},
		{[]int{4, 1}, []int{1, 5}, []int{4, 5}, true},
		{[]int{2, -1}, []int{7}, []int{2, -1}, true}, // unknown matches anything
		{[]int{8, 1, 6, 1}, []int{7, 1, 5}, []int{8, 7, 6, 5}, true},
	} {
		got, ok := broadcast(tc.a, tc.b)
		if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("broadcast(%v, %v) = %v, %v; want %v, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitSizes(t *testing.T) {
	f := func(x float64) *val { return constVal(x, "") }
	i := func(x int64) *val { return constVal(x, "") }
	for _, tc := range []struct {
		n                int
		test, train      *val
		wantTr, wantTest int
	}{
		{891, nil, nil, 668, 223},           // default test_size=0.25: ceil(222.75)
		{891, f(0.2), nil, 712, 179},        // ceil(178.2)
		{10, i(3), nil, 7, 3},               // absolute test size
		{10, nil, f(0.7), 7, 3},             // train_size only
		{10, f(0.5), f(0.6), -1, -1},        // over-full: sklearn raises; we stay unknown
		{10, &val{name: "ts"}, nil, -1, -1}, // a variable: unknown
	} {
		tr, te := splitSizes(tc.n, tc.test, tc.train)
		if tr != tc.wantTr || te != tc.wantTest {
			t.Errorf("splitSizes(%d) = %d, %d; want %d, %d", tc.n, tr, te, tc.wantTr, tc.wantTest)
		}
	}
}

func TestWanted(t *testing.T) {
	cf := analysis.ParseCell("import numpy as np\nX = df.drop(columns=['y'])\nmodel.fit(X, df['y'])\np = model.predict_classes(X)\nnp.mean(p)\nsns.countplot(x='a', data=df)\nprint(len(X))\n")
	got := Wanted(cf)
	want := []string{"df", "model", "sns", "df.drop", "model.fit", "model.predict_classes", "sns.__version__"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Wanted = %v, want %v", got, want)
	}
	// a name the cell binds before reading it is derived, not inspected
	cf = analysis.ParseCell("x = 1\nprint(x.bit_length())\n")
	if got := Wanted(cf); len(got) != 0 {
		t.Errorf("Wanted = %v, want nothing", got)
	}
}

// TestUTF16Ranges checks that finding ranges count UTF-16 code units, as LSP does.
func TestUTF16Ranges(t *testing.T) {
	three := 3
	env := &Env{Values: map[string]facts.Value{"df": {Name: "df", Exists: true, Kind: facts.KindDataFrame,
		Shape: []int{3, 1}, Columns: []facts.Column{{Name: "âge", Dtype: "int64", Nulls: new(int)}}, Len: &three}}}
	cell := "s = '😀'; v = df['age']"
	got := Check("c", analysis.ParseCell(cell), env)
	if len(got) != 1 {
		t.Fatalf("got %d findings, want 1: %+v", len(got), got)
	}
	// '😀' is 2 UTF-16 units: "s = '😀'; v = df[" is 17 units
	want := finding.Range{Start: finding.Position{Line: 0, Character: 17}, End: finding.Position{Line: 0, Character: 22}}
	if got[0].Range != want {
		t.Errorf("range = %+v, want %+v", got[0].Range, want)
	}
	if fix := got[0].Fixes; len(fix) != 1 || fix[0].Edits[0].NewText != "'âge'" {
		t.Errorf("fix = %+v, want 'âge'", fix)
	}
}

// TestLastDefinerEvidence checks notebook-order evidence on a column dropped by an earlier
// run of the same cell.
func TestLastDefinerEvidence(t *testing.T) {
	two := 2
	env := &Env{
		Values: map[string]facts.Value{"df": {Name: "df", Exists: true, Kind: facts.KindDataFrame, Shape: []int{2, 1},
			Columns: []facts.Column{{Name: "b", Dtype: "int64"}}, Len: &two}},
		ExecutionCount: 14,
		LastDefiner: func(name string) (int, int, bool) {
			if name == "df" {
				return 2, 12, true
			}
			return 0, 0, false
		},
	}
	got := Check("c", analysis.ParseCell("df = df.drop(columns=['a'])\n"), env)
	if len(got) != 1 || got[0].Code != "stale-state" || got[0].Exception != "KeyError" {
		t.Fatalf("got %+v, want one stale-state KeyError", got)
	}
	ev := strings.Join(got[0].Evidence, "\n")
	for _, s := range []string{"as of run 14", "df was last set by cell 3 (run 12)"} {
		if !strings.Contains(ev, s) {
			t.Errorf("evidence lacks %q:\n%s", s, ev)
		}
	}
}

// TestNoPanicOnOddTrees feeds Check cells whose shapes the rules do not expect.
func TestNoPanicOnOddTrees(t *testing.T) {
	SetPanicHook(func(r any) { t.Errorf("panic: %v", r) })
	defer SetPanicHook(nil)
	env := &Env{Values: map[string]facts.Value{
		"df": {Name: "df", Exists: true, Kind: facts.KindDataFrame},
		"x":  {Name: "x", Exists: true, Kind: facts.KindTensor},
		"m":  {Name: "m", Exists: true, Kind: facts.KindEstimator},
		"n":  {Name: "n", Exists: true, Kind: facts.KindModule},
	}}
	for _, cell := range []string{
		"df[", "df.drop(*cols, **kw)", "x.view()", "x.reshape(*s)", "m.fit()", "m.predict()", "n()", "n(x, *rest)",
		"df.loc[]", "np.concatenate()", "pd.get_dummies()", "a, *b = train_test_split(*arrays)",
		"df.rename(columns=mapping)", "del df[k]", "for in x:", "x @", "len()", "df.agg({})",
		"with open(f) as (a, b): pass", "lambda: df['zz']", "df.groupby()['a']",
	} {
		Check("c", analysis.ParseCell(cell), env)
		Check("c", analysis.ParseCell(cell), nil)
	}
}
