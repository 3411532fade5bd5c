package lsp

import (
	"fmt"
	"strings"
	"testing"
)

// benchNotebook is a 200-cell notebook in the style of a data-science notebook: every cell
// reads names earlier cells define; the first 180 cells have run (so cell 150 is judged as
// a re-run against the kernel's history), the last 20 not.
func benchNotebook() []vsCell {
	cells := make([]vsCell, 200)
	for i := range cells {
		var b strings.Builder
		if i == 0 {
			b.WriteString("import numpy as np\nimport pandas as pd\nv0 = np.arange(10)\n")
		} else {
			fmt.Fprintf(&b, "v%d = v%d * 2 + np.sqrt(v%d).sum()\n", i, i-1, i-1)
			fmt.Fprintf(&b, "df%d = pd.DataFrame({'a': v%d, 'b': v%d})\n", i, i, i-1)
			fmt.Fprintf(&b, "for k in range(3):\n    df%d['c%%d' %% k] = df%d['a'] * k\n", i, i)
			fmt.Fprintf(&b, "def f%d(x):\n    return x + v%d\n", i, i)
			fmt.Fprintf(&b, "print(f%d(1), df%d.shape, len(v%d))\n", i, i, i)
		}
		cells[i] = vsCell{handle: i, text: b.String()}
		if i < 180 {
			cells[i].order = i + 1
		}
	}
	return cells
}

// BenchmarkKeystroke measures one keystroke in cell 150 of a 200-cell notebook until its
// diagnostics are published, through the whole server: JSON-RPC framing over a pipe, the
// didChange handler, Apply, the static pass and publishDiagnostics read back by the
// client. Each iteration types or deletes one character that makes a name undefined, so
// every keystroke really changes (and publishes) the cell's diagnostics.
func BenchmarkKeystroke(b *testing.B) {
	c, _ := startInProcess(b)
	c.initialize(nil)
	cells := benchNotebook()
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, cells...))
	target := cellURI(nbPath, 150)
	// The first pass is done when the last cell, which has not run, is warned about the
	// names it takes from cells that have not run either.
	c.wait("the first pass", func() bool { return len(c.diags[cellURI(nbPath, 199)]) > 0 })
	c.waitDiags(target, "[]")
	// The last line of cell 150 is "print(f150(1), df150.shape, len(v150))"; typing "z"
	// after "len(v150" makes v150z undefined.
	line := strings.Count(cells[150].text, "\n") - 1
	col := len("print(f150(1), df150.shape, len(v150")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version := i + 2
		if i%2 == 0 {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, 150, version, line, col, line, col, "z"))
			c.waitDiags(target, fmt.Sprintf("[undefined-name@%d:%d-%d:%d]", line, col-4, line, col+1))
		} else {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, 150, version, line, col, line, col+1, ""))
			c.waitDiags(target, "[]")
		}
	}
}

// BenchmarkAnalyzeFromScratch opens the 200-cell notebook and waits for its first pass
// (every cell parsed).
func BenchmarkAnalyzeFromScratch(b *testing.B) {
	c, _ := startInProcess(b)
	c.initialize(nil)
	cells := benchNotebook()
	for i := 0; i < b.N; i++ {
		for j := range cells {
			// New text per iteration so the parse cache cannot help.
			cells[j].text = fmt.Sprintf("# run %d\n", i) + strings.SplitN(cells[j].text, "\n", 2)[len(strings.SplitN(cells[j].text, "\n", 2))-1]
		}
		cells[150].text += "oops_undefined\n"
		path := fmt.Sprintf("/home/u/proj/scratch%d.ipynb", i)
		c.notify("notebookDocument/didOpen", vscodeDidOpen(path, cells...))
		c.wait("first pass", func() bool { return len(c.diags[cellURI(path, 150)]) > 0 })
		c.notify("notebookDocument/didClose", map[string]any{"notebookDocument": map[string]any{"uri": "file://" + path}, "cellTextDocuments": []any{}})
	}
}
