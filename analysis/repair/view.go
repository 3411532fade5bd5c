package repair

import (
	"regexp"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A view of a tensor that is not contiguous in memory (after .T, .transpose, .permute):
// "view size is not compatible with input tensor's size and stride ... Use .reshape(...)
// instead." .reshape gives the same shape (a view where the strides allow one, a copy
// otherwise), so the .view calls of the crash line become .reshape with the same arguments.
// The rules make this repair when they track the tensor; this family makes it from the
// message alone, for a tensor the cell itself transposed.

func init() {
	register(family{name: "view-reshape", gen: viewGen})
}

var viewStrideRE = regexp.MustCompile(`view size is not compatible with input tensor's size and stride`)

func viewGen(in *Input) []Candidate {
	if !viewStrideRE.MatchString(in.message()) {
		return nil
	}
	var edits []finding.Edit
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "view" && e.Value.Value != nil && len(e.Args)+len(e.Keywords) > 0
	}) {
		edits = append(edits, replaceAt(e.Value.NameRange, "reshape"))
	}
	if len(edits) == 0 {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: "Use .reshape (the tensor is not contiguous, so .view cannot)", Edits: edits},
		Keeps: "the same shape from the same values; .reshape copies only when the memory layout does not allow a view",
	}}
}
