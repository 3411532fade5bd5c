package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A grid of subplots indexed as a row: fig, axes = plt.subplots(2, 2) gives a 2x2 array,
// so axes[i] is a row of Axes ("'numpy.ndarray' object has no attribute 'hist'"). The loop
// counts plots, so the grid is read flat: axes.flat[i].

func init() {
	register(family{name: "axes-grid", gen: axesGridGen})
}

func axesGridGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "AttributeError" || !strings.HasPrefix(msg, "'numpy.ndarray' object has no attribute") || in.Facts == nil {
		return nil
	}
	var out []Candidate
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Index != nil && e.Index.Kind != analysis.ExprTuple
	}) {
		v, ok := in.value(s.Value.Name)
		if !ok || v.Kind != facts.KindNDArray || len(v.Shape) < 2 {
			continue
		}
		p := s.Value.Range.End
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Index the %s grid flat, %s.flat[%s] (it has %d dimensions)", s.Value.Name, s.Value.Name, s.Index.Text, len(v.Shape)), Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: ".flat"}}},
			Keeps: fmt.Sprintf("one subplot per item, the grid of %s read row by row", s.Value.Name),
		})
	}
	return out
}

// The other way round: a row of subplots (plt.subplots(1, 3) gives a 1-D array) indexed
// as a grid, axes[0, i] ("too many indices for array: array is 1-dimensional, but 2 were
// indexed"). The facts say the array is 1-D; the index that is the literal 0 of the one
// row (or column) goes, the other stays: axes[i].

func init() {
	register(family{name: "axes-row", gen: axesRowGen})
}

func axesRowGen(in *Input) []Candidate {
	if in.exception() != "IndexError" || !strings.Contains(in.message(), "1-dimensional, but 2 were indexed") {
		return nil
	}
	var out []Candidate
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Index != nil && e.Index.Kind == analysis.ExprTuple && len(e.Index.Args) == 2
	}) {
		v, ok := in.value(s.Value.Name)
		if !ok || len(v.Shape) != 1 {
			continue
		}
		for i, a := range s.Index.Args {
			if n, ok := a.Const.(int64); a.Kind != analysis.ExprConst || !ok || n != 0 {
				continue
			}
			keep := s.Index.Args[1-i]
			text := s.Value.Text + "[" + keep.Text + "]"
			// Every such index of the array in the cell at once: the loop body reads
			// axes[0, i] on more lines than the one that raised first.
			var edits []finding.Edit
			for _, o := range walkExprs(in.Facts.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
				return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == s.Value.Name &&
					e.Index != nil && e.Index.Kind == analysis.ExprTuple && len(e.Index.Args) == 2 && e.Index.Args[i].Text == a.Text
			}) {
				edits = append(edits, replaceAt(o.Range, o.Value.Text+"["+o.Index.Args[1-i].Text+"]"))
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Index the one row of %s: %s (it is 1-D)", s.Value.Name, text), Edits: edits},
				Keeps: fmt.Sprintf("%s is one row (or column) of %d; position %s along it is the same item", s.Value.Name, v.Shape[0], keep.Text),
			})
			break
		}
	}
	return out
}
