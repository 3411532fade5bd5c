package repair

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// textFrame is a DataFrame value whose columns named in text are object columns.
func textFrame(name string, rows int, cols []string, text ...string) facts.Value {
	v := frame(name, cols...)
	v.Shape = []int{rows, len(cols)}
	for i, c := range v.Columns {
		for _, t := range text {
			if c.Name == t {
				v.Columns[i].Dtype = "object"
			}
		}
	}
	return v
}

// crash adds crash-frame facts to in.
func crash(in Input, vs ...facts.Value) Input {
	in.CrashFacts = map[string]facts.Value{}
	for _, v := range vs {
		in.CrashFacts[v.Name] = v
	}
	return in
}

// TestBuildSiteRepairs covers the build-site family alone: want is the text one of its
// candidates must produce (a history cell's text prefixed with its ID and ":"), "" that it
// proposes nothing.
func TestBuildSiteRepairs(t *testing.T) {
	pd := facts.Value{Name: "pd", Exists: true, Kind: "module"}
	split := "X = churn.drop(columns=['id'])\nX_tr, X_te, y_tr, y_te = train_test_split(X, y)\nrf.fit(X_tr, y_tr)\n"
	churnX := textFrame("X", 12, []string{"tenure", "Contract"}, "Contract")
	nameCol := textFrame("df", 6, []string{"Age", "Name"}, "Name")
	nameCol.Columns[1].NUnique = intp(6)
	sexCol := textFrame("df", 6, []string{"Age", "Sex"}, "Sex")
	sexCol.Columns[1].NUnique = intp(2)
	price := facts.Value{Name: "y", Exists: true, Kind: facts.KindSeries, Dtype: "object", Columns: []facts.Column{{Name: "price", Dtype: "object", NonNumericSample: []string{"$1,250.00"}}}}
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"frame built and split in the cell, from the crash facts",
			crash(input(split, "ValueError", "could not convert string to float: 'Month-to-month'", 2, pd), churnX),
			"X = pd.get_dummies(churn.drop(columns=['id']))\nX_tr, X_te, y_tr, y_te = train_test_split(X, y)\nrf.fit(X_tr, y_tr)\n"},
		{"numeric columns only: not the build site's text", func() Input {
			return crash(input(split, "ValueError", "could not convert string to float: 'Month-to-month'", 2, pd), frame("X", "tenure"))
		}(), ""},
		{"stale kernel value: the cell rebinds X, the crash frame's facts count", func() Input {
			in := input(split, "ValueError", "could not convert string to float: 'Month-to-month'", 2, pd, frame("X", "tenure"))
			return crash(in, churnX)
		}(), "X = churn.drop(columns=['id']).select_dtypes('number')\nX_tr, X_te, y_tr, y_te = train_test_split(X, y)\nrf.fit(X_tr, y_tr)\n"},
		{"frame built in an earlier cell", func() Input {
			in := input("X_tr, X_te, y_tr, y_te = train_test_split(X, y)\nrf.fit(X_tr, y_tr)\n", "ValueError", "could not convert string to float: 'Month-to-month'", 1, pd, churnX)
			in.History = hist("churn = load()\nX = churn[cols]")
			return in
		}(), "c0:churn = load()\nX = pd.get_dummies(churn[cols])"},
		{"an address column: one indicator per row is no encoding, the numeric columns are", func() Input {
			addr := textFrame("X", 12, []string{"sqft", "street"}, "street")
			addr.Columns[1].NUnique = intp(12)
			return crash(input(split, "ValueError", "could not convert string to float: '9808 NE 204th Pl'", 2, pd), addr)
		}(), "X = churn.drop(columns=['id']).select_dtypes('number')\nX_tr, X_te, y_tr, y_te = train_test_split(X, y)\nrf.fit(X_tr, y_tr)\n"},
		{"a split whose parts cannot be told apart", crash(input("X = df.drop(columns=['id'])\nparts = train_test_split(X, y)\nrf.fit(parts[0], y)\n", "ValueError", "could not convert string to float: 'a'", 2, pd), churnX), ""},
		{"text column a scaler gets, codes before the call",
			input("cols = ['Age', 'Sex']\ndf[cols] = sc.fit_transform(df[cols])\n", "ValueError", "could not convert string to float: 'male'", 1, pd, sexCol),
			"cols = ['Age', 'Sex']\ndf['Sex'] = pd.factorize(df['Sex'], sort=True)[0]\ndf[cols] = sc.fit_transform(df[cols])\n"},
		{"a long list an earlier cell computed: the column the message names", func() Input {
			cols := facts.Value{Name: "cols", Exists: true, Kind: facts.KindList, Len: intp(8), Sample: []any{"Age", "Fare", "Pclass", "SibSp", "Parch"}}
			sex := sexCol
			sex.Columns = append([]facts.Column(nil), sexCol.Columns...)
			sex.Columns[1].NonNumericSample = []string{"male", "female"}
			return input("df[cols] = sc.fit_transform(df[cols])\n", "ValueError", "could not convert string to float: 'male'", 0, pd, sex, cols)
		}(), "df['Sex'] = pd.factorize(df['Sex'], sort=True)[0]\ndf[cols] = sc.fit_transform(df[cols])\n"},
		{"a column of names: codes would be row numbers",
			input("cols = ['Age', 'Name']\ndf[cols] = sc.fit_transform(df[cols])\n", "ValueError", "could not convert string to float: 'Braund'", 1, pd, nameCol), ""},
		{"a text column the selection does not hold",
			input("df[['Age']] = sc.fit_transform(df[['Age']])\n", "ValueError", "could not convert string to float: 'male'", 0, pd, sexCol), ""},
		{"currency target built in the cell",
			crash(input("y = listings[\"price\"]\nmodel.fit(X, y)\n", "ValueError", "could not convert string to float: '$1,250.00'", 1, pd), price),
			"y = pd.to_numeric(listings[\"price\"].str.replace(r\"[$,]\", \"\", regex=True))\nmodel.fit(X, y)\n"},
		{"an address is no number with symbols",
			crash(input("y = listings[\"street\"]\nmodel.fit(X, y)\n", "ValueError", "could not convert string to float: '9808 NE 204th Pl'", 1, pd), price), ""},
		{"without pandas nothing is written with pd", crash(input(split, "ValueError", "could not convert string to float: 'Month-to-month'", 2), churnX), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Candidates(tc.in, nil) {
				if c.Family == "build-site" {
					got = append(got, applied(t, tc.in, c))
				}
			}
			if tc.want == "" {
				if len(got) > 0 {
					t.Fatalf("want no build-site candidate, got %q", got)
				}
				return
			}
			for _, g := range got {
				if strings.Contains(g, "get_dummies") && strings.Contains(tc.name, "address") {
					t.Fatalf("an address column one-hot encoded: %q", g)
				}
			}
			for _, g := range got {
				if g == tc.want {
					return
				}
			}
			t.Fatalf("no candidate gives\n%s\ngot:\n%s", tc.want, strings.Join(got, "\n---\n"))
		})
	}
}

