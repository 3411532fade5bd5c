package repair

import (
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
)

// unran builds cells that have not run, at notebook indexes from first on.
func unran(first int, texts ...string) []Cell {
	var out []Cell
	for i, t := range texts {
		out = append(out, Cell{ID: "u" + itoa(i), Index: first + i, Text: t, Facts: analysis.ParseCell(t)})
	}
	return out
}

func names(ns ...string) []facts.Value {
	var out []facts.Value
	for _, n := range ns {
		out = append(out, facts.Value{Name: n, Exists: true})
	}
	return out
}

func TestNameCandidates(t *testing.T) {
	tests := []struct {
		name  string
		in    Input
		want  string // the text after the first candidate; "" means no candidate
		title string // the first candidate's title, when set
	}{
		{"defined by a later cell that has not run", func() Input {
			in := input("ridge = Ridge(alpha=1.0).fit(X_train_s, y_train)\nridge.score(X_train_s, y_train)\n", "NameError", "name 'X_train_s' is not defined", 0,
				names("Ridge", "StandardScaler", "X_train", "X_test", "y_train")...)
			in.Unrun = map[string]bool{"scaler": true, "X_train_s": true, "X_test_s": true}
			in.Unran = unran(5, "scaler = StandardScaler()\nX_train_s = scaler.fit_transform(X_train)\nX_test_s = scaler.transform(X_test)")
			return in
		}(), "scaler = StandardScaler()\nX_train_s = scaler.fit_transform(X_train)\nridge = Ridge(alpha=1.0).fit(X_train_s, y_train)\nridge.score(X_train_s, y_train)\n",
			"Define X_train_s as in cell 6: `scaler = StandardScaler(); X_train_s = scaler.fit_transform(X_train)`"},
		{"defined by a skipped cell, used on the second line", func() Input {
			in := input("df = df.dropna()\ncorr = df[features + ['Churn']].corr()\n", "NameError", "name 'features' is not defined", 1, names("df")...)
			in.Unrun = map[string]bool{"features": true}
			in.Unran = unran(4, "features = ['Tenure', 'MonthlyCharges']\nprint(features)")
			return in
		}(), "df = df.dropna()\nfeatures = ['Tenure', 'MonthlyCharges']\ncorr = df[features + ['Churn']].corr()\n", ""},
		{"in-place changes after the binding come along", func() Input {
			in := input("X = df[cols]\n", "NameError", "name 'cols' is not defined", 0, names("df")...)
			in.Unran = unran(2, "cols = ['a']\ncols.append('b')\nprint(len(cols))")
			return in
		}(), "cols = ['a']\ncols.append('b')\nX = df[cols]\n", ""},
		{"a dependency from another cell that has not run", func() Input {
			in := input("print(total)\n", "NameError", "name 'total' is not defined", 0, names("df")...)
			in.Unran = unran(2, "n = len(df)", "total = n * 2")
			return in
		}(), "n = len(df)\ntotal = n * 2\nprint(total)\n", ""},
		{"a binding lost after its cell ran", func() Input {
			in := input("print(y_pred[:3])\n", "NameError", "name 'y_pred' is not defined", 0, names("model", "X_test")...)
			in.History = hist("y_pred = model.predict(X_test)", "del y_pred")
			return in
		}(), "y_pred = model.predict(X_test)\nprint(y_pred[:3])\n", ""},
		{"what the binding reads exists nowhere", func() Input {
			in := input("print(total)\n", "NameError", "name 'total' is not defined", 0)
			in.Unran = unran(2, "total = n * 2")
			return in
		}(), "", ""},
		{"the defining cell writes a file", func() Input {
			in := input("print(out)\n", "NameError", "name 'out' is not defined", 0, names("df")...)
			in.Unran = unran(2, "out = df.to_csv('out.csv')")
			return in
		}(), "", ""},
		{"no cell binds it", input("print(frobnicate(1))\n", "NameError", "name 'frobnicate' is not defined", 0, names("df")...), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Candidates(tc.in)
			if tc.want == "" {
				if len(cs) > 0 {
					t.Fatalf("want no candidate, got %q: %q", cs[0].Fix.Title, applied(t, tc.in, cs[0]))
				}
				return
			}
			if len(cs) == 0 {
				t.Fatalf("no candidate, want %q", tc.want)
			}
			if got := applied(t, tc.in, cs[0]); got != tc.want {
				t.Errorf("first candidate %q gives\n%q\nwant\n%q", cs[0].Fix.Title, got, tc.want)
			}
			if tc.title != "" && cs[0].Fix.Title != tc.title {
				t.Errorf("title %q, want %q", cs[0].Fix.Title, tc.title)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	tests := []struct{ old, new string }{
		{"a\nb\nc", "import x\na\nb\ny = 1\nc"},
		{"a\nb", "a\nb\nc"},
		{"a\nb\n", "a\nB\n"},
		{"", "x = 1"},
		{"x = 1", ""},
		{"a\nb\nc\nd", "a\nc\nd\ne"},
		{"same", "same"},
	}
	for _, tc := range tests {
		es := Diff(tc.old, tc.new)
		got, err := ApplyEdits(tc.old, es)
		if err != nil || got != tc.new {
			t.Errorf("Diff(%q, %q) = %+v applies to %q, %v", tc.old, tc.new, es, got, err)
		}
	}
	if es := Diff("a\nb\nc", "import x\na\nb\ny = 1\nc"); len(es) != 2 {
		t.Errorf("two insertions gave %d edits: %+v", len(es), es)
	}
}
