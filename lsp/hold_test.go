package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"go.lsp.dev/protocol"
)

// holdSetup is a kernel state where the rules raise a finding that is not certain: a
// pandas accessor registered at run time, which a frame the cell derives (df2) provides
// although the tables of known DataFrame attributes lack it.
const holdSetup = `import numpy as np
import pandas as pd

@pd.api.extensions.register_dataframe_accessor("geo")
class GeoAccessor:
    def __init__(self, obj):
        self._obj = obj

    @property
    def area(self):
        return len(self._obj)

df = pd.DataFrame({"Age": [22.0, 38.0, 26.0]})`

// TestNoSquiggleWithdrawn is issue 22's editor promise at the protocol level, with a real
// kernel and shadow runs: every publishDiagnostics is recorded. On cells whose shadow run
// is clean, no error or warning is ever published: one where the static layer, before
// the kernel's names are known, says NameError for a name only the kernel holds; one where
// the rules raise an uncertain finding (held until the shadow run answers, then dismissed
// by it; the finding is real: with shadow runs off nothing holds it and it shows); a cell
// nobody flags. On its twin, a
// certain finding (a column missing from a frame the inspection saw whole) is published by
// the rules at once, before the shadow run answers, and stays once the run confirms it.
func TestNoSquiggleWithdrawn(t *testing.T) {
	l := launchKernel(t)
	n := execute(t, l, holdSetup)
	execute(t, l, "hidden = 5") // run from a cell since deleted: in the kernel, in no cell
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: holdSetup, order: n},
		vsCell{handle: 1, text: ""},
		vsCell{handle: 2, text: ""},
	))
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	c.waitStatus("file://"+nbPath, StatusIdle)

	refreshes := func() int { return strings.Count(strings.Join(c.requests, ","), "workspace/inlayHint/refresh") }
	// shadowAnswered waits for the shadow run's answer on uri: its trace's inlay hint on
	// line 0 (the publication that merges the answer is sent before the refresh).
	shadowAnswered := func(uri string, before int, hint string) {
		t.Helper()
		c.wait("the shadow run's trace (inlayHint/refresh)", func() bool { return refreshes() > before })
		var hints []InlayHint
		c.callOK("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": rng(0, 0, 5, 0)}, &hints)
		for _, h := range hints {
			if h.Position.Line == 0 && h.Label == hint {
				return
			}
		}
		t.Fatalf("inlay hints %+v lack %q on line 0: the shadow run did not answer for this text", hints, hint)
	}
	crashes := func(ds []protocol.Diagnostic) []protocol.Diagnostic {
		var out []protocol.Diagnostic
		for _, d := range ds {
			if d.Severity == protocol.DiagnosticSeverityError || d.Severity == protocol.DiagnosticSeverityWarning {
				out = append(out, d)
			}
		}
		return out
	}

	prev := ""
	for i, tc := range []struct {
		name, code string
	}{
		// The static layer before the kernel's names are known: no cell defines hidden.
		{"a name only the kernel holds", "a = np.arange(3)\nb = hidden + 1\n"},
		// The rules: "df2 has no column or attribute 'geo'" (not certain: the attribute
		// tables, a derived frame).
		{"accessor registered at run time", "a = np.arange(3)\ndf2 = df.copy()\nv = df2.geo.area\n"},
		// Nothing for the rules; a clean run.
		{"a clean cell", "a = np.arange(3)\nm = df['Age'].mean()\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := cellURI(nbPath, 1)
			c.mu.Lock()
			before, from := refreshes(), len(c.history[target])
			c.mu.Unlock()
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, i+1, 1, i+2, 0, 0, strings.Count(prev, "\n"), 0, tc.code))
			prev = tc.code
			shadowAnswered(target, before, "a: (3,) int64")
			c.mu.Lock()
			defer c.mu.Unlock()
			for i, ds := range c.history[target][from:] {
				for _, d := range crashes(ds) {
					t.Errorf("publish %d for a cell whose shadow run is clean: %s %q", i+1, sev(d), d.Message)
				}
			}
		})
	}

	// The twin: a certain finding shows at once (from the rules, before the shadow run's
	// confirmation) and never leaves.
	twin := cellURI(nbPath, 2)
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 4, 2, 2, 0, 0, 0, 0, "m = df['age'].mean()\n"))
	c.wait("the shadow run's confirmation of the missing column", func() bool {
		for _, d := range c.diags[twin] {
			if strings.HasPrefix(d.Message, "[shadow]") && d.Code == "missing-column" && d.Range.Start.Line == 0 && d.Range.Start.Character == 7 {
				return true
			}
		}
		return false
	})
	c.mu.Lock()
	first := -1
	for i, ds := range c.history[twin] {
		cs := crashes(ds)
		if first < 0 && len(cs) > 0 {
			first = i
			if d := cs[0]; !strings.HasPrefix(d.Message, "[rules]") || d.Code != "missing-column" || d.Severity != protocol.DiagnosticSeverityError {
				t.Errorf("first crash published on the twin: %s %v %q, want the rules' missing-column error", sev(d), d.Code, d.Message)
			}
		}
		if first >= 0 && len(cs) == 0 {
			t.Errorf("publish %d withdrew the certain finding: %+v", i+1, ds)
		}
	}
	if first < 0 {
		t.Errorf("no crash ever published on the twin")
	}
	c.mu.Unlock()

	// With shadow runs off nothing is coming, nothing holds: the rules' uncertain finding
	// on the first cell's accessor shows (it is real, and the editor used to flash it).
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 5, 1, 5, 0, 0, 2, 0, "a = np.arange(3)\ndf2 = df.copy()\nv = df2.geo.area\n"))
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{
		"debounce": 10, "shadow": map[string]any{"mode": "off"}}}})
	c.waitDiags(cellURI(nbPath, 1), "[missing-column@2:8-2:11]")
}

