package repair

import (
	"fmt"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

// TestBindingSites covers localisation by the dataflow: the places that bound what the
// crash line reads, nearest first, each with the line a family treats as its crash line.
func TestBindingSites(t *testing.T) {
	tests := []struct {
		name string
		text string
		line int
		hist []string
		want string // "cell:line name" per site, cell "" for the crashing cell
	}{
		{"own line above, then the newest history cell",
			"X = df[cols]\nm.fit(X, y)\n", 1,
			[]string{"y = df.pop('t')", "import pandas as pd\ncols = ['a']", "y = df['t'].values"},
			":0 X; c2:0 y; c1:1 cols"},
		{"the last of two bindings in a cell wins",
			"out = net(t)\n", 0,
			[]string{"t = torch.randn(4, 3)\nt = t.view(-1)", "net = Net()"},
			"c1:0 net; c0:1 t; c0:0 t"},
		{"imports, defs and classes are no binding site",
			"model = Net()\nloss = F.relu(model(x))\n", 1,
			[]string{"import torch.nn.functional as F\nclass Net: pass", "x = 1"},
			":0 model; c1:0 x"},
		{"a name bound below the crash line is not its source",
			"print(a)\na = 2\n", 0,
			[]string{"a = 1"},
			"c0:0 a"},
		{"one step further back: what the binding lines read, bound above them",
			"out = model.predict(X_train)\n", 0,
			[]string{"df = load()\ndf = df.dropna()", "X = df.drop(columns='t')", "X_train, X_test = split(X)", "model = fit(X)"},
			"c3:0 model; c2:0 X_train; c1:0 X"},
		{"names read inside a call's lambda are still the statement's reads",
			"s = df['p'].apply(lambda v: v * rate)\n", 0,
			[]string{"df = load()", "rate = 1.2"},
			"c1:0 rate; c0:0 df"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.text, "ValueError", "boom", tc.line)
			in.History = hist(tc.hist...)
			var got []string
			for _, s := range in.bindingSites() {
				id := s.Cell.ID
				if s.inCell {
					id = ""
				}
				got = append(got, fmt.Sprintf("%s:%d %s", id, s.Line, s.name))
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("sites %q, want %q", g, tc.want)
			}
		})
	}
}

// TestBindingSiteRepair: a family's repair made at a history cell's binding line edits that
// cell, and one made at the crashing cell's own binding line keeps the crash line intact.
func TestBindingSiteRepair(t *testing.T) {
	in := input("m.fit(X, y)\n", "KeyError", "'Sale_Price'", 0, frame("df", "SalePrice", "Area"))
	in.History = hist("y = df['Sale_Price']\nX = df[['Area']]")
	var edits []string
	for _, c := range Candidates(in, nil) {
		for _, e := range c.Fix.Edits {
			edits = append(edits, e.Cell+" "+e.NewText)
		}
	}
	if !strings.Contains(strings.Join(edits, "\n"), "c0 ") {
		t.Errorf("no candidate edits the cell that bound y; edits %q", edits)
	}
}

// TestIntentKeepsBindings: an edit that stops the cell binding a name it bound is refused,
// even though the crash line's names are all still there.
func TestIntentKeepsBindings(t *testing.T) {
	text := "X = df[cols]\nmodel.fit(X, y)\n"
	in := input(text, "ValueError", "boom", 1)
	whole := finding.Range{End: finding.Position{Line: 2}}
	tests := []struct {
		name, newText string
		want          bool
	}{
		{"bound by a walrus instead", "model.fit(X := df[cols], y)\n", true},
		{"X dropped", "model.fit(df[cols].values, y)\nprint(X)\n", false},
		{"X kept, converted", "X = df[cols].astype(float)\nmodel.fit(X, y)\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fix := finding.Fix{Title: "t", Edits: []finding.Edit{{Range: whole, NewText: tc.newText}}}
			if got := IntentKept(in, fix); got != tc.want {
				t.Errorf("IntentKept = %v, want %v", got, tc.want)
			}
		})
	}
}
