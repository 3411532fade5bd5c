package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
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
	want := analysis.Range{Start: start, End: end}
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
			edits := make([]protocol.TextEdit, 0, len(fix.Edits))
			for _, e := range fix.Edits {
				edits = append(edits, protocol.TextEdit{Range: lspRange(e.Range, cell.SourceLine), NewText: e.NewText})
			}
			uri := d.cellURI(cellID)
			we := &workspaceEdit{}
			if docChanges {
				version := int32(cell.Version)
				if d.percent {
					version = int32(snap.Version)
				}
				we.DocumentChanges = []textDocumentEdit{{TextDocument: VersionedTextDocumentIdentifier{URI: uri, Version: version}, Edits: edits}}
			} else {
				we.Changes = map[string][]protocol.TextEdit{uri: edits}
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
func overlaps(a, b analysis.Range) bool {
	return !a.End.Before(b.Start) && !b.End.Before(a.Start)
}

// matchingDiagnostics picks the client's diagnostics that came from f, by the digest in
// their data, falling back to code and range.
func matchingDiagnostics(diags []protocol.Diagnostic, f analysis.Finding) []protocol.Diagnostic {
	digest := findingDigest(f)
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
