package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// maxRelated bounds the related locations of one diagnostic.
const maxRelated = 3

// relatedLocked points a name finding (undefined, defined only by a cell that has not run,
// stale) at the cells that define the name, so the user can jump there. cell is the cell
// f is about. It returns the name the locations are about too ("" when there are none to
// look for). Callers hold d.rmu.
func (d *document) relatedLocked(f finding.Finding, cell *notebook.Cell) ([]protocol.DiagnosticRelatedInformation, string) {
	switch f.Code {
	case finding.UndefinedName, finding.NotRunDefinition, finding.StaleDefinition:
	default:
		return nil, ""
	}
	if d.static == nil || d.static.Flow == nil || d.staticSnap == nil {
		return nil, ""
	}
	if cell == nil || cell.ID != f.Cell {
		cell = d.staticSnap.Cell(f.Cell)
	}
	if cell == nil {
		return nil, ""
	}
	name := textAt(cell.Text, f.Range)
	if name == "" {
		return nil, ""
	}
	var out []protocol.DiagnosticRelatedInformation
	for _, site := range d.static.Flow.Definitions(name) {
		if site.CellID == f.Cell || len(out) == maxRelated {
			continue
		}
		line := 0
		if d.percent { // only percent cells start at a line other than 0; a lookup per site would make publishing quadratic
			if dc := d.staticSnap.Cell(site.CellID); dc != nil {
				line = dc.SourceLine
			}
		}
		out = append(out, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: protocol.DocumentURI(d.cellURI(site.CellID)), Range: lspRange(site.Range, line)},
			Message:  "`" + name + "` " + siteText(site),
		})
	}
	return out, name
}

// textAt returns the text of a one-line range of a cell, "" when the range is not on one
// line or out of bounds.
func textAt(text string, r finding.Range) string {
	if r.Start.Line != r.End.Line {
		return ""
	}
	start, err := notebook.OffsetOf(text, r.Start.Line, r.Start.Character)
	if err != nil {
		return ""
	}
	end, err := notebook.OffsetOf(text, r.End.Line, r.End.Character)
	if err != nil || end < start {
		return ""
	}
	return text[start:end]
}

// ownRelatedLocked turns the places a finding itself points at (finding.Related: the
// earlier cell whose code raised) into related locations; those in cells the document no
// longer has are left out. Callers hold d.rmu.
func (d *document) ownRelatedLocked(f finding.Finding) []protocol.DiagnosticRelatedInformation {
	var out []protocol.DiagnosticRelatedInformation
	for _, r := range f.Related {
		if d.staticSnap == nil || len(out) == maxRelated {
			break
		}
		c := d.staticSnap.Cell(r.Cell)
		if c == nil {
			continue
		}
		out = append(out, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: protocol.DocumentURI(d.cellURI(r.Cell)), Range: lspRange(r.Range, c.SourceLine)},
			Message:  r.Message,
		})
	}
	return out
}
