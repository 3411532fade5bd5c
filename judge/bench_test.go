package judge_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

const benchSetup = `import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression
rng = np.random.default_rng(0)
df = pd.DataFrame({"Age": rng.uniform(1, 80, 891), "Fare": rng.uniform(5, 500, 891),
                   "Pclass": rng.integers(1, 4, 891), "Survived": rng.integers(0, 2, 891),
                   "Sex": rng.choice(["male", "female"], 891)})
X = df[["Age", "Fare", "Pclass"]].values
y = df["Survived"].values
model = LogisticRegression()
`

// BenchmarkRuntimeFindings measures what an edit costs before its runtime diagnostics can be
// published: re-analysing the edited cell, one inspector round trip to a live kernel for
// the names it reads, and the rules (DESIGN.md's budget: under 30 ms p50). It reports the
// median and 90th percentile besides the mean.
func BenchmarkRuntimeFindings(b *testing.B) {
	ctx := context.Background()
	k := kernel.Start(b, kernelclient.LaunchOptions{})
	if r, err := k.Execute(ctx, benchSetup); err != nil || r.Status != "ok" {
		b.Fatalf("setup: %v %+v", err, r)
	}
	nb := &notebook.Notebook{URI: "bench.ipynb", Cells: []*notebook.Cell{
		{ID: "setup", Kind: notebook.Code, Language: "python", Text: benchSetup, ExecutionOrder: 1},
		{ID: "target", Kind: notebook.Code, Language: "python"},
	}}
	j := &judge.Judge{Kernel: k, Options: judge.DefaultOptions()}
	sess := judge.NewSession(nil)
	// Warm up: the inspector is injected into the kernel on first use.
	nb.Cells[1].Text = `m = df["age"].mean()`
	if _, err := runtimeOnce(ctx, j, sess, nb); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Each iteration is a new edit of the cell, as typing makes.
		nb.Cells[1].Text = fmt.Sprintf("m = df[\"age\"].mean() + %d\npreds = model.predict(X[:, :%d])\nlayer = torch.nn.Linear(4, 1)\n", i, 1+i%3)
		t0 := time.Now()
		n, err := runtimeOnce(ctx, j, sess, nb)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if n == 0 {
			b.Fatal("no runtime finding for a cell that will crash")
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "ms-p50")
	b.ReportMetric(ms(lat[len(lat)*9/10]), "ms-p90")
}

func runtimeOnce(ctx context.Context, j *judge.Judge, sess *judge.Session, nb *notebook.Notebook) (int, error) {
	res, err := sess.Analyze(ctx, nb)
	if err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rt, err := j.RuntimeFindings(cctx, sess, nb, res, "target")
	if err != nil {
		return 0, err
	}
	return len(rt.Findings), nil
}
