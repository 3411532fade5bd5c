package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A float where an integer is needed: vals[len(vals) / 2], range(n / 2), nn.Linear(16,
// hidden) with hidden = 16 / 2. Python's / always gives a float; the integer the call
// needs is the floor division //, so each / on the crash line becomes // (at a binding
// site too: the value was computed with / where it was bound). Where no / is to blame (a
// mean used as a count), the float argument of range() or the float index is wrapped in
// int().

func init() {
	register(family{name: "integer-operand", gen: integerOperandGen})
}

// needsInteger reports whether msg says a float was given where an integer was needed.
func needsInteger(msg string) bool {
	for _, s := range []string{
		"cannot be interpreted as an integer",
		"indices must be integers",
		"must be integers or None",
		"tuple of ints",
		"integer argument expected, got float",
		"only integers, slices",
		"expected an integer",
		"an integer is required",
		"'float' object is not iterable",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func integerOperandGen(in *Input) []Candidate {
	if e := in.exception(); (e != "TypeError" && e != "IndexError") || !needsInteger(in.message()) || in.Facts == nil {
		return nil
	}
	l := in.crashLine()
	var out []Candidate
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprBinOp && e.Name == "/" }) {
		r, ok := operatorRange(in.Text, e, "/")
		if !ok {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Divide with // in %s (an integer is needed)", e.Text), Edits: []finding.Edit{replaceAt(r, "//")}},
			Keeps: "the same quotient, rounded down to the integer the call needs",
		})
	}
	if len(out) > 0 {
		return out
	}
	// No division: wrap what must be an integer.
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool {
		return (e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == "range") || e.Kind == analysis.ExprSubscript
	}) {
		var args []*analysis.Expr
		if e.Kind == analysis.ExprCall {
			args = e.Args
		} else if e.Index != nil && e.Index.Kind != analysis.ExprSlice && e.Index.Kind != analysis.ExprConst && e.Index.Kind != analysis.ExprTuple {
			args = []*analysis.Expr{e.Index}
		}
		for _, a := range args {
			if a == nil || a.Kind == analysis.ExprConst || a.Starred {
				continue
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Convert %s to int (an integer is needed)", a.Text), Edits: []finding.Edit{replaceAt(a.Range, "int("+a.Text+")")}},
				Keeps: fmt.Sprintf("the same value of %s, as the integer the call needs", a.Text),
			})
		}
	}
	return out
}
