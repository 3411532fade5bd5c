package judge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/python"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
)

// Scenario files (testdata/scenarios/check/*.txtar) describe a small notebook and what
// `premortem check` must say about its target cell, with a real kernel:
//
//	-- ran.py --      a cell that ran (execution counts follow file order; repeatable)
//	-- target.py --   the cell judged (no execution count)
//	-- unrun.py --    a cell that has not run and is not judged (repeatable)
//	-- other files -- written beside the notebook (data the cells read)
//
// The archive comment holds "key: value" expectations about the target's verdict and its
// first finding: verdict, source, code, exception, line (1-based), mark (the text the
// finding's range covers), fix (the preferred fix's title), fix-text (its first edit's new
// text), note (a substring of some note), absent (a file that must not exist afterwards).
// "shadow-timeout: 10s" sets the shadow time limit (default the editor's 3 s).
// "modes: shadow no-shadow" lists the layer settings to run (default: shadow; also always,
// static, meta: safe mode with --shadow-tensors meta, and fallback / fallback-always: safe / always mode with the fallback sandbox
// forced, where writes are refused instead of contained); a key
// prefixed with a mode ("no-shadow.source: rules") applies to that mode only.
// "shadow-timeout: 3s" and "shadow-full-timeout: 10s" set the shadow budget and the
// background full run's limit (defaults: judge.DefaultOptions); "reason" is a substring of
// an unknown verdict's reason, "progress" a substring of the check's progress output (the
// provisional answer printed while the full run goes on). "line-endings: crlf" or "cr"
// writes the target's lines ending in "\r\n" or a lone "\r" (Python numbers both as
// lines; the expected line and mark are the same).
func TestScenarios(t *testing.T) {
	python.Require(t, "ipykernel")
	testkitscenario.Run(t, testkitscenario.Dir(t, "scenarios", "check"), 1, func(t *testing.T, file *testkitscenario.File) {
		t.Parallel()
		sc := loadScenario(t, file)
		for _, mode := range sc.modes {
			t.Run(mode, func(t *testing.T) { sc.run(t, mode) })
		}
	})
}

type scenario struct {
	file  *testkitscenario.File
	modes []string
	want  map[string]string
}

// loadScenario reads a check or fix scenario's expectations from its header.
func loadScenario(t *testing.T, file *testkitscenario.File) *scenario {
	t.Helper()
	sc := &scenario{file: file, modes: []string{"shadow"}, want: map[string]string{}}
	for k, v := range file.Header {
		if k == "modes" {
			sc.modes = strings.Fields(v)
			continue
		}
		sc.want[k] = v
	}
	if sc.want["verdict"] == "" {
		t.Fatalf("%s: no 'verdict:' expectation", file.Path)
	}
	return sc
}

// expect returns the expectation for key in mode ("" when none).
func (sc *scenario) expect(mode, key string) string {
	if v, ok := sc.want[mode+"."+key]; ok {
		return v
	}
	return sc.want[key]
}

// writeNotebook writes the scenario's notebook and data files into dir; it returns the
// notebook path and the target's cell index.
func (sc *scenario) writeNotebook(t *testing.T, dir string) (string, int) {
	t.Helper()
	nb, target := sc.file.Notebook(t)
	switch sc.want["line-endings"] {
	case "crlf":
		nb.Cells[target].Text = strings.ReplaceAll(nb.Cells[target].Text, "\n", "\r\n")
	case "cr":
		nb.Cells[target].Text = strings.ReplaceAll(nb.Cells[target].Text, "\n", "\r")
	}
	sc.file.WriteData(t, dir)
	return testkitscenario.WriteNotebook(t, dir, nb), target
}

