package judge_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// Fix scenarios (testdata/scenarios/fix/*.txtar) are check scenarios (see TestScenarios)
// about repairs. Expectations: verdict, exception (of the first crash finding), fix (the
// preferred fix's exact title, which must be verified), fix-text (its first edit's new
// text, without the line breaks and indentation around it), fix-cell (the 0-based notebook index of the cell its first edit targets; default
// the target), nofix (no fix at all may be offered for the crash). A verified fix is then
// applied and the notebook replayed in a fresh kernel, edited cells in place: the target
// must run, since a verified fix that fails on the user's real run is a bug.
func TestFixScenarios(t *testing.T) {
	python.Require(t, "ipykernel")
	testkitscenario.Run(t, testkitscenario.Dir(t, "scenarios", "fix"), 1, func(t *testing.T, file *testkitscenario.File) {
		t.Parallel()
		sc := loadScenario(t, file)
		// A NAME_nofix twin is the family's case where no edit is safe: the name promises it.
		if strings.HasSuffix(file.Name, testkitscenario.NoFixSuffix) && sc.want["nofix"] != "true" {
			t.Errorf("%s is named %s but does not say nofix: true", file.Path, testkitscenario.NoFixSuffix)
		}
		runFixScenario(t, sc)
	})
}

func runFixScenario(t *testing.T, sc *scenario) {
	dir := t.TempDir()
	path, target := sc.writeNotebook(t, dir)
	opts := judge.DefaultOptions()
	opts.ShadowLongRuns = true
	opts.ShadowTimeout = 30 * time.Second
	// The scenarios ask whether the search finds the fix, not how fast: they run in
	// parallel on a loaded machine, where the default wall-clock budget would cut the
	// search short after a handful of candidates and make the answer depend on the load.
	opts.RepairBudget = 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := judge.CheckNotebook(ctx, path, judge.CheckOptions{Options: opts, Targets: []int{target}})
	if err != nil {
		t.Fatalf("CheckNotebook: %v", err)
	}
	v := rep.Cells[0]
	var f *finding.Finding
	for i := range v.Findings {
		if v.Findings[i].Exception != "" && v.Findings[i].Severity == finding.SeverityError {
			f = &v.Findings[i]
			break
		}
	}
	dump := func() string {
		var b strings.Builder
		b.WriteString("verdict " + v.Verdict)
		for _, g := range v.Findings {
			b.WriteString("\n  " + string(g.Source) + " " + g.Exception + " " + g.Message)
			for _, fx := range g.Fixes {
				b.WriteString("\n    fix " + strconv.Quote(fx.Title) + " verified=" + strconv.FormatBool(fx.Verified))
				for _, e := range fx.Edits {
					b.WriteString(" [" + e.Cell + " " + strconv.Quote(e.NewText) + "]")
				}
			}
		}
		for _, n := range v.Notes {
			b.WriteString("\n  note: " + n)
		}
		return b.String()
	}
	if want := sc.want["verdict"]; v.Verdict != want {
		t.Fatalf("verdict %s, want %s\n%s", v.Verdict, want, dump())
	}
	if f == nil {
		t.Fatalf("no crash finding\n%s", dump())
	}
	if want := sc.want["exception"]; want != "" && f.Exception != want && !strings.HasSuffix(f.Exception, "."+want) {
		t.Errorf("exception %s, want %s\n%s", f.Exception, want, dump())
	}
	if want := sc.want["message-contains"]; want != "" && !strings.Contains(f.Message, want) {
		t.Errorf("message %q does not contain %q", f.Message, want)
	}
	if want := sc.want["related"]; want != "" {
		// "CELL:LINE": the 0-based notebook index and 1-based line the finding links.
		got := ""
		for _, r := range f.Related {
			got += fmt.Sprintf("%d:%d ", rep.Source.Index(r.Cell), r.Range.Start.Line+1)
		}
		if strings.TrimSpace(got) != want {
			t.Errorf("related %q, want %q\n%s", strings.TrimSpace(got), want, dump())
		}
	}
	if sc.want["nofix"] == "true" {
		if len(f.Fixes) > 0 {
			t.Errorf("fixes offered where none is safe\n%s", dump())
		}
		return
	}
	var fix *finding.Fix
	for i := range f.Fixes {
		if f.Fixes[i].Preferred {
			fix = &f.Fixes[i]
			break
		}
	}
	if fix == nil {
		t.Fatalf("no preferred fix\n%s", dump())
	}
	for _, fx := range f.Fixes {
		if !fx.Verified && strings.Contains(fx.Title, "(verified") {
			t.Errorf("unverified fix titled verified: %q", fx.Title)
		}
	}
	if !fix.Verified {
		t.Fatalf("preferred fix %q not verified\n%s", fix.Title, dump())
	}
	if want := sc.want["fix"]; want != "" && fix.Title != want {
		t.Errorf("fix %q, want %q\n%s", fix.Title, want, dump())
	}
	if want := sc.want["fix-text"]; want != "" && strings.TrimSpace(fix.Edits[0].NewText) != want {
		t.Errorf("fix text %q, want %q\n%s", fix.Edits[0].NewText, want, dump())
	}
	nb := rep.Source
	targetID := nb.Cells[target].ID
	wantCell := target
	if s := sc.want["fix-cell"]; s != "" {
		wantCell, _ = strconv.Atoi(s)
	}
	if got := editCell(nb, targetID, fix.Edits[0]); got != wantCell {
		t.Errorf("the fix edits cell %d, want %d", got, wantCell)
	}
	replayFixed(t, ctx, dir, nb, targetID, *fix)
}

func editCell(nb *notebook.Notebook, target string, e finding.Edit) int {
	if e.Cell == "" {
		return nb.Index(target)
	}
	return nb.Index(e.Cell)
}

// replayFixed applies fix to the notebook's texts and runs the executed cells (in execution
// order) and then the target in a fresh kernel: every cell must run.
func replayFixed(t *testing.T, ctx context.Context, dir string, nb *notebook.Notebook, target string, fix finding.Fix) {
	t.Helper()
	texts := map[string]string{}
	for _, c := range nb.Cells {
		texts[c.ID] = c.Text
	}
	after, err := repair.ApplyFix(texts, target, fix)
	if err != nil {
		t.Fatalf("apply %q: %v", fix.Title, err)
	}
	for id, tx := range after {
		texts[id] = tx
	}
	k, err := kernel.Launch(ctx, kernelclient.LaunchOptions{Cwd: dir, Env: append(os.Environ(), "MPLBACKEND=Agg")})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	defer kernel.Stop(k)
	run := append(nb.History(), nb.Cell(target))
	for _, c := range run {
		res, err := k.Execute(ctx, texts[c.ID])
		if err != nil {
			t.Fatalf("run cell %d: %v", nb.Index(c.ID)+1, err)
		}
		if res.Status != "ok" {
			t.Fatalf("verified fix %q fails on a real run: cell %d raised %s: %s\n%s", fix.Title, nb.Index(c.ID)+1, res.Ename, res.Evalue, texts[c.ID])
		}
	}
}
