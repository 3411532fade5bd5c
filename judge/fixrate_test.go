package judge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// TestFixRate measures the quick fixes on crash notebooks premortem was not written
// against: the corpus's crash twins (testdata/corpus) and the JunoBench development cases
// (testdata/junobench, built with replay.py). For every crash premortem predicts, the
// preferred fix is applied and the notebook replayed in a fresh kernel with the edited
// cells: the fix works when every cell, the target last, runs. It reports how many
// predicted crashes got a verified fix that works, and how many verified fixes fail (each a
// bug: "no fix offered as verified fails"). Slow (one check and one replay per notebook):
// run with PREMORTEM_FIXRATE=1 go test -run TestFixRate -timeout 90m ./judge/, optionally
// PREMORTEM_FIXRATE_REPORT=file.md and PREMORTEM_FIXRATE_CASES=id,id.
func TestFixRate(t *testing.T) {
	if os.Getenv("PREMORTEM_FIXRATE") == "" {
		t.Skip("fix-rate measurement: set PREMORTEM_FIXRATE=1 (runs about 100 kernels)")
	}
	python.Require(t, "ipykernel")
	type job struct {
		set, id, path string
		cell          int
	}
	var jobs []job
	only := map[string]bool{}
	for _, id := range strings.Split(os.Getenv("PREMORTEM_FIXRATE_CASES"), ",") {
		if id != "" {
			only[id] = true
		}
	}
	corpus := filepath.Join("..", "testdata", "corpus")
	var cases []struct {
		ID    string `json:"id"`
		Crash string `json:"crash_notebook"`
		Cell  int    `json:"cell"`
	}
	data, err := os.ReadFile(filepath.Join(corpus, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Crash != "" && (len(only) == 0 || only[c.ID]) {
			jobs = append(jobs, job{"corpus", c.ID, filepath.Join(corpus, c.Crash), c.Cell})
		}
	}
	root, _ := filepath.Abs(filepath.Join("..", "testdata", "junobench"))
	out := t.TempDir()
	build := exec.Command(python.Path(), filepath.Join(root, "replay.py"), "build", out)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("replay.py build: %v\n%s", err, b)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if e.IsDir() && (len(only) == 0 || only[e.Name()]) {
			jobs = append(jobs, job{"junobench", e.Name(), filepath.Join(out, e.Name(), "buggy.ipynb"), -1})
		}
	}

	results := make([]fixOutcome, len(jobs))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = measureFix(j.path, j.cell)
			results[i].set, results[i].id = j.set, j.id
			t.Logf("%s %s: %s", j.set, j.id, results[i])
		}()
	}
	wg.Wait()

	var md strings.Builder
	fmt.Fprintf(&md, "# premortem quick fixes: fix rate\n\n| set | notebooks | crashes predicted | verified fix offered | verified fix works | verified fix fails | unverified only | no fix |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	failing := 0
	for _, set := range []string{"corpus", "junobench", "all"} {
		var n, pred, offered, works, fails, unver, none int
		for _, r := range results {
			if set != "all" && r.set != set {
				continue
			}
			if r.err != "" {
				continue
			}
			n++
			if !r.predicted {
				continue
			}
			pred++
			switch {
			case r.verified && r.works:
				offered++
				works++
			case r.verified:
				offered++
				fails++
			case r.title != "":
				unver++
			default:
				none++
			}
		}
		if set == "all" {
			failing = fails
		}
		fmt.Fprintf(&md, "| %s | %d | %d | %d | %d (%s of predicted) | %d | %d | %d |\n", set, n, pred, offered, works, pctOf(works, pred), fails, unver, none)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].set+results[i].id < results[j].set+results[j].id })
	fmt.Fprintf(&md, "\n| set | case | outcome |\n| --- | --- | --- |\n")
	for _, r := range results {
		fmt.Fprintf(&md, "| %s | %s | %s |\n", r.set, r.id, strings.ReplaceAll(r.String(), "|", "\\|"))
	}
	t.Log("\n" + md.String())
	if p := os.Getenv("PREMORTEM_FIXRATE_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(md.String()), 0o644); err != nil {
			t.Errorf("write report: %v", err)
		}
	}
	for _, r := range results {
		if r.verified && !r.works && r.err == "" {
			t.Errorf("%s %s: verified fix %q fails on a real run: %s", r.set, r.id, r.title, r.failure)
		}
	}
	_ = failing
}

