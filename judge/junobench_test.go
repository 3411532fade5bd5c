package judge_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// The JunoBench accuracy test builds the development cases that have data generators into
// notebooks (testdata/junobench/replay.py build), runs CheckNotebook on each buggy target and
// its fixed twin, once per layer setting, and reports detection accuracy, exception and
// exception+line match and false alarms on the fixed twins. It asserts zero tool failures
// and floors well below the measured numbers, so a regression fails and noise does not.
//
// Environment:
//
//	PREMORTEM_JUNOBENCH_REPORT=path.md   also write the Markdown summary there
//	PREMORTEM_JUNOBENCH_CASES=id,id      only these cases
//	PREMORTEM_JUNOBENCH_MODES=shadow,no-shadow,always   layer settings (default shadow,no-shadow)

// jbMode is one layer setting measured.
type jbMode struct {
	name string
	opts judge.Options
	// floors: minimum detection accuracy and exception match (fractions of the evaluable
	// instances); maxFalseAlarms on fixed twins.
	minAccuracy, minExceptionMatch float64
	maxFalseAlarms                 int
}

func jbModes() []jbMode {
	shadow := judge.DefaultOptions()
	shadow.ShadowTimeout = 30 * time.Second
	shadow.ShadowLongRuns = true
	always := shadow
	always.Shadow = judge.ShadowAlways
	noShadow := judge.DefaultOptions()
	noShadow.Shadow = judge.ShadowOff
	all := []jbMode{
		// Measured on the 21 evaluable development cases (02:30 UTC): shadow 95.2% accuracy,
		// 90.5% exception match, no false alarm; no-shadow 81.0%, 66.7%, 1; always 100%,
		// 100%, none. The floors leave room for a slow machine turning a run into a timeout.
		{name: "shadow", opts: shadow, minAccuracy: 0.8, minExceptionMatch: 0.7, maxFalseAlarms: 1},
		{name: "no-shadow", opts: noShadow, minAccuracy: 0.65, minExceptionMatch: 0.45, maxFalseAlarms: 3},
		{name: "always", opts: always, minAccuracy: 0.8, minExceptionMatch: 0.7, maxFalseAlarms: 1},
	}
	want := map[string]bool{"shadow": true, "no-shadow": true}
	if env := os.Getenv("PREMORTEM_JUNOBENCH_MODES"); env != "" {
		want = map[string]bool{}
		for _, m := range strings.Split(env, ",") {
			want[strings.TrimSpace(m)] = true
		}
	}
	var out []jbMode
	for _, m := range all {
		if want[m.name] {
			out = append(out, m)
		}
	}
	return out
}

// jbTruth is the ground truth of one case (desc.csv).
type jbTruth struct {
	ID, Group, Ename, CrashLine string
}

// jbOutcome is what CheckNotebook said about one target.
type jbOutcome struct {
	Case, Version, Mode string
	Verdict             string
	Exception, Source   string
	Line                int // 1-based line of the top finding, 0 when none
	WantLine            int // 1-based line of the ground-truth crash line in the target, 0 when not in it
	ReplayError         string
	Err                 string
	Notes               []string
	Elapsed             time.Duration
}

