package judge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// TestVerifyRefusesRetyping: a candidate that makes the cell run by changing what a name
// holds (the model another estimator, a frame an object of another kind) runs clean in the
// shadow and is still refused, never offered; a candidate that keeps the kinds is verified.
// The candidates are the finding's own (as a rule's or the LLM's would be), so the test
// pins the guard, whoever proposes.
func TestVerifyRefusesRetyping(t *testing.T) {
	python.Require(t, "ipykernel", "sklearn", "pandas")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k := kernel.Start(t, kernelclient.LaunchOptions{})
	setup := "import numpy as np\nimport pandas as pd\nfrom sklearn.svm import SVC\nfrom sklearn.ensemble import RandomForestClassifier\n" +
		"X = np.random.RandomState(0).rand(40, 3)\ny = (X[:, 0] > 0.5).astype(int)\nmodel = SVC().fit(X, y)\n" +
		"df = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})"
	if r, err := k.Execute(ctx, setup); err != nil || r.Status != "ok" {
		t.Fatalf("setup: %v %+v", err, r)
	}
	opts := judge.DefaultOptions()
	opts.ShadowTimeout = 20 * time.Second
	j := &judge.Judge{Kernel: k, Options: opts}
	line := func(l, c0, c1 int) finding.Range {
		return finding.Range{Start: finding.Position{Line: l, Character: c0}, End: finding.Position{Line: l, Character: c1}}
	}
	tests := []struct {
		name, target string
		crashLine    int
		fixes        []finding.Fix
		want         string // the title of the one fix offered, verified
	}{{
		name:      "estimator swapped in the history cell",
		target:    "imp = model.feature_importances_\nprint(imp)",
		crashLine: 0,
		fixes: []finding.Fix{
			{Title: "Fit a forest instead", Edits: []finding.Edit{{Cell: "a", Range: line(6, 8, 13), NewText: "RandomForestClassifier(n_estimators=5)"}}},
			{Title: "Use the support vectors' count", Edits: []finding.Edit{{Range: line(0, 12, 32), NewText: "n_support_"}}},
		},
		want: "Use the support vectors' count",
	}, {
		name:      "frame made an object of another kind above the crash line",
		target:    "sub = df[['a', 'b']]\nprint(sub.total())",
		crashLine: 1,
		fixes: []finding.Fix{
			{Title: "Make sub an object with total", Edits: []finding.Edit{{Range: line(0, 6, 20), NewText: "type('T', (), {'total': lambda self: 0})()"}}},
			{Title: "Use sum", Edits: []finding.Edit{{Range: line(1, 10, 15), NewText: "sum"}}},
		},
		want: "Use sum",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := &notebook.Notebook{URI: "mem.ipynb", Cells: []*notebook.Cell{
				{ID: "a", Kind: notebook.Code, Text: setup, ExecutionOrder: 1},
				{ID: "b", Kind: notebook.Code, Text: tt.target},
			}}
			sh, err := j.ShadowRun(ctx, tt.target, analysis.ParseCell(tt.target))
			if err != nil || sh == nil || sh.Status != facts.ShadowError {
				t.Fatalf("the target's shadow run: %v %+v", err, sh)
			}
			f := finding.Finding{Cell: "b", Source: finding.SourceShadow, Severity: finding.SeverityError, Code: "attribute-error",
				Exception: "AttributeError", Message: sh.Message, Range: line(tt.crashLine, 0, 5), Fixes: tt.fixes}
			out, err := j.VerifyFixes(ctx, judge.VerifyRequest{Notebook: nb, CellID: "b", Findings: []finding.Finding{f}, Shadow: sh})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fx := range out[0].Fixes {
				got = append(got, fx.Title)
			}
			if len(out[0].Fixes) != 1 || !out[0].Fixes[0].Verified || !strings.HasPrefix(out[0].Fixes[0].Title, tt.want+" (verified") {
				t.Errorf("fixes offered %q, want only %q, verified", got, tt.want)
			}
		})
	}
}