// fixOutcome is what happened to one crash notebook.
type fixOutcome struct {
	set, id   string
	predicted bool
	title     string
	verified  bool
	works     bool
	failure   string
	err       string
	elapsed   time.Duration
}

func (o fixOutcome) String() string {
	switch {
	case o.err != "":
		return "not measured: " + o.err
	case !o.predicted:
		return "no crash predicted"
	case o.title == "":
		return "crash predicted, no fix offered"
	case o.works:
		return fmt.Sprintf("fix %q (verified=%v) works", o.title, o.verified)
	}
	return fmt.Sprintf("fix %q (verified=%v) fails: %s", o.title, o.verified, o.failure)
}

func pctOf(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
}

// measureFix checks a notebook's target (cell < 0: every cell without an execution count,
// the last judged), applies the preferred fix of its first crash finding and replays the
// edited notebook in a fresh kernel.
func measureFix(path string, cell int) (o fixOutcome) {
	start := time.Now()
	defer func() {
		o.elapsed = time.Since(start)
		if r := recover(); r != nil {
			o.err = fmt.Sprintf("panic: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts := judge.DefaultOptions()
	opts.ShadowLongRuns = true
	opts.ShadowTimeout = 30 * time.Second
	co := judge.CheckOptions{Options: opts, ReplayTimeout: 2 * time.Minute}
	if cell >= 0 {
		co.Targets = []int{cell}
	}
	rep, err := judge.CheckNotebook(ctx, path, co)
	if err != nil {
		o.err = err.Error()
		return o
	}
	if rep.ReplayError != nil {
		o.err = "replay: " + rep.ReplayError.Error()
		return o
	}
	if len(rep.Cells) == 0 {
		o.err = "no target"
		return o
	}
	v := rep.Cells[len(rep.Cells)-1]
	if v.Verdict != judge.VerdictCrash {
		return o
	}
	o.predicted = true
	var fix *finding.Fix
	for i := range v.Findings {
		f := &v.Findings[i]
		if f.Exception == "" || len(f.Fixes) == 0 {
			continue
		}
		fix = &f.Fixes[0]
		for j := range f.Fixes {
			if f.Fixes[j].Preferred {
				fix = &f.Fixes[j]
				break
			}
		}
		break
	}
	if fix == nil {
		return o
	}
	o.title, o.verified = fix.Title, fix.Verified
	o.failure = replayEdited(ctx, path, rep.Source, v.CellID, *fix)
	o.works = o.failure == ""
	return o
}

// replayEdited runs the notebook's executed cells in execution order and then the target,
// with the fix applied, in a fresh kernel started in the notebook's folder; it returns ""
// when every cell ran, else what failed.
func replayEdited(ctx context.Context, path string, nb *notebook.Notebook, target string, fix finding.Fix) string {
	texts := map[string]string{}
	for _, c := range nb.Cells {
		texts[c.ID] = c.Text
	}
	after, err := repair.ApplyFix(texts, target, fix)
	if err != nil {
		return "does not apply: " + err.Error()
	}
	for id, tx := range after {
		texts[id] = tx
	}
	abs, _ := filepath.Abs(path)
	k, err := kernel.Launch(ctx, kernelclient.LaunchOptions{Cwd: filepath.Dir(abs), Env: append(os.Environ(), "MPLBACKEND=Agg")})
	if err != nil {
		return "launch: " + err.Error()
	}
	defer kernel.Stop(k)
	for _, c := range append(nb.History(), nb.Cell(target)) {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		res, err := k.Execute(cctx, texts[c.ID])
		cancel()
		if err != nil {
			return fmt.Sprintf("cell %d: %v", nb.Index(c.ID)+1, err)
		}
		if res.Status != "ok" && c.ID == target {
			return fmt.Sprintf("the fixed cell raised %s: %s", res.Ename, strings.SplitN(res.Evalue, "\n", 2)[0])
		}
		if res.Status != "ok" {
			return fmt.Sprintf("cell %d raised %s: %s", nb.Index(c.ID)+1, res.Ename, strings.SplitN(res.Evalue, "\n", 2)[0])
		}
	}
	return ""
}
