package lsp

import (
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// This file converts between LSP's wire shapes and premortem's domain types: notebook
// documents and changes into package notebook values, findings into diagnostics, and
// positions both ways.

// cellData converts a wire cell (no text) to notebook.CellData.
func cellData(c NotebookCell) notebook.CellData {
	d := notebook.CellData{ID: c.Document, Kind: notebook.Kind(c.Kind), Metadata: c.Metadata}
	if c.ExecutionSummary != nil {
		d.HasSummary = true
		d.ExecutionOrder = int(c.ExecutionSummary.ExecutionOrder)
		d.Success = c.ExecutionSummary.Success
	}
	return d
}

// textEdits converts content change events into notebook text edits.
func textEdits(changes []TextDocumentContentChangeEvent) []notebook.TextEdit {
	out := make([]notebook.TextEdit, 0, len(changes))
	for _, ch := range changes {
		if ch.Range == nil {
			out = append(out, notebook.TextEdit{Full: true, Text: ch.Text})
			continue
		}
		out = append(out, notebook.TextEdit{
			StartLine: int(ch.Range.Start.Line), StartChar: int(ch.Range.Start.Character),
			EndLine: int(ch.Range.End.Line), EndChar: int(ch.Range.End.Character),
			Text: ch.Text,
		})
	}
	return out
}

// openedCells converts didOpen text documents.
func openedCells(items []TextDocumentItem) []notebook.OpenedCell {
	out := make([]notebook.OpenedCell, 0, len(items))
	for _, it := range items {
		out = append(out, notebook.OpenedCell{ID: it.URI, Language: it.LanguageID, Version: int(it.Version), Text: it.Text})
	}
	return out
}

// notebookChange converts the params of notebookDocument/didChange.
func notebookChange(p *DidChangeNotebookDocumentParams) notebook.Change {
	ch := notebook.Change{Version: int(p.NotebookDocument.Version), Metadata: p.Change.Metadata}
	cells := p.Change.Cells
	if cells == nil {
		return ch
	}
	if st := cells.Structure; st != nil {
		sc := &notebook.StructureChange{
			Start:       int(st.Array.Start),
			DeleteCount: int(st.Array.DeleteCount),
			Opened:      openedCells(st.DidOpen),
		}
		for _, c := range st.Array.Cells {
			sc.Cells = append(sc.Cells, cellData(c))
		}
		for _, c := range st.DidClose {
			sc.Closed = append(sc.Closed, c.URI)
		}
		ch.Structure = sc
	}
	for _, c := range cells.Data {
		ch.Data = append(ch.Data, cellData(c))
	}
	for _, tc := range cells.TextContent {
		ch.Text = append(ch.Text, notebook.TextChange{
			ID:      tc.Document.URI,
			Version: int(tc.Document.Version),
			Edits:   textEdits(tc.Changes),
		})
	}
	return ch
}

// severity maps a finding's severity to LSP's.
func severity(s finding.Severity) protocol.DiagnosticSeverity {
	switch s {
	case finding.SeverityError:
		return protocol.DiagnosticSeverityError
	case finding.SeverityWarning:
		return protocol.DiagnosticSeverityWarning
	case finding.SeverityInfo:
		return protocol.DiagnosticSeverityInformation
	default:
		return protocol.DiagnosticSeverityHint
	}
}

// lspPos converts a cell position, shifted down by lineOffset lines (percent files).
func lspPos(p finding.Position, lineOffset int) protocol.Position {
	return protocol.Position{Line: uint32(max(0, p.Line+lineOffset)), Character: uint32(max(0, p.Character))}
}

func lspRange(r finding.Range, lineOffset int) protocol.Range {
	return protocol.Range{Start: lspPos(r.Start, lineOffset), End: lspPos(r.End, lineOffset)}
}

func cellPos(p protocol.Position, lineOffset int) finding.Position {
	return finding.Position{Line: int(p.Line) - lineOffset, Character: int(p.Character)}
}

// DiagnosticSource is the source of every diagnostic premortem publishes; the layer is the
// message's first word ("[static]", "[rules]", "[shadow]", "[llm]") so the user sees how
// sure it is.
const DiagnosticSource = "premortem"

// diagnosticData rides along in Diagnostic.data so code actions can find the finding again.
type diagnosticData struct {
	Cell      string `json:"cell"`
	Layer     string `json:"layer"`
	Code      string `json:"code"`
	Fixes     int    `json:"fixes,omitempty"`
	ExecCount int    `json:"run,omitempty"`
	Digest    string `json:"digest"`
}

// diagnostic converts one finding. related points at other places (the defining cell).
func diagnostic(f finding.Finding, lineOffset int, related []protocol.DiagnosticRelatedInformation) protocol.Diagnostic {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] ", f.Source)
	if f.Exception != "" && !strings.HasPrefix(f.Message, f.Exception) {
		b.WriteString(f.Exception)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	for _, e := range f.Evidence {
		b.WriteString("\n• ")
		b.WriteString(e)
	}
	return protocol.Diagnostic{
		Range:              lspRange(f.Range, lineOffset),
		Severity:           severity(f.Severity),
		Code:               f.Code,
		Source:             DiagnosticSource,
		Message:            b.String(),
		RelatedInformation: related,
		Data: diagnosticData{
			Cell: f.Cell, Layer: string(f.Source), Code: f.Code, Fixes: len(f.Fixes),
			Digest: f.Digest(),
		},
	}
}
