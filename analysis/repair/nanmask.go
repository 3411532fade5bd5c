package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A row filter whose mask holds missing values: df[df.name.str.contains("Mr")] on a column
// with NaN gives NaN for those rows, and pandas refuses to mask with it ("Cannot mask with
// non-boolean array containing NA / NaN values"). A row with no value does not contain the
// text, so the string test gets na=False; a mask built otherwise is filled with False.
// Either way the rows with a value are filtered exactly as written.

func init() {
	register(family{name: "missing-in-mask", gen: nanMaskGen})
}

// naTests are the .str methods that answer True or False per value and take na=.
var naTests = map[string]bool{"contains": true, "startswith": true, "endswith": true, "match": true, "fullmatch": true}

func nanMaskGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "ValueError" || !strings.Contains(msg, "Cannot mask with non-boolean array containing NA / NaN values") || in.Facts == nil {
		return nil
	}
	var out []Candidate
	tests := in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		if e.Kind != analysis.ExprCall || e.Value == nil || e.Value.Kind != analysis.ExprAttribute || !naTests[e.Value.Name] {
			return false
		}
		if o := e.Value.Value; o == nil || o.Kind != analysis.ExprAttribute || o.Name != "str" {
			return false
		}
		for _, k := range e.Keywords {
			if k.Name == "na" || k.Name == "" {
				return false
			}
		}
		return e.Range.End.Character > 0
	})
	for _, e := range tests {
		p := finding.Position{Line: e.Range.End.Line, Character: e.Range.End.Character - 1}
		sep := ", "
		if len(e.Args) == 0 {
			sep = ""
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Treat missing values as no match: %s(..., na=False)", e.Value.Text), Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: sep + "na=False"}}},
			Keeps: "the same test on every value that is there; a row without one is left out",
		})
	}
	if len(tests) > 0 {
		return out
	}
	// Any other mask: the subscript's index, when it is a plain Series expression.
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Index != nil && e.Index.Kind != analysis.ExprSlice && e.Index.Kind != analysis.ExprConst && e.Index.Kind != analysis.ExprList && e.Index.Kind != analysis.ExprTuple
	}) {
		idx := s.Index
		if (idx.Kind == analysis.ExprName || idx.Kind == analysis.ExprAttribute) && !in.maybeSeries(idx) {
			continue
		}
		text := idx.Text
		if needsParens(idx) {
			text = "(" + text + ")"
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Treat missing values in the mask as False: %s.fillna(False)", text), Edits: []finding.Edit{replaceAt(idx.Range, text+".fillna(False)")}},
			Keeps: fmt.Sprintf("the same filter by %s; a row where it is missing is left out", idx.Text),
		})
	}
	return out
}
