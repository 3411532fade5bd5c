package analysis

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/premortem/premortem/notebook"
)

// incrementalEdits are lines an edit adds to a cell: bindings, deletions, star imports,
// functions reading globals, typos of defined names, reads of names from other cells.
var incrementalEdits = []string{
	"df%d = pd.read_csv('x.csv')\n", "del df%d\n", "from helpers import *\n", "%%run setup.py\n",
	"def feature_%d(frame):\n    return frame + scale%d\n", "scale%d = 2\n", "print(feat%d, X_train%d)\n",
	"clf%d.fit(X_tran%d, y_train%d)\n", "results%d = feature_%d(df%d)\n", "if cond:\n    X%d = 1\n",
	"try:\n    cache%d\nexcept NameError:\n    cache%d = {}\n", "for i in range(3):\n    counts%d = i\n",
}

// TestIncrementalMatchesFull edits a notebook at random, keystroke by keystroke and line by
// line, and checks after every edit that the incremental pass answers exactly as a pass
// from scratch: the same findings and the same flow.
func TestIncrementalMatchesFull(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		nb := benchNotebookN(60)
		a := NewAnalyzer()
		var ns map[string]bool
		if seed%2 == 0 {
			ns = map[string]bool{"np": true, "pd": true, "plt": true, "groups": true, "models": true}
		}
		for step := 0; step < 100; step++ {
			i := rng.Intn(len(nb.Cells))
			old := nb.Cells[i]
			if old.Kind != notebook.Code {
				continue
			}
			c := *old // copy-on-write, as the editor sync does
			switch r := rng.Intn(10); {
			case r < 5 && len(c.Text) > 0: // a keystroke: type or delete one character
				p := rng.Intn(len(c.Text))
				if rng.Intn(2) == 0 {
					c.Text = c.Text[:p] + string("xz_1 (\n"[rng.Intn(7)]) + c.Text[p:]
				} else {
					c.Text = c.Text[:p] + c.Text[p+1:]
				}
			case r < 9:
				n := rng.Intn(8) + 1
				line := fmt.Sprintf(incrementalEdits[rng.Intn(len(incrementalEdits))], n, n, n)
				if rng.Intn(2) == 0 {
					c.Text += "\n" + line
				} else {
					c.Text = line + c.Text
				}
			default:
				c.Text = benchNotebookN(60).Cells[rng.Intn(60)].Text
			}
			nb.Cells[i] = &c
			got, err := a.Analyze(ctx, nb, Options{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			want, err := NewAnalyzer().Analyze(ctx, nb, Options{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("seed %d step %d (cell %d now %q)", seed, step, i, c.Text)
			compareResults(t, where, nb, got, want)
			if t.Failed() {
				return
			}
		}
	}
}

// TestIncrementalAfterRun checks passes across a cell run and a structural change, which
// start over, and edits after them.
func TestIncrementalAfterRun(t *testing.T) {
	ctx := context.Background()
	nb := benchNotebookN(40)
	a := NewAnalyzer()
	check := func(where string) {
		t.Helper()
		got, err := a.Analyze(ctx, nb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := NewAnalyzer().Analyze(ctx, nb, Options{})
		compareResults(t, where, nb, got, want)
	}
	check("first pass")
	c := *nb.Cells[3]
	c.ExecutionOrder = 5000
	nb.Cells[3] = &c
	check("after a run")
	c2 := *nb.Cells[3]
	c2.Text += "\nnew_name = 1\n"
	nb.Cells[3] = &c2
	check("after an edit of the cell that ran")
	nb.Cells = append(nb.Cells[:7], nb.Cells[8:]...)
	check("after a cell was deleted")
	if n := a.Cache().Len(); n > len(nb.Cells) {
		t.Errorf("the cache holds %d cells for a notebook of %d", n, len(nb.Cells))
	}
}

func compareResults(t *testing.T, where string, nb *notebook.Notebook, got, want *Result) {
	t.Helper()
	if !reflect.DeepEqual(got.Findings, want.Findings) {
		for id := range want.Findings {
			if !reflect.DeepEqual(got.Findings[id], want.Findings[id]) {
				t.Errorf("%s: findings of %s:\n got %+v\nwant %+v", where, id, got.Findings[id], want.Findings[id])
			}
		}
		for id := range got.Findings {
			if _, ok := want.Findings[id]; !ok {
				t.Errorf("%s: findings of %s: got %+v, want none", where, id, got.Findings[id])
			}
		}
		return
	}
	if !reflect.DeepEqual(got.Flow.History(), want.Flow.History()) {
		t.Errorf("%s: history %v, want %v", where, got.Flow.History(), want.Flow.History())
	}
	names := map[string]bool{}
	want.Flow.sites.names(func(n string) { names[n] = true })
	got.Flow.sites.names(func(n string) { names[n] = true })
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if g, w := got.Flow.Definitions(n), want.Flow.Definitions(n); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: Definitions(%s) = %+v, want %+v", where, n, g, w)
		}
		g1, gok := got.Flow.LastDefinition(n)
		w1, wok := want.Flow.LastDefinition(n)
		if g1 != w1 || gok != wok {
			t.Errorf("%s: LastDefinition(%s) = %+v %v, want %+v %v", where, n, g1, gok, w1, wok)
		}
		if g, w := got.Flow.deletedSites(n), want.Flow.deletedSites(n); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: sites of %s = %+v, want %+v", where, n, g, w)
		}
	}
	for _, c := range nb.Cells {
		if g, w := got.Flow.Dependencies(c.ID), want.Flow.Dependencies(c.ID); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: Dependencies(%s) = %v, want %v", where, c.ID, g, w)
		}
	}
	if !reflect.DeepEqual(got.Facts, want.Facts) {
		t.Errorf("%s: facts differ", where)
	}
}

// deletedSites returns every executed site of name, deletions included (for comparisons).
func (fl *Flow) deletedSites(name string) []DefSite { return fl.exec(name) }
