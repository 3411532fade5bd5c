package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/notebook"
)

// This file holds the document synchronization handlers: notebookDocument/* for notebooks
// and textDocument/* for percent-format .py files. They run on the read goroutine, apply
// the change to the live model and schedule a pass; they never analyze.

func (s *Server) didOpenNotebook(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidOpenNotebookDocumentParams
	if err := decode("notebookDocument/didOpen", params, &p); err != nil {
		return nil, err
	}
	nb, problems := openNotebook(&p)
	for _, pr := range problems {
		s.logf(protocol.MessageTypeWarning, "notebookDocument/didOpen %s: %s", p.NotebookDocument.URI, pr)
	}
	d := newDocument(p.NotebookDocument.URI, nb, s.analysisLog(p.NotebookDocument.URI))
	s.mu.Lock()
	if old := s.docs[d.uri]; old != nil {
		// Opened twice without a close: the new open wins.
		s.dropLocked(old)
		go s.release(old)
	}
	s.docs[d.uri] = d
	s.indexCellsLocked(d)
	s.mu.Unlock()
	s.schedule(d)
	s.rt.documentOpened(d)
	return nil, nil
}

// openNotebook builds the model of a didOpen leniently: a cell without a text document
// gets empty text and a text document without a cell is dropped, each reported.
func openNotebook(p *DidOpenNotebookDocumentParams) (*notebook.Notebook, []string) {
	nd := p.NotebookDocument
	var cells []notebook.CellData
	for _, c := range nd.Cells {
		cells = append(cells, cellData(c))
	}
	opened := openedCells(p.CellTextDocuments)
	nb, err := notebook.Open(nd.URI, nd.NotebookType, int(nd.Version), nd.Metadata, cells, opened)
	if err == nil {
		return nb, nil
	}
	problems := []string{err.Error()}
	// Retry with the inconsistencies repaired, so whatever was sent is kept.
	byID := map[string]notebook.OpenedCell{}
	for _, o := range opened {
		if _, dup := byID[o.ID]; !dup {
			byID[o.ID] = o
		}
	}
	seen := map[string]bool{}
	var goodCells []notebook.CellData
	var goodOpened []notebook.OpenedCell
	for _, c := range cells {
		if c.ID == "" || seen[c.ID] || (c.Kind != notebook.Code && c.Kind != notebook.Markup) {
			problems = append(problems, fmt.Sprintf("dropping invalid cell %q (kind %d)", c.ID, c.Kind))
			continue
		}
		seen[c.ID] = true
		o, ok := byID[c.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("cell %q came without its text document; treating it as empty", c.ID))
			o = notebook.OpenedCell{ID: c.ID, Language: "python"}
		}
		if c.HasSummary && c.ExecutionOrder < 0 {
			c.HasSummary, c.ExecutionOrder = false, 0
		}
		goodCells = append(goodCells, c)
		goodOpened = append(goodOpened, o)
	}
	nb, err = notebook.Open(nd.URI, nd.NotebookType, int(nd.Version), nd.Metadata, goodCells, goodOpened)
	if err != nil {
		problems = append(problems, err.Error())
		nb = &notebook.Notebook{URI: nd.URI, Type: nd.NotebookType, Version: int(nd.Version), Metadata: nd.Metadata}
	}
	return nb, problems
}

func (s *Server) didChangeNotebook(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidChangeNotebookDocumentParams
	if err := decode("notebookDocument/didChange", params, &p); err != nil {
		return nil, err
	}
	ch := notebookChange(&p)
	s.mu.Lock()
	d := s.docs[p.NotebookDocument.URI]
	if d == nil || d.percent {
		s.mu.Unlock()
		return nil, fmt.Errorf("change for notebook %s, which is not open; ignoring it", p.NotebookDocument.URI)
	}
	errs := applyLenient(d.nb, ch)
	if n := len(ch.Text); n > 0 {
		d.focus = ch.Text[n-1].ID
	}
	if ch.Structure != nil {
		s.indexCellsLocked(d)
	}
	s.mu.Unlock()
	s.schedule(d)
	if changeRan(ch) {
		s.rt.cellsRan(d)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("notebook %s: %w (the rest of the change was applied)", p.NotebookDocument.URI, errors.Join(errs...))
	}
	return nil, nil
}

// changeRan reports whether a change carries a finished run (an execution summary).
func changeRan(ch notebook.Change) bool {
	for _, d := range ch.Data {
		if d.HasSummary {
			return true
		}
	}
	return false
}

// applyLenient applies a change; when the whole change is rejected it applies its parts
// one by one, so one bad part (an edit for an unknown cell) does not lose the others.
func applyLenient(nb *notebook.Notebook, ch notebook.Change) []error {
	err := nb.Apply(ch)
	if err == nil {
		return nil
	}
	var errs []error
	try := func(part notebook.Change) {
		if err := nb.Apply(part); err != nil {
			errs = append(errs, err)
		}
	}
	if ch.Structure != nil {
		try(notebook.Change{Structure: ch.Structure})
	}
	for _, d := range ch.Data {
		try(notebook.Change{Data: []notebook.CellData{d}})
	}
	for _, t := range ch.Text {
		try(notebook.Change{Text: []notebook.TextChange{t}})
	}
	try(notebook.Change{Version: ch.Version, Metadata: ch.Metadata})
	return errs
}

