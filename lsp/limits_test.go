package lsp

import (
	"strings"
	"testing"
	"time"
)

// TestBoundedCells opens a notebook holding a 5 MB cell, a 60,000-deep subscript chain and
// 30,000 nested calls: each gets its diagnostic, the log names the cell, the ordinary cell
// after them is checked as usual, and the server keeps answering.
func TestBoundedCells(t *testing.T) {
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}})
	huge := "rows = [\n" + strings.Repeat("    [1, 2.5, 'é', None],\n", (5<<20)/26) + "]\n"
	cells := []vsCell{
		{handle: 0, text: huge, order: 1},
		{handle: 1, text: "a = [0]\nx = a" + strings.Repeat("[0]", 60000) + "\n", order: 2},
		{handle: 2, text: "y = " + strings.Repeat("f(", 30000) + "1" + strings.Repeat(")", 30000) + "\n"},
		{handle: 3, text: "print(rows, x)\nprint(not_defined_anywhere)\n"},
	}
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, cells...))
	c.waitDiags(cellURI(nbPath, 0), "[not-analysed@0:0-0:8]")
	c.waitDiags(cellURI(nbPath, 1), "[not-analysed@1:4-1:5]")
	c.waitDiags(cellURI(nbPath, 2), "[syntax-error@0:405-0:406]")
	// The huge cell ran: it may define anything, so nothing in the last cell is certain.
	c.waitDiags(cellURI(nbPath, 3), "[]")
	c.waitLog("cell 1 (" + cellURI(nbPath, 0) + "): the cell is 5.0 MB")
	c.waitLog("cell 2 (" + cellURI(nbPath, 1) + "): line 2 nests more than 1000 levels deep")
	var hover map[string]any
	c.callOK("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": cellURI(nbPath, 3)},
		"position": map[string]any{"line": 0, "character": 7}}, &hover)
}

// TestCloseReleases: didClose frees what the notebook held (the analyzer's cells and
// syntax trees, the results), once its pass has ended.
func TestCloseReleases(t *testing.T) {
	var s *Server
	c, _ := startInProcessWith(t, func(srv *Server) { s = srv })
	c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: "x = 1\n", order: 1}, vsCell{handle: 1, text: "print(y)\n"}))
	c.waitDiags(cellURI(nbPath, 1), "[undefined-name@0:6-0:7]")
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 2, 1, 2, 0, 6, 0, 7, "x"))
	c.waitDiags(cellURI(nbPath, 1), "[]")
	s.mu.Lock()
	d := s.docs["file://"+nbPath]
	s.mu.Unlock()
	cache := d.sess.Cache()
	if cache.Len() != 2 || cache.Trees() != 1 {
		t.Fatalf("open: %d cells, %d trees cached; want 2 and 1 (the edited cell)", cache.Len(), cache.Trees())
	}
	c.notify("notebookDocument/didClose", map[string]any{"notebookDocument": map[string]any{"uri": "file://" + nbPath}, "cellTextDocuments": []any{}})
	c.waitDiags(cellURI(nbPath, 1), "[]")
	deadline := time.Now().Add(waitTimeout)
	for {
		d.rmu.Lock()
		static := d.static
		d.rmu.Unlock()
		if cache.Len() == 0 && cache.Trees() == 0 && static == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("closed: %d cells, %d trees cached, static result %v; want nothing", cache.Len(), cache.Trees(), static != nil)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
