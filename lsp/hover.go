package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// locate resolves a text document URI and position to a document, a cell ID and the
// position within the cell. For notebooks the URI is a cell URI; for percent files it is
// the file, and the cell is the one whose lines contain the position. ok is false when the
// URI is not open or the position is in no cell.
func (s *Server) locate(uri string, pos protocol.Position) (d *document, cellID string, p finding.Position, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d = s.cells[uri]; d != nil {
		return d, uri, cellPos(pos, 0), true
	}
	d = s.docs[uri]
	if d == nil || !d.percent {
		return nil, "", p, false
	}
	var best *notebook.Cell
	for _, c := range d.nb.Cells {
		if c.SourceLine <= int(pos.Line) {
			best = c
		}
	}
	if best == nil {
		return nil, "", p, false
	}
	return d, best.ID, cellPos(pos, best.SourceLine), true
}

func (s *Server) hover(ctx context.Context, params json.RawMessage) (any, error) {
	var p TextDocumentPositionParams
	if err := decode("textDocument/hover", params, &p); err != nil {
		return nil, err
	}
	d, cellID, pos, ok := s.locate(p.TextDocument.URI, p.Position)
	if !ok {
		s.tracef("hover: %s is not an open cell or percent file", p.TextDocument.URI)
		return nil, nil
	}
	res, snap, err := s.current(ctx, d)
	if err != nil {
		return nil, err
	}
	cell := snap.Cell(cellID)
	if cell == nil || res == nil {
		return nil, nil
	}
	name, rng, ok := nameAt(res.Facts[cellID], pos)
	if !ok {
		return nil, nil
	}
	md := s.hoverMarkdown(ctx, d, snap, res, cell, name, pos)
	r := lspRange(rng, cell.SourceLine)
	return protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: md}, Range: &r}, nil
}

// nameAt finds the name or attribute chain prefix under pos: hovering "Age" in
// df.Age.mean gives "df.Age".
func nameAt(cf *analysis.CellFacts, pos finding.Position) (string, finding.Range, bool) {
	if cf == nil {
		return "", finding.Range{}, false
	}
	for _, a := range cf.Attrs {
		if !a.Range.Contains(pos) {
			continue
		}
		for i, pr := range a.PartRanges {
			if i < len(a.Parts) && pr.Contains(pos) {
				return strings.Join(a.Parts[:i+1], "."), finding.Range{Start: a.Range.Start, End: pr.End}, true
			}
		}
	}
	for _, u := range cf.Uses {
		if u.Range.Contains(pos) {
			return u.Name, u.Range, true
		}
	}
	for _, df := range cf.Defs {
		if df.Range.Contains(pos) {
			return df.Name, df.Range, true
		}
	}
	return "", finding.Range{}, false
}

// hoverMarkdown assembles the hover: where the name was defined, its runtime facts, the
// traced state of the line, and the kernel status.
func (s *Server) hoverMarkdown(ctx context.Context, d *document, snap *notebook.Notebook, res *analysis.Result, cell *notebook.Cell, name string, pos finding.Position) string {
	var b strings.Builder
	root, _, _ := strings.Cut(name, ".")
	fmt.Fprintf(&b, "**`%s`**", name)
	if where := definitionText(snap, res, root); where != "" {
		b.WriteString(" — ")
		b.WriteString(where)
	}
	b.WriteString("\n\n")

	if v, execCount, ok := s.rt.value(ctx, d, cell, name); ok {
		b.WriteString(formatValue(v, execCount))
		b.WriteString("\n")
	}
	if line := d.tracedLine(cell, pos.Line); line != "" {
		fmt.Fprintf(&b, "\n**shadow run, after line %d:** %s\n", pos.Line+1, line)
	}
	fmt.Fprintf(&b, "\n---\n*%s*\n", s.rt.status(d))
	return b.String()
}

// definitionText says where a name comes from: the binding the kernel holds after the
// executed cells, else the cells that define it without having run.
func definitionText(snap *notebook.Notebook, res *analysis.Result, name string) string {
	if res == nil || res.Flow == nil {
		return ""
	}
	if def, ok := res.Flow.LastDefinition(name); ok {
		return siteText(def)
	}
	sites := res.Flow.Definitions(name)
	if len(sites) == 0 {
		if analysis.IsBuiltin(name) {
			return "a Python builtin"
		}
		return "not defined by any cell"
	}
	return siteText(sites[0])
}

// siteText describes one binding site: "defined in cell 3, line 2, which ran as [4]".
func siteText(def analysis.DefSite) string {
	where := fmt.Sprintf("defined in cell %d, line %d", def.Index+1, def.Range.Start.Line+1)
	if def.ExecutionOrder > 0 {
		return where + fmt.Sprintf(", which ran as [%d]", def.ExecutionOrder)
	}
	return where + ", which has not run"
}

// tracedLine renders the names the cell's last shadow run recorded at a 0-based line.
func (d *document) tracedLine(cell *notebook.Cell, line int) string {
	r, _ := d.sess.Shadow(cell)
	if r == nil {
		return ""
	}
	for _, st := range r.Trace {
		if st.Line != line+1 {
			continue
		}
		names := make([]string, 0, len(st.Names))
		for n := range st.Names {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("`%s`: %s", n, compactString(st.Names[n])))
		}
		return strings.Join(parts, ", ")
	}
	return ""
}
