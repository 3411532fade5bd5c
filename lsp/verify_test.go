package lsp

import (
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// verifiedActions asks for the code actions at a position until one is titled verified
// (verification publishes proven fixes after the squiggle), and returns them.
func verifiedActions(t *testing.T, c *testClient, uri string, line, char int, diags any) []codeActionResult {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var actions []codeActionResult
		c.callOK("textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"range":        rng(line, char, line, char),
			"context":      map[string]any{"diagnostics": diags, "only": []string{"quickfix"}, "triggerKind": 1},
		}, &actions)
		for _, a := range actions {
			if strings.Contains(a.Title, "(verified: ") {
				return actions
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verified fix offered; actions %+v", actions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestVerifiedQuickFix: with the shadow layer on, the missing-column fix is shadow-run
// after the squiggle and then offered as verified, preferred, editing the cell.
func TestVerifiedQuickFix(t *testing.T) {
	l := launchKernel(t)
	setup := "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0, None], 'Name': ['a', 'b', 'c']})"
	n := execute(t, l, setup)
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: setup, order: n},
		vsCell{handle: 1, text: ""},
	))
	target := cellURI(nbPath, 1)
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	// Typing makes the cell the pass's focus: it gets the shadow run and verification.
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 1, 2, 0, 0, 0, 0, "m = df['age'].mean()"))
	ds := c.waitDiags(target, "[missing-column@0:7-0:12]")
	actions := verifiedActions(t, c, target, 0, 8, ds)
	a := actions[0]
	if a.Title != "Use column 'Age' (verified: the cell runs)" || !a.IsPreferred || len(a.Edit.DocumentChanges) != 1 || a.Edit.DocumentChanges[0].TextDocument.Version != 2 {
		t.Fatalf("first action %+v, want the verified 'Age' fix, preferred, on one cell", a)
	}
	if dc := a.Edit.DocumentChanges[0]; dc.TextDocument.URI != target || !strings.Contains(dc.Edits[0].NewText, "Age") {
		t.Errorf("edit %+v, want 'Age' on %s", dc, target)
	}
	// The proof is published with the diagnostic, so clients re-read the code actions.
	c.wait("the diagnostic to say the fix is proven", func() bool {
		for _, d := range c.diags[target] {
			if strings.Contains(d.Message, "quick fix proven in a copy of the kernel: Use column 'Age' (verified: the cell runs)") {
				return true
			}
		}
		return false
	})
}

// TestVerifiedFixEditsEarlierCell: a Linear(4, 1) inside a module defined in an earlier
// cell, fed 3 features: the verified fix's WorkspaceEdit targets the defining cell's URI.
func TestVerifiedFixEditsEarlierCell(t *testing.T) {
	l := launchKernel(t)
	cells := []string{
		"import torch\nimport torch.nn as nn\nX = torch.randn(8, 3)",
		"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)\n\n    def forward(self, x):\n        return self.fc(x)",
		"model = Net()",
	}
	var vs []vsCell
	for i, code := range cells {
		vs = append(vs, vsCell{handle: i, text: code, order: execute(t, l, code)})
	}
	vs = append(vs, vsCell{handle: 3, text: ""})
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe", "timeout": "20s"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vs...))
	target := cellURI(nbPath, 3)
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 3, 2, 0, 0, 0, 0, "out = model(X)"))
	ds := c.waitDiags(target, "[linear-in-features@0:12-0:13]")
	actions := verifiedActions(t, c, target, 0, 3, ds)
	a := actions[0]
	if !strings.HasPrefix(a.Title, "Set in_features to 3 in cell 2") || len(a.Edit.DocumentChanges) != 1 {
		t.Fatalf("first action %+v, want in_features set in cell 2", a)
	}
	if dc := a.Edit.DocumentChanges[0]; dc.TextDocument.URI != cellURI(nbPath, 1) || dc.Edits[0].NewText != "3" {
		t.Errorf("edit %+v, want \"3\" on %s", dc, cellURI(nbPath, 1))
	}
}

// TestRelatedEarlierCell: a shadow crash raised inside the forward of a class an earlier cell
// defines says where ("raised in cell 2, line 6 (forward)") and its relatedInformation links
// that cell's URI and line, where the fix goes.
func TestRelatedEarlierCell(t *testing.T) {
	l := launchKernel(t)
	cells := []string{
		"import torch\nimport torch.nn as nn\nseqs = torch.randn(4, 5, 3)",
		"class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.out = nn.Linear(15, 2)\n    def forward(self, x):\n        x = x.permute(0, 2, 1).view(x.size(0), -1)\n        return self.out(x)",
		"head = Head()",
	}
	var vs []vsCell
	for i, code := range cells {
		vs = append(vs, vsCell{handle: i, text: code, order: execute(t, l, code)})
	}
	vs = append(vs, vsCell{handle: 3, text: ""})
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe", "timeout": "20s"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vs...))
	target := cellURI(nbPath, 3)
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 3, 2, 0, 0, 0, 0, "scores = head(seqs)"))
	var d protocol.Diagnostic
	c.wait("the shadow crash to point at cell 2", func() bool {
		for _, x := range c.diags[target] {
			if strings.Contains(x.Message, "raised in cell 2, line 6 (forward)") {
				d = x
				return true
			}
		}
		return false
	})
	if len(d.RelatedInformation) == 0 {
		t.Fatalf("diagnostic %+v has no relatedInformation", d)
	}
	ri := d.RelatedInformation[0]
	if string(ri.Location.URI) != cellURI(nbPath, 1) || ri.Location.Range.Start.Line != 5 || !strings.Contains(ri.Message, "view") {
		t.Errorf("related %+v, want cell 2's line 6", ri)
	}
}
