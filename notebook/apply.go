package notebook

import (
	"fmt"
	"slices"
)

// Apply applies one notebookDocument/didChange event: the cell array splice with its opened
// and closed cell documents, then cell data (kind, metadata, execution summary), then cell
// text edits in order, then the notebook version and metadata.
//
// Cell text is keyed by cell ID, never by position: a cell that moved is in the splice's
// Cells but in neither Opened nor Closed, and keeps its text (the bug astral-sh/ruff#12573
// shipped). The array's cells carry their whole state as the wire does (kind, metadata,
// execution summary), which replaces a moved cell's: a moved cell sent without
// executionSummary has none. A cell both closed and opened in one change (a language
// change) takes the opened text and language.
//
// Apply is all or nothing: the change is checked while it is built on copies, and on any
// error (a splice out of range, an unknown or duplicated cell, a text edit on a line past
// the end) the notebook is left exactly as it was. Cells a change touches are replaced by
// new *Cell values, so a caller holding an old *Cell keeps a consistent snapshot of it; look
// cells up again after Apply.
//
// Lenient on purpose: a cell deleted by the splice but missing from Closed simply leaves,
// and a text edit's character past its line's end clamps to the line end (see OffsetOf).
func (nb *Notebook) Apply(ch Change) error {
	cells := nb.Cells
	if ch.Structure != nil {
		var err error
		cells, err = splice(cells, ch.Structure)
		if err != nil {
			return fmt.Errorf("cells.structure: %w", err)
		}
	}
	// copied records that cells is already a private slice (not nb.Cells) that may be
	// written to.
	copied := ch.Structure != nil
	own := func(i int) *Cell {
		if !copied {
			cells = slices.Clone(cells)
			copied = true
		}
		c := *cells[i]
		cells[i] = &c
		return &c
	}
	for k, d := range ch.Data {
		i := indexOf(cells, d.ID)
		if i < 0 {
			return fmt.Errorf("cells.data[%d]: unknown cell %q", k, d.ID)
		}
		if err := d.check(); err != nil {
			return fmt.Errorf("cells.data[%d] (cell %q): %w", k, d.ID, err)
		}
		c := own(i)
		c.Kind = d.Kind
		c.Metadata = d.Metadata
		c.setSummary(d)
	}
	for k, t := range ch.Text {
		i := indexOf(cells, t.ID)
		if i < 0 {
			return fmt.Errorf("cells.textContent[%d]: unknown cell %q", k, t.ID)
		}
		text, err := ApplyEdits(cells[i].Text, t.Edits)
		if err != nil {
			return fmt.Errorf("cells.textContent[%d] (cell %q): %w", k, t.ID, err)
		}
		c := own(i)
		c.Text = text
		if t.Version != 0 {
			c.Version = t.Version
		}
	}
	nb.Cells = cells
	if ch.Version != 0 {
		nb.Version = ch.Version
	}
	if ch.Metadata != nil {
		nb.Metadata = ch.Metadata
	}
	return nil
}

// splice returns a new cell list with s applied to cells, which it does not modify.
func splice(cells []*Cell, s *StructureChange) ([]*Cell, error) {
	if s.Start < 0 || s.DeleteCount < 0 || s.Start > len(cells) || s.DeleteCount > len(cells)-s.Start {
		return nil, fmt.Errorf("array splice start %d, deleteCount %d is out of range for %d cells", s.Start, s.DeleteCount, len(cells))
	}
	old := make(map[string]*Cell, len(cells))
	for _, c := range cells {
		old[c.ID] = c
	}
	opened := make(map[string]*OpenedCell, len(s.Opened))
	for k := range s.Opened {
		o := &s.Opened[k]
		if _, dup := opened[o.ID]; dup {
			return nil, fmt.Errorf("didOpen lists cell %q twice", o.ID)
		}
		opened[o.ID] = o
	}
	closed := make(map[string]bool, len(s.Closed))
	for _, id := range s.Closed {
		if old[id] == nil {
			return nil, fmt.Errorf("didClose for cell %q, which is not in the notebook", id)
		}
		closed[id] = true
	}

	out := make([]*Cell, 0, len(cells)-s.DeleteCount+len(s.Cells))
	out = append(out, cells[:s.Start]...)
	for k, d := range s.Cells {
		if err := d.check(); err != nil {
			return nil, fmt.Errorf("array cell %d (%q): %w", k, d.ID, err)
		}
		var c *Cell
		switch prev := old[d.ID]; {
		case opened[d.ID] != nil:
			c = &Cell{ID: d.ID}
		case prev != nil && !closed[d.ID]:
			cp := *prev // moved: keeps text, language, version, file fields
			c = &cp
		case prev != nil:
			return nil, fmt.Errorf("cell %q is closed but still in the array, and not reopened", d.ID)
		default:
			return nil, fmt.Errorf("cell %q has no text: it is neither in didOpen nor already in the notebook", d.ID)
		}
		c.Kind = d.Kind
		c.Metadata = d.Metadata
		c.setSummary(d)
		out = append(out, c)
	}
	out = append(out, cells[s.Start+s.DeleteCount:]...)

	seen := make(map[string]bool, len(out))
	for i, c := range out {
		if seen[c.ID] {
			return nil, fmt.Errorf("cell %q would be in the notebook twice (a moved cell must also be deleted from its old place)", c.ID)
		}
		seen[c.ID] = true
		o := opened[c.ID]
		if o == nil {
			if closed[c.ID] {
				return nil, fmt.Errorf("cell %q is closed but still in the notebook", c.ID)
			}
			continue
		}
		if i < s.Start || i >= s.Start+len(s.Cells) {
			// Reopened outside the splice (close+open without a move): copy before
			// writing, the *Cell is shared with the old list.
			cp := *c
			c = &cp
			out[i] = c
		}
		c.Language, c.Version, c.Text = o.Language, o.Version, o.Text
		c.raw, c.percent, c.SourceLine = nil, nil, 0
	}
	for id := range opened {
		if !seen[id] {
			return nil, fmt.Errorf("didOpen for cell %q, which is not in the notebook's cell array", id)
		}
	}
	return out, nil
}

// check reports a CellData that cannot be applied.
func (d CellData) check() error {
	if d.ID == "" {
		return fmt.Errorf("cell has an empty document URI")
	}
	if d.Kind != Markup && d.Kind != Code {
		return fmt.Errorf("cell kind %d, want 1 (markup) or 2 (code)", d.Kind)
	}
	if d.HasSummary && d.ExecutionOrder < 0 {
		return fmt.Errorf("executionOrder %d is negative", d.ExecutionOrder)
	}
	return nil
}

// setSummary copies d's execution summary into c; an absent summary (a running cell,
// cleared outputs) resets it to "never ran".
func (c *Cell) setSummary(d CellData) {
	if !d.HasSummary {
		c.ExecutionOrder, c.Success = 0, nil
		return
	}
	c.ExecutionOrder = d.ExecutionOrder
	c.Success = nil
	if d.Success != nil {
		ok := *d.Success
		c.Success = &ok
	}
}

func indexOf(cells []*Cell, id string) int {
	for i, c := range cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}
