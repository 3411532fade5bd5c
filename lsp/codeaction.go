package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// codeAction is protocol.CodeAction with an edit whose URIs stay opaque strings.
type codeAction struct {
	Title       string                  `json:"title"`
	Kind        protocol.CodeActionKind `json:"kind"`
	Diagnostics []protocol.Diagnostic   `json:"diagnostics,omitempty"`
	IsPreferred bool                    `json:"isPreferred,omitempty"`
	Edit        *workspaceEdit          `json:"edit,omitempty"`
}

// workspaceEdit is protocol.WorkspaceEdit keyed by opaque URIs.
type workspaceEdit struct {
	Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges []textDocumentEdit             `json:"documentChanges,omitempty"`
}

// textDocumentEdit edits one cell (or file) at a known version.
type textDocumentEdit struct {
	TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []protocol.TextEdit             `json:"edits"`
}

// codeAction returns each fix of the findings under the requested range as a quickfix
// editing the cell. Fixes are edits only: premortem never runs them.
func (s *Server) codeAction(ctx context.Context, params json.RawMessage) (any, error) {
	var p CodeActionParams
	if err := decode("textDocument/codeAction", params, &p); err != nil {
		return nil, err
	}
	if len(p.Context.Only) > 0 && !wantsQuickFix(p.Context.Only) {
		return []codeAction{}, nil
	}
	d, cellID, start, ok := s.locate(p.TextDocument.URI, p.Range.Start)
	if !ok {
		return []codeAction{}, nil
	}
	res, snap, err := s.current(ctx, d)
	if err != nil {
		return nil, err
	}
	cell := snap.Cell(cellID)
	if cell == nil {
		return []codeAction{}, nil
	}
	end := cellPos(p.Range.End, cell.SourceLine)
	want := finding.Range{Start: start, End: end}
	settings := s.currentSettings()
	s.mu.Lock()
	docChanges := s.client.documentChanges
	s.mu.Unlock()

	actions := []codeAction{}
	for _, f := range d.merged(res, cell, snap.Index(cellID), settings) {
		if len(f.Fixes) == 0 || !overlaps(f.Range, want) {
			continue
		}
		diags := matchingDiagnostics(p.Context.Diagnostics, f)
		for _, fix := range f.Fixes {
			we, ok := fixEdit(d, snap, cell, fix, docChanges)
			if !ok {
				continue
			}
			actions = append(actions, codeAction{
				Title:       fix.Title,
				Kind:        protocol.QuickFix,
				Diagnostics: diags,
				IsPreferred: fix.Preferred,
				Edit:        we,
			})
		}
	}
	return actions, nil
}

// fixEdit turns a fix into a WorkspaceEdit. Each edit goes to the cell it targets: the
// finding's cell, or an earlier cell where the root cause is (Edit.Cell), so the edit lands
// on that cell's URI at that cell's version. ok is false when a targeted cell is gone.
func fixEdit(d *document, snap *notebook.Notebook, cell *notebook.Cell, fix finding.Fix, docChanges bool) (*workspaceEdit, bool) {
	var order []string
	byCell := map[string][]protocol.TextEdit{}
	cells := map[string]*notebook.Cell{}
	for _, e := range fix.Edits {
		target := cell
		if e.Cell != "" && e.Cell != cell.ID {
			target = snap.Cell(e.Cell)
			if target == nil {
				return nil, false
			}
		}
		if _, seen := byCell[target.ID]; !seen {
			order = append(order, target.ID)
			cells[target.ID] = target
		}
		byCell[target.ID] = append(byCell[target.ID], protocol.TextEdit{Range: lspRange(e.Range, target.SourceLine), NewText: e.NewText})
	}
	we := &workspaceEdit{}
	if !docChanges {
		we.Changes = map[string][]protocol.TextEdit{}
	}
	for _, id := range order {
		uri := d.cellURI(id)
		if docChanges {
			version := int32(cells[id].Version)
			if d.percent {
				version = int32(snap.Version)
			}
			if n := len(we.DocumentChanges); d.percent && n > 0 {
				// One file: its edits go into one document edit.
				we.DocumentChanges[n-1].Edits = append(we.DocumentChanges[n-1].Edits, byCell[id]...)
				continue
			}
			we.DocumentChanges = append(we.DocumentChanges, textDocumentEdit{TextDocument: VersionedTextDocumentIdentifier{URI: uri, Version: version}, Edits: byCell[id]})
		} else {
			we.Changes[uri] = append(we.Changes[uri], byCell[id]...)
		}
	}
	return we, true
}

func wantsQuickFix(only []protocol.CodeActionKind) bool {
	for _, k := range only {
		if k == protocol.QuickFix || k == "" {
			return true
		}
	}
	return false
}

// overlaps reports whether two ranges share a position (touching counts: a cursor at a
// diagnostic's edge still gets its fix).
func overlaps(a, b finding.Range) bool {
	return !a.End.Before(b.Start) && !b.End.Before(a.Start)
}

// matchingDiagnostics picks the client's diagnostics that came from f, by the digest in
// their data, falling back to code and range.
func matchingDiagnostics(diags []protocol.Diagnostic, f finding.Finding) []protocol.Diagnostic {
	digest := f.Digest()
	var out []protocol.Diagnostic
	for _, dg := range diags {
		if dg.Source != DiagnosticSource {
			continue
		}
		if m, ok := dg.Data.(map[string]any); ok {
			if dd, _ := m["digest"].(string); dd != "" {
				if dd == digest {
					out = append(out, dg)
				}
				continue
			}
		}
		if code, _ := dg.Code.(string); code == f.Code {
			out = append(out, dg)
		}
	}
	return out
}
