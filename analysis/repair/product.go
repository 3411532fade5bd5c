package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Explicit matrix products (`A @ B`, torch.matmul, torch.mm, A.mm(B), A.matmul(B), np.dot,
// np.matmul, A.dot(B)) whose inner dimensions disagree: torch's "mat1 and mat2 shapes cannot
// be multiplied (AxB and CxD)", NumPy's "shapes (A,B) and (C,D) not aligned" (np.dot) and
// "matmul: Input operand 1 has a mismatch in its core dimension 0" (@, np.matmul, whose
// message names no shapes: the operands' runtime shapes stand in). Both shapes known, the
// transposition that makes the product defined is known: B == D transposes the second
// operand (A×B @ D×C), A == C the first (B×A @ C×D); a 1-D second operand (C,) is a
// vector, so only the first can turn.
// A Linear layer's mismatch is repaired by its in_features (shape.go); this family acts
// only on a product written on the crash line, and verification proves the result runs.

func init() {
	register(family{name: "product", gen: productGen})
}

// alignedRE is np.dot's message; the second shape may be a vector's, (3,).
var alignedRE = regexp.MustCompile(`shapes \((\d+),\s*(\d+)\) and \((\d+),\s*(\d*)\) not aligned`)

func productGen(in *Input) []Candidate {
	msg := in.message()
	known := false // the message gave the shapes
	var a, b, c, d int
	if m := matmulRE.FindStringSubmatch(msg); m != nil {
		a, b, c, d, known = atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), true
	} else if m := alignedRE.FindStringSubmatch(msg); m != nil {
		a, b, c, d, known = atoi(m[1]), atoi(m[2]), atoi(m[3]), -1, true
		if m[4] != "" {
			d = atoi(m[4])
		}
	} else if !strings.HasPrefix(msg, "matmul: Input operand") || !strings.Contains(msg, "core dimension") {
		return nil
	}
	var out []Candidate
	for _, p := range products(in) {
		left, right := p[0], p[1]
		if !known {
			ls, rs := in.exprShape(left), in.exprShape(right)
			if ls == nil || rs == nil {
				// Shapes nobody knows: either operand may be the one to turn; the
				// shadow run decides.
				out = append(out, transposed(left, "first", "the same matrices; the inner dimensions of a product must agree"),
					transposed(right, "second", "the same matrices; the inner dimensions of a product must agree"))
				continue
			}
			if len(ls) != 2 || (len(rs) != 1 && len(rs) != 2) {
				continue
			}
			a, b, c, d = ls[0], ls[1], rs[0], -1
			if len(rs) == 2 {
				d = rs[1]
			}
		}
		if d < 0 {
			// A vector second operand: only the matrix can turn.
			if a == c && b != c {
				out = append(out, transposed(left, "first", fmt.Sprintf("%s is %dx%d and the vector %s has %d values: the dimensions agree once %s is transposed", left.Text, a, b, right.Text, c, left.Text)))
			}
			continue
		}
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
			if c, _ := e.Value.Chain(); productFuncs[c] {
				out = append(out, [2]*analysis.Expr{e.Args[0], e.Args[1]})
			}
		case e.Kind == analysis.ExprCall && len(e.Args) == 1 && len(e.Keywords) == 0 && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "mm" || e.Value.Name == "matmul" || e.Value.Name == "dot"):
			if c, _ := e.Value.Chain(); productFuncs[c] {
				continue // the module function with one argument: not a method call
			}
			out = append(out, [2]*analysis.Expr{e.Value.Value, e.Args[0]})
		}
	}
	return out
}

// productFuncs are the module functions of a matrix product of two arguments.
var productFuncs = map[string]bool{"torch.matmul": true, "torch.mm": true, "np.dot": true, "np.matmul": true, "numpy.dot": true, "numpy.matmul": true}

// exprShape is the runtime shape of e when e is a name (or attribute chain) the facts
// know; nil otherwise.
func (in *Input) exprShape(e *analysis.Expr) []int {
	if e == nil {
		return nil
	}
	name, ok := e.Chain()
	if !ok {
		return nil
	}
	v, ok := in.value(name)
	if !ok {
		return nil
	}
	return v.Shape
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