func TestJunoBench(t *testing.T) {
	if testing.Short() {
		t.Skip("JunoBench accuracy runs real kernels on ~40 notebooks; skipped with -short")
	}
	python.Require(t, "ipykernel")
	root, err := filepath.Abs(filepath.Join("..", "testdata", "junobench"))
	if err != nil {
		t.Fatal(err)
	}
	truth := readTruth(t, filepath.Join(root, "desc.csv"))

	out := t.TempDir()
	args := []string{filepath.Join(root, "replay.py"), "build", out}
	if env := os.Getenv("PREMORTEM_JUNOBENCH_CASES"); env != "" {
		args = append(args, strings.Split(env, ",")...)
	}
	build := exec.Command(python.Path(), args...)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("replay.py build: %v\n%s", err, b)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		t.Fatal("replay.py build made no case")
	}

	modes := jbModes()
	type job struct {
		id, version string
		mode        jbMode
	}
	jobs := make(chan job)
	results := make(chan jbOutcome)
	var wg sync.WaitGroup
	// Two kernels at a time: the machine is shared, and each replay is mostly one core.
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- runJunoCase(filepath.Join(out, j.id, j.version+".ipynb"), j.id, j.version, j.mode, truth[j.id])
			}
		}()
	}
	go func() {
		for _, m := range modes {
			for _, id := range ids {
				for _, v := range []string{"buggy", "fixed"} {
					jobs <- job{id, v, m}
				}
			}
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	byMode := map[string][]jbOutcome{}
	for r := range results {
		byMode[r.Mode] = append(byMode[r.Mode], r)
		if r.Err != "" {
			t.Errorf("%s %s (%s): premortem failed: %s", r.Case, r.Version, r.Mode, r.Err)
		}
	}

	var md strings.Builder
	fmt.Fprintf(&md, "# premortem check on JunoBench (development cases with data generators)\n\n")
	fmt.Fprintf(&md, "%d cases built by `replay.py build`, each a buggy target and its fixed twin; ", len(ids))
	fmt.Fprintf(&md, "a case whose replay fails (a library missing here) is left out of the numbers.\n\n")
	for _, m := range modes {
		rs := byMode[m.name]
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].Case != rs[j].Case {
				return rs[i].Case < rs[j].Case
			}
			return rs[i].Version < rs[j].Version
		})
		s := summarize(rs, truth)
		t.Logf("%s: %s", m.name, s.line())
		s.markdown(&md, m.name, rs, truth)
		if s.evaluable == 0 {
			t.Errorf("%s: no evaluable case", m.name)
			continue
		}
		if acc := s.accuracy(); acc < m.minAccuracy {
			t.Errorf("%s: detection accuracy %.1f%% is below the floor %.0f%%", m.name, 100*acc, 100*m.minAccuracy)
		}
		if em := float64(s.excMatch) / float64(s.evaluable); em < m.minExceptionMatch {
			t.Errorf("%s: exception match %.1f%% is below the floor %.0f%%", m.name, 100*em, 100*m.minExceptionMatch)
		}
		if s.falseAlarms > m.maxFalseAlarms {
			t.Errorf("%s: %d false alarms on fixed twins, at most %d allowed", m.name, s.falseAlarms, m.maxFalseAlarms)
		}
	}
	t.Log("\n" + md.String())
	if p := os.Getenv("PREMORTEM_JUNOBENCH_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(md.String()), 0o644); err != nil {
			t.Errorf("write report: %v", err)
		}
	}
}

