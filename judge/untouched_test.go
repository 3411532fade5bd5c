package judge_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// untouchedScript reads one of testdata/untouched's scripts (shared with kernelclient's
// TestShadowParentUntouched).
func untouchedScript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "untouched", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckParentUntouched: judging a cell that crashes after reading every hooked object of
// testdata/untouched/setup.py (inspection, the shadow run, and fix verification of the
// KeyError, which must end with a verified fix so that it ran) never calls the user's
// __len__, properties, __getattr__, __repr__, __iter__, __array__ or __getitem__ in the
// user's kernel, never moves the file handle, and leaves the numpy, torch and random.Random
// generators the user holds as they were. check.py then runs in the kernel itself.
func TestCheckParentUntouched(t *testing.T) {
	k := kernel.Start(t, kernelclient.LaunchOptions{}, "numpy", "pandas", "torch")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	setup := untouchedScript(t, "setup.py")
	if r, err := k.Execute(ctx, setup); err != nil || r.Status != "ok" {
		t.Fatalf("setup: %v %+v", err, r)
	}
	target := "n = len(ds) + ds.prop\na = np.asarray(ds)\ns = repr(ds) + str(list(ds)) + ds[0]\n" +
		"x = gen.random() + rr.random() + torch.rand(1, generator=tgen).item()\nm = getattr(ds, 'nope', 0)\n" +
		"q = getattr(lazy, 'thing', 0)\ny = df['age']\n"
	nb := &notebook.Notebook{URI: "untouched.ipynb", Cells: []*notebook.Cell{
		{ID: "setup", Kind: notebook.Code, Language: "python", Text: setup, ExecutionOrder: 1},
		{ID: "target", Kind: notebook.Code, Language: "python", Text: target},
	}}
	opts := judge.DefaultOptions()
	opts.ShadowLongRuns = true
	opts.ShadowTimeout = 30 * time.Second
	j := &judge.Judge{Kernel: k, Options: opts}
	v, err := j.Cell(ctx, judge.NewSession(nil), nb, "target")
	if err != nil {
		t.Fatalf("judge: %v", err)
	}
	var b strings.Builder
	verified := false
	for _, f := range v.Findings {
		b.WriteString("\n  " + string(f.Source) + " " + f.Exception + " " + f.Message)
		for _, fx := range f.Fixes {
			b.WriteString("\n    fix " + strconv.Quote(fx.Title) + " verified=" + strconv.FormatBool(fx.Verified))
			verified = verified || fx.Verified
		}
	}
	if v.Verdict != judge.VerdictCrash || !verified {
		t.Errorf("verdict %s with no verified fix: verification did not run\n%s\nnotes %v", v.Verdict, b.String(), v.Notes)
	}
	t.Logf("verdict %s%s", v.Verdict, b.String())
	r, err := k.Execute(ctx, untouchedScript(t, "check.py"))
	if err != nil || r.Status != "ok" {
		t.Fatalf("check: %v %+v", err, r)
	}
	if r.Stdout != "" {
		t.Errorf("judging the cell changed the kernel: %s", r.Stdout)
	}
}