func (sc *scenario) run(t *testing.T, mode string) {
	dir := t.TempDir()
	path, target := sc.writeNotebook(t, dir)
	opts := judge.DefaultOptions()
	opts.ShadowLongRuns = true
	for key, dst := range map[string]*time.Duration{"shadow-timeout": &opts.ShadowTimeout, "shadow-full-timeout": &opts.ShadowFullTimeout} {
		if v := sc.expect(mode, key); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			*dst = d
		}
	}
	var progress strings.Builder
	switch mode {
	case "shadow":
	case "always":
		opts.Shadow = judge.ShadowAlways
	case "no-shadow":
		opts.Shadow = judge.ShadowOff
	case "fallback": // safe mode with the fallback sandbox forced (refusals, safe-mode skips)
		opts.ShadowSandbox = kernelclient.SandboxForceFallback
	case "fallback-always":
		opts.Shadow = judge.ShadowAlways
		opts.ShadowSandbox = kernelclient.SandboxForceFallback
	case "meta": // every tensor shape-only in the shadow child (--shadow-tensors meta)
		opts.ShadowTensors = facts.TensorsMeta
	case "static":
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := judge.CheckNotebook(ctx, path, judge.CheckOptions{Options: opts, Targets: []int{target}, NoKernel: mode == "static", Progress: &progress})
	if err != nil {
		t.Fatalf("CheckNotebook: %v", err)
	}
	if len(rep.Cells) != 1 {
		t.Fatalf("got %d verdicts, want 1", len(rep.Cells))
	}
	v := rep.Cells[0]
	text := rep.Source.Cells[target].Text
	dump := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "verdict %s %.2f %s", v.Verdict, v.Confidence, v.Reason)
		if rep.ReplayError != nil {
			fmt.Fprintf(&b, "; %s", rep.ReplayError)
		}
		for _, f := range v.Findings {
			fmt.Fprintf(&b, "\n  %s %s %s %s %d:%d-%d:%d %q %s", f.Source, f.Severity, f.Code, f.Exception,
				f.Range.Start.Line+1, f.Range.Start.Character+1, f.Range.End.Line+1, f.Range.End.Character+1, mark(text, f.Range), f.Message)
			for _, fx := range f.Fixes {
				fmt.Fprintf(&b, "\n    fix %q", fx.Title)
			}
		}
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "\n  note: %s", n)
		}
		return b.String()
	}
	if want := sc.expect(mode, "verdict"); v.Verdict != want {
		t.Fatalf("verdict %s, want %s\n%s", v.Verdict, want, dump())
	}
	if v.Verdict != judge.VerdictCrash {
		for _, f := range v.Findings {
			if f.Severity == finding.SeverityError {
				t.Errorf("verdict %s with an error finding\n%s", v.Verdict, dump())
			}
		}
	}
	if n := sc.expect(mode, "note"); n != "" && !strings.Contains(strings.Join(v.Notes, "\n"), n) {
		t.Errorf("no note contains %q\n%s", n, dump())
	}
	if r := sc.expect(mode, "reason"); r != "" && !strings.Contains(v.Reason, r) {
		t.Errorf("reason %q lacks %q\n%s", v.Reason, r, dump())
	}
	if v.Verdict == judge.VerdictUnknown && v.Reason == "" {
		t.Errorf("unknown verdict without a reason\n%s", dump())
	}
	if p := sc.expect(mode, "progress"); p != "" && !strings.Contains(progress.String(), p) {
		t.Errorf("progress lacks %q:\n%s", p, progress.String())
	}
	if p := sc.expect(mode, "absent"); p != "" {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s exists: premortem let a cell write it", p)
		}
	}
	keys := []string{"source", "code", "exception", "line", "mark", "fix", "fix-text"}
	any := false
	for _, k := range keys {
		if sc.expect(mode, k) != "" {
			any = true
		}
	}
	if !any {
		return
	}
	if len(v.Findings) == 0 {
		t.Fatalf("no finding\n%s", dump())
	}
	f := v.Findings[0]
	got := map[string]string{
		"source": string(f.Source), "code": f.Code, "exception": f.Exception,
		"line": fmt.Sprint(f.Range.Start.Line + 1), "mark": mark(text, f.Range),
	}
	if len(f.Fixes) > 0 {
		fx := f.Fixes[0]
		for _, c := range f.Fixes {
			if c.Preferred {
				fx = c
				break
			}
		}
		got["fix"] = fx.Title
		if len(fx.Edits) > 0 {
			got["fix-text"] = fx.Edits[0].NewText
		}
	}
	for _, k := range keys {
		if want := sc.expect(mode, k); want != "" && got[k] != want {
			t.Errorf("first finding's %s = %q, want %q\n%s", k, got[k], want, dump())
		}
	}
}

// mark returns the cell text a range covers (single-line ranges; UTF-16 columns).
func mark(text string, r finding.Range) string {
	lines := analysis.SplitLines(text)
	if r.Start.Line < 0 || r.Start.Line >= len(lines) {
		return ""
	}
	end := r.End.Character
	if r.End.Line != r.Start.Line {
		end = 1 << 30
	}
	var b strings.Builder
	col := 0
	for _, ch := range lines[r.Start.Line] {
		if col >= r.Start.Character && col < end {
			b.WriteRune(ch)
		}
		col++
		if ch >= 0x10000 {
			col++
		}
	}
	return b.String()
}
