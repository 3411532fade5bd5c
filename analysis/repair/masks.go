package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Row filters written with Python's boolean words: df[df.a > 1 and df.b > 1] asks a Series
// for one truth value ("The truth value of a Series is ambiguous"). Element-wise, pandas
// and NumPy spell and, or, not as &, |, ~, each comparison in parentheses. Written with &
// but without the parentheses, df.a > 1 & df.b > 1 is the chained comparison
// df.a > (1 & df.b) > 1, which fails the same way: the comparisons are parenthesised.

func init() {
	register(family{name: "element-wise", gen: elementWiseGen})
}

func elementWiseGen(in *Input) []Candidate {
	if !ambiguousTruth(in) {
		return nil
	}
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return (e.Kind == analysis.ExprBoolOp || e.Kind == analysis.ExprCompare || (e.Kind == analysis.ExprUnaryOp && e.Name == "not")) && e.Range.Start.Line == e.Range.End.Line
	}) {
		text, ok := elementWise(in.Text, e)
		if !ok {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Combine the conditions element-wise: %s", text), Edits: []finding.Edit{replaceAt(e.Range, text)}},
			Keeps: "the same conditions, row by row, as the filter means them",
		})
	}
	return out
}

// elementWise rewrites e with &, | and ~, each operand in parentheses.
func elementWise(text string, e *analysis.Expr) (string, bool) {
	paren := func(x *analysis.Expr) string {
		if x.Kind == analysis.ExprCompare || x.Kind == analysis.ExprBoolOp || x.Kind == analysis.ExprBinOp {
			return "(" + x.Text + ")"
		}
		return x.Text
	}
	switch e.Kind {
	case analysis.ExprBoolOp:
		op := map[string]string{"and": " & ", "or": " | "}[e.Name]
		if op == "" {
			return "", false
		}
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			if a == nil {
				return "", false
			}
			if a.Kind == analysis.ExprUnaryOp && a.Name == "not" && len(a.Args) == 1 {
				parts[i] = "~" + "(" + a.Args[0].Text + ")"
				continue
			}
			parts[i] = paren(a)
		}
		return strings.Join(parts, op), true
	case analysis.ExprCompare:
		// a > 1 & b > 1: three operands, the middle one an & or | of two values.
		if len(e.Args) != 3 || e.Args[1] == nil || e.Args[1].Kind != analysis.ExprBinOp || (e.Args[1].Name != "&" && e.Args[1].Name != "|") || len(e.Args[1].Args) != 2 {
			return "", false
		}
		mid := e.Args[1]
		op1 := strings.TrimSpace(textOf(text, finding.Range{Start: e.Args[0].Range.End, End: mid.Range.Start}))
		op2 := strings.TrimSpace(textOf(text, finding.Range{Start: mid.Range.End, End: e.Args[2].Range.Start}))
		if op1 == "" || op2 == "" || strings.ContainsAny(op1+op2, "()") {
			return "", false
		}
		return fmt.Sprintf("(%s %s %s) %s (%s %s %s)", e.Args[0].Text, op1, mid.Args[0].Text, mid.Name, mid.Args[1].Text, op2, e.Args[2].Text), true
	}
	return "", false
}

// ambiguousTruth reports whether the crash is a Series or array asked for one truth value
// ("The truth value of a Series is ambiguous"), with the cell's syntax tree at hand.
func ambiguousTruth(in *Input) bool {
	msg := in.message()
	return in.exception() == "ValueError" && strings.Contains(msg, "truth value of a") && strings.Contains(msg, "is ambiguous") && in.Facts != nil
}
