package judge

import (
	"sort"

	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// AppliedFix is one verified fix applied to a report's notebook (Report.ApplyVerified).
type AppliedFix struct {
	// Cell is the crashing cell (0-based).
	Cell    int
	Finding finding.Finding
	Fix     finding.Fix
	// Edited are the cells whose text changed, in notebook order (an earlier cell's when the
	// crash was caused there).
	Edited []int
}

// ApplyVerified applies, to r.Source, the best verified fix of the first crash finding of
// each crashing cell that has one (`premortem fix`). A fix whose edits touch a cell an
// earlier fix already changed is not applied (its ranges refer to the old text): the cell
// is reported unfixed, as is every crashing cell without a verified fix.
func (r *Report) ApplyVerified() (applied []AppliedFix, unfixed []int) {
	nb := r.Source
	changed := map[string]bool{}
	for _, v := range r.Cells {
		if v.Verdict != VerdictCrash {
			continue
		}
		f, fix := topVerified(v)
		if fix == nil {
			unfixed = append(unfixed, v.Index)
			continue
		}
		texts := map[string]string{}
		for _, c := range nb.Cells {
			texts[c.ID] = c.Text
		}
		after, err := repair.ApplyFix(texts, v.CellID, *fix)
		conflict := err != nil
		for id := range after {
			conflict = conflict || changed[id]
		}
		if conflict {
			unfixed = append(unfixed, v.Index)
			continue
		}
		a := AppliedFix{Cell: v.Index, Finding: *f, Fix: *fix}
		for id, t := range after {
			changed[id] = true
			nb.Cells[nb.Index(id)] = withText(nb.Cell(id), t)
			a.Edited = append(a.Edited, nb.Index(id))
		}
		sort.Ints(a.Edited)
		applied = append(applied, a)
	}
	return applied, unfixed
}

// topVerified returns the first crash finding with a verified fix, and that fix.
func topVerified(v *CellVerdict) (*finding.Finding, *finding.Fix) {
	for i := range v.Findings {
		f := &v.Findings[i]
		if !predictsCrash(*f) {
			continue
		}
		for j := range f.Fixes {
			if f.Fixes[j].Verified {
				return f, &f.Fixes[j]
			}
		}
	}
	return nil, nil
}

// withText returns a copy of c with new text (cells are shared with the report's snapshot).
func withText(c *notebook.Cell, text string) *notebook.Cell {
	cp := *c
	cp.Text = text
	return &cp
}
