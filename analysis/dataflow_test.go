package analysis

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// testNotebook builds a notebook from (execution order, text) pairs; IDs are cell-<i>.
func testNotebook(cells ...any) *notebook.Notebook {
	nb := &notebook.Notebook{URI: "test.ipynb"}
	for i := 0; i+1 < len(cells); i += 2 {
		nb.Cells = append(nb.Cells, &notebook.Cell{
			ID: "cell-" + string(rune('0'+len(nb.Cells))), Kind: notebook.Code, Language: "python",
			ExecutionOrder: cells[i].(int), Text: cells[i+1].(string),
		})
	}
	return nb
}

func TestFlow(t *testing.T) {
	nb := testNotebook(
		1, "import pandas as pd",
		2, "df = pd.read_csv('a.csv')",
		5, "df = df.dropna()",
		0, "model = fit(df)",
		3, "X = df.values",
		4, "y = X.sum()",
		0, "df = 3",
	)
	res, err := NewAnalyzer().Analyze(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fl := res.Flow
	if got, want := fl.History(), []string{"cell-0", "cell-1", "cell-4", "cell-5", "cell-2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("History = %v, want %v", got, want)
	}
	var sites []string
	for _, s := range fl.Definitions("df") {
		sites = append(sites, s.CellID)
	}
	if want := []string{"cell-1", "cell-2", "cell-6"}; !reflect.DeepEqual(sites, want) {
		t.Errorf("Definitions(df) = %v, want %v", sites, want)
	}
	last, ok := fl.LastDefinition("df")
	if !ok || last.CellID != "cell-2" || last.ExecutionOrder != 5 || last.Index != 2 || last.Kind != DefAssign {
		t.Errorf("LastDefinition(df) = %+v, %v", last, ok)
	}
	if _, ok := fl.LastDefinition("model"); ok {
		t.Error("LastDefinition(model): a not-run cell's binding is not in the kernel")
	}
	deps := map[string][]string{
		"cell-3": {"cell-0", "cell-1", "cell-2"}, // df from cell 2, which read cell 1's df
		"cell-5": {"cell-0", "cell-1", "cell-4"}, // X from cell 4 (run 3), which saw cell 1's df
		"cell-0": nil,
	}
	for id, want := range deps {
		if got := fl.Dependencies(id); !reflect.DeepEqual(got, want) {
			t.Errorf("Dependencies(%s) = %v, want %v", id, got, want)
		}
	}
	if n := fl.CellNumber("cell-3"); n != 4 {
		t.Errorf("CellNumber = %d", n)
	}
	fs := res.Findings["cell-3"]
	if len(fs) != 1 || fs[0].Code != finding.UndefinedName || !strings.Contains(fs[0].Message, "'fit'") {
		t.Errorf("cell-3 findings = %+v", fs)
	}
}

func TestAnalyzeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewAnalyzer().Analyze(ctx, testNotebook(0, "x = 1"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestTypoFix(t *testing.T) {
	res, err := NewAnalyzer().Analyze(context.Background(), testNotebook(1, "train_df = 1", 0, "print(trian_df)"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := res.Findings["cell-1"]
	if len(fs) != 1 || len(fs[0].Fixes) != 1 {
		t.Fatalf("findings = %+v", fs)
	}
	fix := fs[0].Fixes[0]
	if fix.Edits[0].NewText != "train_df" || fix.Edits[0].Range != fs[0].Range || !fix.Preferred {
		t.Errorf("fix = %+v", fix)
	}
}

func TestExecutionSummaryClearsFinding(t *testing.T) {
	// The done-criterion, at the analysis level: the NameError disappears once the
	// defining cell's execution summary arrives.
	nb := testNotebook(0, "print(tf_idf)", 0, "tf_idf = 1")
	a := NewAnalyzer()
	res, _ := a.Analyze(context.Background(), nb, Options{})
	if fs := res.Findings["cell-0"]; len(fs) != 1 || fs[0].Severity != finding.SeverityError {
		t.Fatalf("before: %+v", fs)
	}
	nb.Cells[1].ExecutionOrder = 1
	res, _ = a.Analyze(context.Background(), nb, Options{})
	if fs := res.Findings["cell-0"]; len(fs) != 0 {
		t.Errorf("after the run: %+v", fs)
	}
}

func TestIsBuiltin(t *testing.T) {
	for name, want := range map[string]bool{
		"print": true, "display": true, "_": true, "_12": true, "_i3": true, "__name__": true,
		"_x": false, "i5": false, "__file__": false, "df": false, "_i": true, "_ix": false,
	} {
		if got := IsBuiltin(name); got != want {
			t.Errorf("IsBuiltin(%q) = %v", name, got)
		}
	}
}

func TestTypoMemoFollowsExecutedCells(t *testing.T) {
	a := NewAnalyzer()
	nb := testNotebook(1, "alpha_value = 1", 0, "print(alpha_valeu)")
	fixes := func() int {
		res, err := a.Analyze(context.Background(), nb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fs := res.Findings["cell-1"]
		if len(fs) != 1 {
			t.Fatalf("findings = %+v", fs)
		}
		return len(fs[0].Fixes)
	}
	if n := fixes(); n != 1 {
		t.Errorf("first pass: %d fixes, want 1", n)
	}
	nb.Cells[0].Text = "beta_value = 1"
	if n := fixes(); n != 0 {
		t.Errorf("after the executed cell changed: %d fixes, want 0 (stale memo)", n)
	}
}
