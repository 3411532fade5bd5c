package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
)

// TestEditorAgreesWithCheck: the same notebook and kernel state give the same findings in
// `premortem check` (judge.CheckNotebook: its own kernel, the executed cells replayed) and
// in the editor (a real server session attached to a kernel in which the same cells ran,
// with the judged cell as the pass's focus), because both run judge's one pipeline. The
// notebooks are check scenarios: a crash the rules predict (with a verified quick fix), a
// crash only the shadow run finds, and a clean cell. Each finding is compared by cell,
// code, range, severity and the message's first line (layer, exception, message), with
// its fixes' titles; an unknown verdict must be the editor's outcome-unknown diagnostic.
func TestEditorAgreesWithCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kernels")
	}
	python.Require(t, "ipykernel", "pandas", "numpy")
	for _, name := range []string{"pandas_missing_column", "sandbox_csv_roundtrip", "pandas_missing_column" + scenario.TwinSuffix} {
		t.Run(name, func(t *testing.T) {
			agreeOn(t, scenario.Load(t, filepath.Join(scenario.Dir(t, "scenarios", "check"), name+scenario.Ext)))
		})
	}
}

func agreeOn(t *testing.T, sc *scenario.File) {
	dir := t.TempDir()
	nb, target := sc.Notebook(t)
	sc.WriteData(t, dir)
	path := scenario.WriteNotebook(t, dir, nb)

	// The editor's settings, and the judge options they make: the command line gets the same.
	init := map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe", "timeout": "20s", "fullTimeout": "60s"}}
	rawInit, _ := json.Marshal(init)
	st, err := ParseSettings(rawInit)
	if err != nil {
		t.Fatal(err)
	}
	opts := (&runtimeLayer{}).judgeFor(nil, st, st.Shadow.Mode).Options

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := judge.CheckNotebook(ctx, path, judge.CheckOptions{Options: opts, Targets: []int{target}})
	if err != nil {
		t.Fatalf("CheckNotebook: %v", err)
	}
	if rep.ReplayError != nil || len(rep.Cells) != 1 {
		t.Fatalf("check: replay error %v, %d verdicts", rep.ReplayError, len(rep.Cells))
	}
	v := rep.Cells[0]
	text := nb.Cells[target].Text
	var want []string
	wantFixes := map[string][]string{}
	for _, f := range v.Findings {
		k := findingKey(diagnostic(f, 0, nil))
		want = append(want, k)
		for _, fx := range f.Fixes {
			wantFixes[k] = append(wantFixes[k], fx.Title)
		}
	}
	if v.Verdict == judge.VerdictUnknown {
		want = append(want, findingKey(diagnostic(unknownDiagnostic(nb.Cells[target].ID, text, v), 0, nil)))
	}

	// The editor: a kernel in the notebook's folder in which the executed cells ran, as the
	// replay ran them.
	k := kernel.Start(t, kernelclient.LaunchOptions{Cwd: dir, Env: append(os.Environ(), "MPLBACKEND=Agg")}, "pandas", "numpy")
	var cells []vsCell
	for i, c := range nb.Cells {
		vc := vsCell{handle: i, text: c.Text}
		if c.ExecutionOrder > 0 {
			vc.order = execute(t, k, c.Text)
		}
		if i == target {
			vc.text = "" // typed below, which makes it the pass's focus
		}
		cells = append(cells, vc)
	}
	uri := cellURI(path, target)
	done := make(chan struct{}, 16)
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.checked = func(p *pass) {
			if p.focus == uri && p.gen == p.d.gen.Load() {
				done <- struct{}{}
			}
		}
	})
	c.initialize(init)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(path, cells...))
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{k.ConnectionFile}}, nil)
	c.notify("notebookDocument/didChange", vscodeTextChange(path, 1, target, 2, 0, 0, 0, 0, text))
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the editor's pass over cell %d did not end", target+1)
	}
	// A round trip: every notification sent before its answer has been read.
	var actions []codeActionResult
	c.mu.Lock()
	diags := slices.Clone(c.diags[uri])
	c.mu.Unlock()
	c.callOK("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        rng(0, 0, len(strings.Split(text, "\n")), 0),
		"context":      map[string]any{"diagnostics": diags, "only": []string{"quickfix"}, "triggerKind": 1},
	}, &actions)
	c.mu.Lock()
	diags = slices.Clone(c.diags[uri])
	c.mu.Unlock()
	var got []string
	for _, d := range diags {
		got = append(got, findingKey(d))
	}
	gotFixes := map[string][]string{}
	for _, a := range actions {
		k := "(no diagnostic)"
		if len(a.Diagnostics) > 0 {
			k = actionKey(diags, a.Diagnostics[0].Code)
		}
		gotFixes[k] = append(gotFixes[k], a.Title)
	}

	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("findings differ (verdict %s: %s)\n check:  %s\n editor: %s", v.Verdict, v.Reason, strings.Join(want, "\n         "), strings.Join(got, "\n         "))
	}
	if fmt.Sprint(gotFixes) != fmt.Sprint(wantFixes) {
		t.Errorf("fixes differ\n check:  %v\n editor: %v", wantFixes, gotFixes)
	}
	// The notebooks must still be what the comparison is about (a crash, a clean cell).
	if w, ok := sc.Header["verdict"]; !ok || v.Verdict != w {
		t.Errorf("check says %s, the scenario %q: the notebook no longer shows what this test compares", v.Verdict, w)
	}
}

// findingKey is what must agree about one finding: severity, code, range and the message's
// first line (its layer, exception and message; evidence lines carry timings).
func findingKey(d protocol.Diagnostic) string {
	msg, _, _ := strings.Cut(d.Message, "\n")
	r := d.Range
	return fmt.Sprintf("%v %v@%d:%d-%d:%d %s", d.Severity, d.Code, r.Start.Line, r.Start.Character, r.End.Line, r.End.Character, msg)
}

// actionKey is the findingKey of the diagnostic with the code a code action is linked to.
func actionKey(diags []protocol.Diagnostic, code string) string {
	for _, d := range diags {
		if fmt.Sprint(d.Code) == code {
			return findingKey(d)
		}
	}
	return "(unknown diagnostic " + code + ")"
}
