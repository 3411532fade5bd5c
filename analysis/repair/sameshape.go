package repair

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A loss handed an input and a target whose shapes differ by one axis of size 1 ((N, 1)
// against (N,)): the target gets the input's axis (.unsqueeze(1)), or the input loses its
// own (.squeeze(1)). The message gives both shapes; the loss call on the crash line gives
// the operands, input first as torch's losses take them. The values are the same.

func init() {
	register(family{name: "same-shape", gen: sameShapeGen})
}

var targetSizeRE = regexp.MustCompile(`target size \(torch\.Size\(\[([\d, ]*)\]\)\) that is different to the input size \(torch\.Size\(\[([\d, ]*)\]\)\)`)

func sameShapeGen(in *Input) []Candidate {
	m := targetSizeRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	target, input := splitInts(m[1]), splitInts(m[2])
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && len(e.Args) >= 2 }) {
		inp, tgt := e.Args[0], e.Args[1]
		if inp.Starred || tgt.Starred {
			continue
		}
		add := func(x *analysis.Expr, method, why string) {
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Give the loss matching shapes: %s.%s(1)", x.Text, method), Edits: []finding.Edit{replaceAt(x.Range, wrapOperand(x)+"."+method+"(1)")}},
				Keeps: why,
			})
		}
		switch {
		case len(input) == len(target)+1 && len(input) >= 2 && input[1] == 1 && slices.Equal(append([]int{input[0]}, input[2:]...), target):
			add(tgt, "unsqueeze", fmt.Sprintf("the target takes the input's shape %v; its values are unchanged", input))
			add(inp, "squeeze", fmt.Sprintf("the input takes the target's shape %v; its values are unchanged", target))
		case len(target) == len(input)+1 && len(target) >= 2 && target[1] == 1 && slices.Equal(append([]int{target[0]}, target[2:]...), input):
			add(tgt, "squeeze", fmt.Sprintf("the target takes the input's shape %v; its values are unchanged", input))
			add(inp, "unsqueeze", fmt.Sprintf("the input takes the target's shape %v; its values are unchanged", target))
		}
		if len(out) > 0 {
			return out
		}
	}
	return out
}

// wrapOperand parenthesises an operand that a method call would otherwise bind into.
func wrapOperand(x *analysis.Expr) string {
	switch x.Kind {
	case analysis.ExprName, analysis.ExprAttribute, analysis.ExprSubscript, analysis.ExprCall:
		return x.Text
	}
	return "(" + x.Text + ")"
}