// TestHoldWithheld checks what a hold keeps back: predicted crashes of the static layer and
// the rules that are not certain and not already on screen; never a certain finding, a
// hazard that predicts no crash, another layer's finding, or anything without a hold.
func TestHoldWithheld(t *testing.T) {
	at := func(line int) finding.Range {
		return finding.Range{Start: finding.Position{Line: line}, End: finding.Position{Line: line, Character: 3}}
	}
	h := &shadowHold{cell: "c", shown: map[string]bool{holdKey("missing-attribute", 4, 0): true}}
	for _, tc := range []struct {
		name string
		f    finding.Finding
		hold *shadowHold
		kept bool
	}{
		{"uncertain rules crash", finding.Finding{Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-attribute", Exception: "AttributeError", Range: at(1)}, h, false},
		{"certain rules crash", finding.Finding{Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-column", Exception: "KeyError", Range: at(1), Certain: true}, h, true},
		{"uncertain, already on screen", finding.Finding{Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-attribute", Exception: "AttributeError", Range: at(4)}, h, true},
		{"static NameError", finding.Finding{Source: finding.SourceStatic, Severity: finding.SeverityError, Code: "undefined-name", Exception: "NameError", Range: at(2)}, h, false},
		{"static warning of a crash", finding.Finding{Source: finding.SourceStatic, Severity: finding.SeverityWarning, Code: "not-run-definition", Exception: "NameError", Range: at(2)}, h, false},
		{"a hazard that predicts no crash", finding.Finding{Source: finding.SourceStatic, Severity: finding.SeverityWarning, Code: "stale-definition", Range: at(2)}, h, true},
		{"the shadow run's own", finding.Finding{Source: finding.SourceShadow, Severity: finding.SeverityError, Code: "key-error", Exception: "KeyError", Range: at(2)}, h, true},
		{"no hold", finding.Finding{Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-attribute", Exception: "AttributeError", Range: at(1)}, nil, true},
	} {
		if got := tc.hold == nil || !tc.hold.held(tc.f); got != tc.kept {
			t.Errorf("%s: kept = %v, want %v", tc.name, got, tc.kept)
		}
	}
}

// TestExplicitShadowKeepsHold: an explicit shadowRun that cancels the automatic run of the
// same cell takes its hold over, so the uncertain rules finding the automatic run was held
// for does not show in between, and the explicit run's clean answer dismisses it unseen.
func TestExplicitShadowKeepsHold(t *testing.T) {
	l := launchKernel(t)
	n := execute(t, l, holdSetup)
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: holdSetup, order: n},
		vsCell{handle: 1, text: ""},
	))
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	c.waitStatus("file://"+nbPath, StatusIdle)
	target := cellURI(nbPath, 1)
	// The sorts keep the automatic run going past its budget (3 s): ten of them, since three
	// did so only under load; quiet, the run finished inside the budget and nothing was
	// published for the cell. (A sleep would be skipped in safe mode.)
	code := "a = np.arange(3)\nbig = np.random.default_rng(0).normal(size=8_000_000)\n"
	for i := 0; i < 10; i++ {
		code += fmt.Sprintf("s%d = np.sort(big + %d)\n", i, i)
	}
	code += "df2 = df.copy()\nv = df2.geo.area\n"
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 1, 2, 0, 0, 0, 0, code))
	// The first publication is the automatic run's provisional answer at the budget (still
	// running: outcome unknown, an information): the command then cancels a run under way.
	c.wait("the automatic run's provisional answer", func() bool { return c.publishes[target] > 0 })
	var summary string
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandShadowRun, "arguments": []any{target}}, &summary)
	if summary != shadowSummary("ok", "", "", 0, "") {
		t.Fatalf("shadowRun: %q, want the clean run's summary", summary)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ds := range c.history[target] {
		for _, d := range ds {
			if d.Severity == protocol.DiagnosticSeverityError || d.Severity == protocol.DiagnosticSeverityWarning {
				t.Errorf("publish %d for a cell whose shadow run is clean: %s %q", i+1, sev(d), d.Message)
			}
		}
	}
}
