package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Explicit matrix products in torch (`A @ B`, torch.matmul, torch.mm, A.mm(B), A.matmul(B))
// whose inner dimensions disagree: "mat1 and mat2 shapes cannot be multiplied (AxB and CxD)".
// The message names both shapes, so the transposition that makes the product defined is
// known: B == D transposes the second operand (A×B @ D×C), A == C the first (B×A @ C×D).
// A Linear layer's mismatch is repaired by its in_features (shape.go); this family acts
// only on a product written on the crash line, and verification proves the result runs.

func init() {
	register(family{name: "product", gen: productGen})
}

func productGen(in *Input) []Candidate {
	m := matmulRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	a, b, c, d := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
	var out []Candidate
	for _, p := range products(in) {
		left, right := p[0], p[1]
		if b == d {
			out = append(out, transposed(right, "second", fmt.Sprintf("%s is %dx%d and %s is %dx%d: the inner dimensions agree (%d) once %s is transposed", left.Text, a, b, right.Text, c, d, b, right.Text)))
		}
		if a == c {
			out = append(out, transposed(left, "first", fmt.Sprintf("%s is %dx%d and %s is %dx%d: the inner dimensions agree (%d) once %s is transposed", left.Text, a, b, right.Text, c, d, a, left.Text)))
		}
	}
	return out
}

// isProductLine reports whether the crash line holds an explicit matrix product: then a
// mat1/mat2 message is about it, not about a Linear layer.
func isProductLine(in *Input) bool { return len(products(in)) > 0 }

// products returns the operand pairs of the explicit 2-D matrix products on the crash line.
func products(in *Input) [][2]*analysis.Expr {
	var out [][2]*analysis.Expr
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return true }) {
		switch {
		case e.Kind == analysis.ExprBinOp && e.Name == "@" && len(e.Args) == 2:
			out = append(out, [2]*analysis.Expr{e.Args[0], e.Args[1]})
		case e.Kind == analysis.ExprCall && len(e.Args) == 2 && len(e.Keywords) == 0:
			if c, _ := e.Value.Chain(); c == "torch.matmul" || c == "torch.mm" {
				out = append(out, [2]*analysis.Expr{e.Args[0], e.Args[1]})
			}
		case e.Kind == analysis.ExprCall && len(e.Args) == 1 && len(e.Keywords) == 0 && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "mm" || e.Value.Name == "matmul"):
			if c, _ := e.Value.Chain(); c == "torch.mm" || c == "torch.matmul" {
				continue // the module function with one argument: not a method call
			}
			out = append(out, [2]*analysis.Expr{e.Value.Value, e.Args[0]})
		}
	}
	return out
}

// transposed is the candidate appending .T to operand e (parenthesized when it is an
// operation).
func transposed(e *analysis.Expr, which, keeps string) Candidate {
	text := e.Text
	if needsParens(e) {
		text = "(" + text + ")"
	}
	if e.Kind == analysis.ExprAttribute && e.Name == "T" && e.NameRange.Start.Character > 0 {
		// Transposed already: dropping the transposition is the repair. The dot and the T
		// go as two edits, so the intent check sees exactly the attribute T removed.
		r := e.NameRange
		dot := finding.Range{Start: finding.Position{Line: r.Start.Line, Character: r.Start.Character - 1}, End: r.Start}
		return Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Drop the transposition of the %s operand: %s", which, e.Value.Text), Edits: []finding.Edit{replaceAt(dot, ""), replaceAt(r, "")}},
			Keeps: keeps,
		}
	}
	return Candidate{
		Fix:   finding.Fix{Title: fmt.Sprintf("Transpose the %s operand: %s.T", which, text), Edits: []finding.Edit{replaceAt(e.Range, text+".T")}},
		Keeps: keeps,
	}
}
