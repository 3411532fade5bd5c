package rules_test

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
)

// deepSeeds are cells shaped like generated code and pasted data: deep nesting and long
// chains, around and past the depth analysis walks.
func deepSeeds() []string {
	return []string{
		"x = " + strings.Repeat("f(", 199) + "df" + strings.Repeat(")", 199),
		"x = " + strings.Repeat("f(", 250) + "1" + strings.Repeat(")", 250),
		"y = df" + strings.Repeat("['Age']", 3000),
		"z = df" + strings.Repeat(".dropna()", 3000) + ".Agee",
		"w = " + strings.Repeat("[", 150) + "1" + strings.Repeat("]", 150),
		"v = " + strings.Repeat("X + ", 2500) + "1",
		"u = " + strings.Repeat("-", 3000) + "X",
		"t = df" + strings.Repeat(".T", 5000) + "\nprint(df['Cabin'])",
		"s = " + strings.Repeat("lambda: ", 600) + "df['Agee']",
		"df['Agee']\nX.reshape(3, 4)\nmodel.predict(X)",
	}
}

// FuzzRules runs every rule over parsed cells against a small set of kernel facts: no
// input may panic a rule or overflow the stack, and findings stay inside the cell.
func FuzzRules(f *testing.F) {
	for _, s := range deepSeeds() {
		f.Add(s)
	}
	two, three := 2, 3
	env := &rules.Env{
		Values: map[string]facts.Value{
			"df": {Name: "df", Exists: true, Kind: facts.KindDataFrame, Type: "pandas.core.frame.DataFrame",
				Shape: []int{891, 2}, Columns: []facts.Column{{Name: "Age", Dtype: "float64"}, {Name: "Fare", Dtype: "float64"}}},
			"X": {Name: "X", Exists: true, Kind: facts.KindNDArray, Type: "numpy.ndarray", Shape: []int{2, 3}, Ndim: &two, Size: &three},
		},
		Namespace: map[string]bool{"df": true, "X": true, "f": true, "model": true},
	}
	f.Fuzz(func(t *testing.T, text string) {
		rules.SetPanicHook(func(r any) { t.Errorf("a rule panicked on %q: %v", text, r) })
		defer rules.SetPanicHook(nil)
		cf := analysis.ParseCell(text)
		idx := analysis.NewLineIndex(text)
		for _, fd := range rules.Check("c", cf, env) {
			if fd.Range.End.Before(fd.Range.Start) || fd.Range.End.Line >= idx.Lines() {
				t.Fatalf("finding %s has range %v outside %q", fd.Code, fd.Range, text)
			}
		}
	})
}
