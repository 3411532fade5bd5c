package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// An empty selection because a numeric column was compared with a number written as text:
// df[df['month'] == '8'] keeps no row (8 == '8' is False in pandas), and the fit or split
// that follows fails on zero samples. The literal becomes the number it spells, where the
// comparison is written (this cell, or the executed cell that made the selection).

func init() {
	register(family{name: "empty-selection", gen: emptySelectionGen})
}

var (
	zeroSamplesRE = regexp.MustCompile(`n_samples=0\b|Found array with 0 sample\(s\)`)
	textCompareRE = regexp.MustCompile(`\b([A-Za-z_][\w.]*)\[\s*(['"])([^'"]+)['"]\s*\]\s*(==|!=|>=|<=|>|<)\s*(['"])(-?\d+(?:\.\d+)?)['"]`)
	numericDtypes = regexp.MustCompile(`^(u?int|float|Int|UInt|Float)\d*$`)
)

func emptySelectionGen(in *Input) []Candidate {
	if !zeroSamplesRE.MatchString(in.message()) {
		return nil
	}
	for _, s := range in.editSites() {
		var edits []finding.Edit
		var cols []string
		for l, line := range lines(s.Text) {
			if s.upto >= 0 && l > s.upto {
				break
			}
			code := stripComment(line)
			for _, m := range textCompareRE.FindAllStringSubmatchIndex(code, -1) {
				frame, col := code[m[2]:m[3]], code[m[6]:m[7]]
				v, ok := in.value(frame)
				if !ok || !numericColumn(v.Columns, col) {
					continue
				}
				r := finding.Range{Start: finding.Position{Line: l, Character: analysis.UTF16Len(line[:m[10]])}, End: finding.Position{Line: l, Character: analysis.UTF16Len(line[:m[13]+1])}}
				edits = append(edits, finding.Edit{Cell: s.ID, Range: r, NewText: code[m[12]:m[13]]})
				cols = append(cols, frame+"['"+col+"']")
			}
		}
		if len(edits) == 0 {
			continue
		}
		title := "Compare with the number, not its text"
		if s.ID != "" {
			title += fmt.Sprintf(" in cell %d (run it again)", s.Index+1)
		}
		return []Candidate{{
			Fix:   finding.Fix{Title: title, Edits: edits},
			Keeps: fmt.Sprintf("%s holds numbers, so comparing it with text matches no row and the selection is empty; the same number unquoted selects the rows meant", strings.Join(cols, ", ")),
		}}
	}
	return nil
}

// numericColumn reports whether the columns list col with a numeric dtype.
func numericColumn(cs []facts.Column, col string) bool {
	for _, c := range cs {
		if s, ok := c.Name.(string); ok && s == col {
			return numericDtypes.MatchString(c.Dtype)
		}
	}
	return false
}
