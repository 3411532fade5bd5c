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
