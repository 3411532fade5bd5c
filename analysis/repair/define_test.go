package repair

import (
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
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
		{"a static finding worded for a skipped cell", func() Input {
			in := input("corr = df[features].corr()\n", "NameError", "'features' is defined in cell 5, which has not run yet", 0, names("df")...)
			in.Message = ""
			in.Finding.Range = finding.Range{Start: finding.Position{Line: 0, Character: 10}, End: finding.Position{Line: 0, Character: 18}}
			in.Unran = unran(4, "features = ['a']")
			return in
		}(), "features = ['a']\ncorr = df[features].corr()\n", ""},
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
		{"returned by a method of an instance the history built", func() Input {
			in := input("import seaborn as sns\nfor col in numvars:\n    print(col)\n", "NameError", "name 'numvars' is not defined", 1, names("pp", "DataLoader")...)
			in.History = hist("class DataLoader:\n    def __init__(self):\n        self.train = 1\n    def variables(self):\n        self.numvars = [1]\n        self.catvars = [2]\n        return (self.numvars, self.catvars)", "pp = DataLoader()")
			return in
		}(), "import seaborn as sns\nnumvars, catvars = pp.variables()\nfor col in numvars:\n    print(col)\n", "Define numvars from pp.variables(), which returns it (cell 1): `numvars, catvars = pp.variables()`"},
		{"returned by a function whose parameter nothing supplies", func() Input {
			in := input("multiplicative_model\n", "NameError", "name 'multiplicative_model' is not defined", 0, names("data", "decompose")...)
			in.History = hist("def decompose(data, column_name):\n    multiplicative_model = f(data[column_name])\n    return multiplicative_model, 2")
			return in
		}(), "", ""},
		{"returned by a function whose parameters the kernel holds", func() Input {
			in := input("print(m)\n", "NameError", "name 'm' is not defined", 0, names("data", "build", "other")...)
			in.History = hist("def build(data, scale=2):\n    m = data * scale\n    return m, other")
			return in
		}(), "m = build(data)[0]\nprint(m)\n", ""},
		{"an attribute a method of the notebook's class set", func() Input {
			pp := facts.Value{Name: "pp", Exists: true, Kind: "other", Attributes: []string{"numvars", "train", "variables"}}
			in := input("for col in numvars:\n    print(col)\n", "NameError", "name 'numvars' is not defined", 0, pp)
			in.History = hist("class DataLoader:\n    def variables(self):\n        self.numvars = [1]\n        return (self.numvars, 2)", "pp = DataLoader()\npp.variables()")
			return in
		}(), "for col in pp.numvars:\n    print(col)\n", "Use pp.numvars (pp holds numvars)"},
		{"a method is no attribute to read", func() Input {
			pp := facts.Value{Name: "pp", Exists: true, Kind: "other", Attributes: []string{"train", "variables"}}
			in := input("print(variables)\n", "NameError", "name 'variables' is not defined", 0, pp)
			in.History = hist("class DataLoader:\n    def variables(self):\n        return 1", "pp = DataLoader()")
			return in
		}(), "", ""},
		{"predictions of the fitted model", func() Input {
			model := facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "DecisionTreeRegressor", Fitted: true, NFeaturesIn: intp(3), Methods: []string{"predict"}}}
			in := input("from sklearn.metrics import mean_absolute_error\nmae = mean_absolute_error(y_test, y_pred)\n", "NameError", "name 'y_pred' is not defined", 1,
				model, facts.Value{Name: "X_test", Exists: true, Shape: []int{20, 3}}, facts.Value{Name: "y_test", Exists: true})
			in.History = hist("model = DecisionTreeRegressor()", "model.fit(X_train, y_train)")
			return in
		}(), "from sklearn.metrics import mean_absolute_error\ny_pred = model.predict(X_test)\nmae = mean_absolute_error(y_test, y_pred)\n", "Define y_pred as model's predictions on X_test: `y_pred = model.predict(X_test)`"},
		{"predictions, but no model is fitted", func() Input {
			model := facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "DecisionTreeRegressor", Methods: []string{"predict"}}}
			return input("mae = mean_absolute_error(y_test, y_pred)\n", "NameError", "name 'y_pred' is not defined", 0, model, facts.Value{Name: "X_test", Exists: true})
		}(), "", ""},
		{"predictions, the model's width does not fit the split", func() Input {
			model := facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Fitted: true, NFeaturesIn: intp(4), Methods: []string{"predict"}}}
			return input("mae = mean_absolute_error(y_test, y_pred)\n", "NameError", "name 'y_pred' is not defined", 0, model, facts.Value{Name: "X_test", Exists: true, Shape: []int{20, 3}})
		}(), "", ""},
		{"a model overwritten by a later cell", func() Input {
			in := input("preds = model.predict(X_test)\n", "AttributeError", "'MinMaxScaler' object has no attribute 'predict'", 0, names("model", "X_test", "X_train")...)
			in.History = hist("model = RandomForestRegressor().fit(X_train, y_train)", "model = MinMaxScaler().fit(X_train)\nX_train_mm = model.transform(X_train)  # model: scaled")
			return in
		}(), "c1:scaler = MinMaxScaler().fit(X_train)\nX_train_mm = scaler.transform(X_train)  # model: scaled", "Name cell 2's MinMaxScaler scaler, so model stays what cell 1 bound (run cells 1 and 2 again)"},
		{"an overwritten model a later cell reads as the new object", func() Input {
			in := input("preds = model.predict(X_test)\n", "AttributeError", "'MinMaxScaler' object has no attribute 'predict'", 0, names("model", "X_test", "X_train")...)
			in.History = hist("model = RandomForestRegressor().fit(X_train, y_train)", "model = MinMaxScaler().fit(X_train)", "X_train_mm = model.transform(X_train)")
			return in
		}(), "", ""},
		{"a name rebound to the same kind of object", func() Input {
			in := input("df.foo()\n", "AttributeError", "'DataFrame' object has no attribute 'foo'", 0, names("df")...)
			in.History = hist("df = pd.read_csv('a.csv')", "df = pd.read_csv('b.csv')")
			return in
		}(), "", ""},
		{"a deletion run twice", func() Input {
			in := input("del df[\"Id\"]\ndf.shape\n", "KeyError", "'Id'", 0, names("df")...)
			in.History = hist("df = pd.read_csv('h.csv')", "del df[\"Id\"]\ndf.shape")
			return in
		}(), "if \"Id\" in df:\n    del df[\"Id\"]\ndf.shape\n", "Delete df[\"Id\"] only while it is there (cell 2 already deleted it)"},
		{"a deletion is not pointed at another key", func() Input {
			in := input("del d['b']\n", "KeyError", "'b'", 0, facts.Value{Name: "d", Exists: true, Kind: "dict", Keys: []any{"a"}, KeysComplete: true})
			in.History = hist("d = {'a': 1}")
			return in
		}(), "", ""},
		{"a drop run again", func() Input {
			in := input("df.drop([10472],inplace = True);\n", "KeyError", "'[10472] not found in axis'", 0, names("df")...)
			in.History = hist("df = pd.read_csv('x.csv')", "df.drop([10472],inplace = True);")
			return in
		}(), "df.drop([10472],inplace = True, errors='ignore');\n", "Skip labels already dropped (errors=\"ignore\")"},
		{"a drop that never ran", func() Input {
			in := input("df.drop([10472],inplace = True)\n", "KeyError", "'[10472] not found in axis'", 0, names("df")...)
			in.History = hist("df = pd.read_csv('x.csv')")
			return in
		}(), "", ""},
		{"a deletion of a key that never was", func() Input {
			in := input("del df[\"Id\"]\n", "KeyError", "'Id'", 0, frame("df", "Price"))
			in.History = hist("df = pd.read_csv('h.csv')")
			return in
		}(), "", ""},
		{"no cell binds it", input("print(frobnicate(1))\n", "NameError", "name 'frobnicate' is not defined", 0, names("df")...), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Candidates(tc.in, nil)
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