func (s *Server) didCloseNotebook(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidCloseNotebookDocumentParams
	if err := decode("notebookDocument/didClose", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := s.docs[p.NotebookDocument.URI]
	if d == nil || d.percent {
		s.mu.Unlock()
		return nil, fmt.Errorf("close for notebook %s, which is not open", p.NotebookDocument.URI)
	}
	s.dropLocked(d)
	s.mu.Unlock()
	s.clearAll(d)
	s.rt.documentClosed(d)
	go s.release(d)
	return nil, nil
}

// bigClose is the size of cell text at which closing a notebook hands the memory it held
// back to the operating system at once: the runtime would return it only gradually, and
// the editor's user sees the server's RSS.
const bigClose = 1 << 20

// release frees what a closed document holds, once its passes have ended: the analyzer's
// syntax trees and facts, the results and caches. After a large notebook the freed memory
// goes back to the operating system, so the server's RSS returns near its level before
// the notebook was opened.
func (s *Server) release(d *document) {
	d.passes.Wait()
	d.sess.Close()
	d.rmu.Lock()
	d.static, d.staticSnap, d.pubCache = nil, nil, nil
	d.rmu.Unlock()
	size := 0
	s.mu.Lock()
	for _, c := range d.nb.Cells {
		size += len(c.Text)
	}
	d.nb = &notebook.Notebook{URI: d.nb.URI, Type: d.nb.Type}
	d.text = ""
	s.mu.Unlock()
	if size >= bigClose {
		debug.FreeOSMemory()
		analysis.TrimCMemory()
	}
}

// dropLocked forgets a document and stops its pass. Callers hold s.mu and then call
// clearAll without it.
func (s *Server) dropLocked(d *document) {
	d.cancelPass()
	d.gen.Add(1)
	delete(s.docs, d.uri)
	for id, cd := range s.cells {
		if cd == d {
			delete(s.cells, id)
		}
	}
}

// indexCellsLocked maps the document's cell URIs to it.
func (s *Server) indexCellsLocked(d *document) {
	for id, cd := range s.cells {
		if cd == d {
			delete(s.cells, id)
		}
	}
	if d.percent {
		return
	}
	for _, c := range d.nb.Cells {
		s.cells[c.ID] = d
	}
}

// isPercentCandidate reports whether a text document may be a percent-format notebook.
func isPercentCandidate(uri, languageID string) bool {
	return languageID == "python" || strings.HasSuffix(strings.ToLower(uri), ".py")
}

// hasPercentMarkers reports whether a .py file uses "# %%" cell markers.
func hasPercentMarkers(text string) bool {
	for line := range strings.Lines(text) {
		if l := strings.TrimLeft(line, " \t"); strings.HasPrefix(l, "# %%") || strings.HasPrefix(l, "#%%") {
			return true
		}
	}
	return false
}

func (s *Server) didOpenText(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidOpenTextDocumentParams
	if err := decode("textDocument/didOpen", params, &p); err != nil {
		return nil, err
	}
	td := p.TextDocument
	if strings.HasPrefix(td.URI, "vscode-notebook-cell") || !isPercentCandidate(td.URI, td.LanguageID) {
		return nil, nil // cells arrive through notebook sync; other files are not ours
	}
	d := &document{uri: td.URI, percent: true, text: td.Text}
	d = s.setPercentText(d, td.Text, int(td.Version))
	s.mu.Lock()
	if old := s.docs[d.uri]; old != nil {
		s.dropLocked(old)
		go s.release(old)
	}
	s.docs[d.uri] = d
	s.mu.Unlock()
	s.schedule(d)
	s.rt.documentOpened(d)
	return nil, nil
}

// setPercentText re-reads a percent document's cells from its text, keeping its analyzer
// cache. A file without markers has no cells (nothing to check).
func (s *Server) setPercentText(d *document, text string, version int) *document {
	d.text = text
	nb := &notebook.Notebook{URI: d.uri, Type: "percent"}
	if hasPercentMarkers(text) {
		nb = notebook.ParsePercent(text, d.uri)
	}
	nb.Version = version
	if d.sess == nil {
		fresh := newDocument(d.uri, nb, s.analysisLog(d.uri))
		fresh.percent, fresh.text = true, text
		return fresh
	}
	d.nb = nb
	return d
}

func (s *Server) didChangeText(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidChangeTextDocumentParams
	if err := decode("textDocument/didChange", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	if d == nil || !d.percent {
		s.mu.Unlock()
		if strings.HasPrefix(p.TextDocument.URI, "vscode-notebook-cell") || !isPercentCandidate(p.TextDocument.URI, "") {
			return nil, nil
		}
		return nil, fmt.Errorf("change for %s, which is not open; ignoring it", p.TextDocument.URI)
	}
	text, err := notebook.ApplyEdits(d.text, textEdits(p.ContentChanges))
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w; the change was not applied", p.TextDocument.URI, err)
	}
	s.setPercentText(d, text, int(p.TextDocument.Version))
	s.mu.Unlock()
	s.schedule(d)
	return nil, nil
}

func (s *Server) didCloseText(ctx context.Context, params json.RawMessage) (any, error) {
	var p DidCloseTextDocumentParams
	if err := decode("textDocument/didClose", params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	if d == nil || !d.percent {
		s.mu.Unlock()
		return nil, nil
	}
	s.dropLocked(d)
	s.mu.Unlock()
	s.clearAll(d)
	s.rt.documentClosed(d)
	go s.release(d)
	return nil, nil
}
