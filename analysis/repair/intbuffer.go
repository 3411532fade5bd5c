package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// NaN (or a fraction) written into an array made with an integer dtype: buf =
// np.zeros(n, dtype=int) and then buf[:3] = np.nan ("cannot convert float NaN to
// integer"). The array is made with a float dtype where it is made, so it can hold what
// the cell writes into it; its values (the zeros) are the same.

func init() {
	register(family{name: "int-buffer", gen: intBufferGen})
}

func intBufferGen(in *Input) []Candidate {
	if in.exception() != "ValueError" || !strings.Contains(in.message(), "convert float NaN to integer") || in.Facts == nil {
		return nil
	}
	var out []Candidate
	for _, st := range in.Facts.Statements {
		if st.Range.Start.Line > in.crashLine() || st.Range.End.Line < in.crashLine() {
			continue
		}
		for _, t := range walkExprs([]*analysis.Statement{st}, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName
		}) {
			name := t.Value.Name
			if v, ok := in.value(name); !ok || v.Kind != facts.KindNDArray || !strings.HasPrefix(v.Dtype, "int") {
				continue
			}
			b, ok := in.assignedAbove(name)
			if !ok || b.value.Kind != analysis.ExprCall {
				continue
			}
			for _, k := range b.value.Keywords {
				if k.Name != "dtype" || k.Value == nil || !(k.Value.Text == "int" || strings.Contains(k.Value.Text, "int")) {
					continue
				}
				e := replaceAt(k.Value.Range, "float")
				e.Cell = b.cell
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Make %s with dtype=float where it is made (it is given NaN)", name), Edits: []finding.Edit{e}},
					Keeps: fmt.Sprintf("%s starts with the same values; as floats it can hold the NaN the cell writes", name),
				})
				return out
			}
		}
	}
	return out
}
