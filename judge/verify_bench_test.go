package judge_test

import (
	"context"
	"testing"
	"time"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// BenchmarkVerifyCandidates is the rate at which verification proves or rejects candidate
// fixes against a kernel holding pandas and a frame: a KeyError with six candidate
// renames, five of which fail, each run in its own forked child. It reports candidates/s
// (the budget per crash in docs/architecture.md is written from it).
func BenchmarkVerifyCandidates(b *testing.B) {
	setup := "import pandas as pd\nimport numpy as np\ndf = pd.DataFrame(np.random.rand(1000, 8), columns=list('abcdefgh'))\n"
	j := shadowBench(b, setup, 10*time.Second)
	nb := &notebook.Notebook{URI: "mem.ipynb", Cells: []*notebook.Cell{
		{ID: "a", Kind: notebook.Code, Text: setup, ExecutionOrder: 1},
		{ID: "b", Kind: notebook.Code, Text: "m = df['z'].mean()\nprint(m)"},
	}}
	key := finding.Range{Start: finding.Position{Character: 7}, End: finding.Position{Character: 10}}
	var fixes []finding.Fix
	for _, c := range []string{"'q'", "'r'", "'s'", "'t'", "'u'", "'h'"} {
		fixes = append(fixes, finding.Fix{Title: "Use column " + c, Edits: []finding.Edit{{Range: key, NewText: c}}})
	}
	f := finding.Finding{Cell: "b", Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-column", Exception: "KeyError",
		Message: "column 'z' is not in df", Range: key, Fixes: fixes}
	ctx := context.Background()
	ran := 0
	start := time.Now()
	for i := 0; i < b.N; i++ {
		out, err := j.VerifyFixes(ctx, judge.VerifyRequest{Notebook: nb, CellID: "b", Findings: []finding.Finding{f},
			OnOutcome: func(judge.Outcome, int, int, []finding.Finding) { ran++ }})
		if err != nil {
			b.Fatal(err)
		}
		if len(out[0].Fixes) == 0 || !out[0].Fixes[0].Verified {
			b.Fatalf("no verified fix after %d runs: %+v", ran, out[0].Fixes)
		}
	}
	b.ReportMetric(float64(ran)/time.Since(start).Seconds(), "candidates/s")
}