// TestCrashValue: the crash frame's facts replace the kernel's for a name the cell binds
// before the crash line or one the kernel lacks, never for one it holds unchanged.
func TestCrashValue(t *testing.T) {
	in := input("X = df.drop(columns=['id'])\nm.fit(X, y)\n", "ValueError", "x", 1, frame("X", "old"), frame("df", "kernel"), frame("y", "kernel"))
	in = crash(in, frame("X", "new"), frame("df", "frame"), frame("z", "only"))
	for name, want := range map[string]string{"X": "new", "df": "kernel", "z": "only"} {
		v, ok := in.value(name)
		if !ok || len(v.Columns) == 0 || v.Columns[0].Name != want {
			t.Errorf("value(%s) = %v, %v; want the %q facts", name, v.Columns, ok, want)
		}
	}
}

// TestNeedsFromCrashFacts: what a model and a network the crashing cell built hold reaches
// the needed/got evidence through the crash facts.
func TestNeedsFromCrashFacts(t *testing.T) {
	model := facts.Value{Name: "m", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "LinearRegression", Fitted: true, FeatureNamesIn: []string{"beds", "baths", "sqft"}}}
	in := crash(input("m = LinearRegression().fit(X, y)\nm.predict(X_new)\n", "ValueError", "X has 2 features, but LinearRegression is expecting 3 features as input.", 1, facts.Value{Name: "m", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "Ridge"}}), model)
	want := "columns m saw at fit time: [beds, baths, sqft]"
	if got := Needs(in); !containsStr(got, want) {
		t.Errorf("Needs = %q, want %q among them", got, want)
	}
	net := facts.Value{Name: "net", Exists: true, Module: &facts.Module{Last: &facts.Layer{OutFeatures: intp(4)}}}
	in = crash(input("net = Net()\nloss = crit(net(X), y)\n", "IndexError", "Target 7 is out of bounds.", 1), net)
	want = "needed: class labels in [0, 3] (the model outputs 4 classes); got: a target of 7"
	if got := Needs(in); !containsStr(got, want) {
		t.Errorf("Needs = %q, want %q among them", got, want)
	}
}

// TestEditSizeWrap: a wrap counts what it adds, so encoding where X is built (a whole-line
// edit, as a chained composite writes it) ranks before the longer column selection.
func TestEditSizeWrap(t *testing.T) {
	texts := map[string]string{"c": "X = churn.drop(columns=['y'])\n"}
	line := finding.Range{Start: finding.Position{Line: 0}, End: finding.Position{Line: 1}}
	wrap := finding.Fix{Edits: []finding.Edit{{Range: line, NewText: "X = pd.get_dummies(churn.drop(columns=['y']))\n"}}}
	sel := finding.Fix{Edits: []finding.Edit{{Range: line, NewText: "X = churn.drop(columns=['y']).select_dtypes('number')\n"}}}
	if w, s := EditSize(texts, "c", wrap), EditSize(texts, "c", sel); w != 16 || s != 24 {
		t.Fatalf("EditSize: wrap %d, selection %d; want 16 and 24", w, s)
	}
	other := finding.Fix{Edits: []finding.Edit{{Range: line, NewText: "X = churn[['a']]\n"}}}
	if got := EditSize(texts, "c", other); got != len(".drop(columns=['y'])")+len("[['a']]") {
		t.Fatalf("EditSize of a replacement = %d", got)
	}
}
