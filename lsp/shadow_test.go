package lsp

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// TestFastDevRunEditor is the editor's side of the fast dev run with a real kernel: a cell
// whose loop, capped, makes losses[29] fail gets no warning at the budget (the crash does not
// happen at the full run's sizes), a $/progress begin while the full run goes on; the full
// run finishes clean and the progress ends. Then a cell whose
// full run cannot finish shows the information-level "outcome unknown" diagnostic that says
// what was shortened, never nothing.
func TestFastDevRunEditor(t *testing.T) {
	l := launchKernel(t)
	setup := "import numpy as np\ndata = np.random.default_rng(2).normal(size=1_000_000)"
	n := execute(t, l, setup)
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe", "timeout": 1500, "fullTimeout": 60000}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: setup, order: n},
		vsCell{handle: 1, text: ""},
	))
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	target := cellURI(nbPath, 1)
	// The full run must outlast the budget on any machine (30 sorts of a million
	// numbers: seconds even on a quiet machine), while the capped run's 3 iterations answer
	// within it; the full run then withdraws the likely crash within its own limit.
	code := "losses = []\nfor i in range(30):\n    losses.append(float(np.sort(data + i)[0]))\nlast = losses[29]\n"
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 1, 2, 0, 0, 0, 0, code))

	likely := func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if strings.HasPrefix(d.Message, "[shadow]") && strings.Contains(d.Message, "IndexError") && d.Range.Start.Line == 3 {
				return d.Severity == protocol.DiagnosticSeverityWarning
			}
		}
		return false
	}
	// The capped run's IndexError reads the shortened losses; at the full run's sizes (30
	// entries) losses[29] runs clean, so the fast answer is no warning, only the progress.
	c.wait("the fast answer: $/progress begin while the full run goes on", func() bool {
		return strings.Contains(progressKinds(c.progress), "begin")
	})
	c.mu.Lock()
	if likely(c.diags[target]) {
		t.Errorf("a warning on a cell whose full run is clean: %+v", c.diags[target])
	}
	c.mu.Unlock()
	c.wait("the full run's answer withdrawing the warning, and the progress end", func() bool {
		return !likely(c.diags[target]) && c.publishes[target] > 0 && strings.HasSuffix(progressKinds(c.progress), "end")
	})
	for _, d := range c.diags[target] {
		if d.Severity == protocol.DiagnosticSeverityError || d.Severity == protocol.DiagnosticSeverityWarning {
			t.Errorf("after the clean full run: %s %q", sev(d), d.Message)
		}
	}

	// A clean cell too long for the full limit in this test: unknown, and the editor says so.
	slow := "total = 0\nfor i in range(10**10):\n    total += i\n"
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 2, 1, 3, 0, 0, 4, 0, slow))
	c.wait("the outcome-unknown information diagnostic on the cell's first line", func() bool {
		for _, d := range c.diags[target] {
			if d.Severity == protocol.DiagnosticSeverityInformation && d.Range.Start.Line == 0 &&
				strings.HasPrefix(d.Message, "[shadow] outcome unknown: loops were shortened and ran clean") &&
				strings.Contains(d.Message, "for i in range(10 ** 10) ran 3") && d.Source == "premortem" {
				return true
			}
		}
		return false
	})
}

// progressKinds lists the kinds of the $/progress notifications in order: "begin,end,...".
func progressKinds(ps []json.RawMessage) string {
	var kinds []string
	for _, p := range ps {
		var v struct {
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		_ = json.Unmarshal(p, &v)
		kinds = append(kinds, v.Value.Kind)
	}
	return strings.Join(kinds, ",")
}

func sev(d protocol.Diagnostic) string {
	return map[protocol.DiagnosticSeverity]string{protocol.DiagnosticSeverityError: "error", protocol.DiagnosticSeverityWarning: "warning",
		protocol.DiagnosticSeverityInformation: "info", protocol.DiagnosticSeverityHint: "hint"}[d.Severity]
}