// runJunoCase checks one notebook; a panic or error of premortem is recorded in Err.
func runJunoCase(path, id, version string, m jbMode, tr jbTruth) (o jbOutcome) {
	o = jbOutcome{Case: id, Version: version, Mode: m.name}
	start := time.Now()
	defer func() {
		o.Elapsed = time.Since(start)
		if r := recover(); r != nil {
			o.Err = fmt.Sprintf("panic: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := judge.CheckNotebook(ctx, path, judge.CheckOptions{Options: m.opts, ReplayTimeout: 2 * time.Minute})
	if err != nil {
		o.Err = err.Error()
		return o
	}
	if rep.ReplayError != nil {
		o.ReplayError = rep.ReplayError.Error()
	}
	if len(rep.Cells) == 0 {
		o.Err = "no target cell judged"
		return o
	}
	v := rep.Cells[len(rep.Cells)-1]
	o.Verdict, o.Notes = v.Verdict, v.Notes
	if v.Verdict == judge.VerdictCrash && len(v.Findings) > 0 {
		f := v.Findings[0]
		o.Exception, o.Source, o.Line = f.Exception, string(f.Source), f.Range.Start.Line+1
	}
	if nb := rep.Source; nb != nil && v.Index < len(nb.Cells) {
		o.WantLine = lineOf(nb.Cells[v.Index], tr.CrashLine)
	}
	return o
}

// lineOf finds the 1-based line of the target that holds the ground-truth crash line.
func lineOf(c *notebook.Cell, crash string) int {
	crash = strings.TrimSpace(crash)
	if crash == "" {
		return 0
	}
	for i, l := range strings.Split(c.Text, "\n") {
		if strings.Contains(l, crash) {
			return i + 1
		}
	}
	return 0
}

func readTruth(t *testing.T, path string) map[string]jbTruth {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ground truth: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("ground truth %s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"id", "group", "ename", "crash_line"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("ground truth %s: no column %q", path, h)
		}
	}
	out := map[string]jbTruth{}
	for _, r := range rows[1:] {
		out[r[col["id"]]] = jbTruth{ID: r[col["id"]], Group: r[col["group"]], Ename: r[col["ename"]], CrashLine: r[col["crash_line"]]}
	}
	return out
}

// sameException compares a reported exception with desc.csv's lower-case ename.
func sameException(got, want string) bool {
	if i := strings.LastIndexByte(got, '.'); i >= 0 {
		got = got[i+1:]
	}
	return got != "" && strings.EqualFold(got, want)
}

type jbSummary struct {
	evaluable, excluded                    int
	detected, excMatch, lineMatch, located int
	falseAlarms, unknownBuggy, unknownFix  int
	bySource                               map[string]int
}

func summarize(rs []jbOutcome, truth map[string]jbTruth) jbSummary {
	s := jbSummary{bySource: map[string]int{}}
	pair := map[string]map[string]jbOutcome{}
	for _, r := range rs {
		if pair[r.Case] == nil {
			pair[r.Case] = map[string]jbOutcome{}
		}
		pair[r.Case][r.Version] = r
	}
	for id, p := range pair {
		b, f := p["buggy"], p["fixed"]
		if b.ReplayError != "" || f.ReplayError != "" || b.Err != "" || f.Err != "" {
			s.excluded++
			continue
		}
		s.evaluable++
		if b.Verdict == judge.VerdictCrash {
			s.detected++
			s.bySource[b.Source]++
			if sameException(b.Exception, truth[id].Ename) {
				s.excMatch++
				if b.WantLine > 0 && b.Line == b.WantLine {
					s.lineMatch++
				}
			}
		}
		if b.WantLine > 0 {
			s.located++
		}
		if b.Verdict == judge.VerdictUnknown {
			s.unknownBuggy++
		}
		switch f.Verdict {
		case judge.VerdictCrash:
			s.falseAlarms++
		case judge.VerdictUnknown:
			s.unknownFix++
		}
	}
	return s
}

// accuracy is CRANE-LLM's detection accuracy: buggy targets predicted to crash plus fixed
// twins predicted not to (unknown counts as "no crash predicted", as exit code 0 does),
// over all evaluable instances.
func (s jbSummary) accuracy() float64 {
	if s.evaluable == 0 {
		return 0
	}
	return float64(s.detected+s.evaluable-s.falseAlarms) / float64(2*s.evaluable)
}

func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", n, d, 100*float64(n)/float64(d))
}

func (s jbSummary) line() string {
	return fmt.Sprintf("detection accuracy %.1f%% over %d instances; buggy detected %s; exception match %s; exception+line %s (of %d with the crash line in the target); false alarms on fixed %s; unknown buggy/fixed %d/%d; %d cases excluded (replay failed)",
		100*s.accuracy(), 2*s.evaluable, pct(s.detected, s.evaluable), pct(s.excMatch, s.evaluable), pct(s.lineMatch, s.located), s.located,
		pct(s.falseAlarms, s.evaluable), s.unknownBuggy, s.unknownFix, s.excluded)
}

func (s jbSummary) markdown(md *strings.Builder, mode string, rs []jbOutcome, truth map[string]jbTruth) {
	fmt.Fprintf(md, "## %s\n\n", mode)
	fmt.Fprintf(md, "| metric | value |\n| --- | --- |\n")
	fmt.Fprintf(md, "| detection accuracy (buggy crash + fixed no crash) | %.1f%% of %d instances |\n", 100*s.accuracy(), 2*s.evaluable)
	fmt.Fprintf(md, "| buggy targets detected | %s |\n", pct(s.detected, s.evaluable))
	fmt.Fprintf(md, "| exception match | %s |\n", pct(s.excMatch, s.evaluable))
	fmt.Fprintf(md, "| exception + line match | %s (cases whose crash line is in the target) |\n", pct(s.lineMatch, s.located))
	fmt.Fprintf(md, "| false alarms on fixed twins | %s |\n", pct(s.falseAlarms, s.evaluable))
	fmt.Fprintf(md, "| unknown verdicts (buggy / fixed) | %d / %d |\n", s.unknownBuggy, s.unknownFix)
	fmt.Fprintf(md, "| cases excluded (replay failed) | %d |\n", s.excluded)
	var srcs []string
	for k, v := range s.bySource {
		srcs = append(srcs, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(srcs)
	fmt.Fprintf(md, "| detections by top source | %s |\n\n", strings.Join(srcs, ", "))
	fmt.Fprintf(md, "| case | version | verdict | exception | line (want) | source | truth | note |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		note := r.Err
		if note == "" {
			note = r.ReplayError
		}
		if note == "" && r.Verdict != judge.VerdictCrash && len(r.Notes) > 0 {
			note = r.Notes[0]
		}
		note = strings.ReplaceAll(note, "|", "\\|")
		if len(note) > 140 {
			note = note[:140] + "…"
		}
		fmt.Fprintf(md, "| %s | %s | %s | %s | %d (%d) | %s | %s | %s |\n", r.Case, r.Version, r.Verdict, r.Exception, r.Line, r.WantLine, r.Source, truth[r.Case].Ename, note)
	}
	md.WriteString("\n")
}
