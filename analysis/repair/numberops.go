package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Numbers that are still text, in plain Python: total + row["price"] where the price was
// read as "3" ("unsupported operand type(s) for +: 'int' and 'str'"), age > 18 on strings
// ("'>' not supported between instances of 'str' and 'int'"), int("3.5") ("invalid literal
// for int() with base 10: '3.5'"). The message says which side is the text and what the
// other side is; the operator on the crash line with those operands is found on the syntax
// tree, and the text side converted to the other side's type (then to float, when the text
// may hold a fraction). int() of a fraction's text goes through float() first, so the
// result is still the int the cell asked for.

func init() {
	register(family{name: "number-operand", gen: numberOperandGen})
}

func numberOperandGen(in *Input) []Candidate {
	msg := in.message()
	switch in.exception() {
	case "TypeError":
		op, left, right, ok := operandTypes(msg)
		if !ok {
			return nil
		}
		return convertOperand(in, op, left, right)
	case "ValueError":
		const lit = "invalid literal for int() with base 10: "
		if !strings.HasPrefix(msg, lit) {
			return nil
		}
		q := strings.Trim(strings.TrimPrefix(msg, lit), `'"`)
		if _, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err != nil {
			return nil
		}
		return intOfFloat(in)
	}
	return nil
}

// operandTypes reads the operator and the operands' types off a TypeError message.
func operandTypes(msg string) (op, left, right string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(msg, "unsupported operand type(s) for "):
		rest = strings.TrimPrefix(msg, "unsupported operand type(s) for ")
		op, rest, ok = strings.Cut(rest, ": ")
	case strings.Contains(msg, " not supported between instances of "):
		op, rest, ok = strings.Cut(msg, " not supported between instances of ")
		op = strings.Trim(op, "'")
	}
	if !ok {
		return "", "", "", false
	}
	left, right, ok = strings.Cut(rest, " and ")
	left, right = strings.Trim(left, "'"), strings.Trim(right, "'")
	return op, left, right, ok && op != ""
}

// convertOperand converts the text side of each op on the crash line to the number type
// of the other side.
func convertOperand(in *Input, op, left, right string) []Candidate {
	number := func(t string) bool { return t == "int" || t == "float" }
	var side int
	var to string
	switch {
	case left == "str" && number(right):
		side, to = 0, right
	case right == "str" && number(left):
		side, to = 1, left
	default:
		return nil
	}
	convs := []string{to}
	if to == "int" {
		convs = append(convs, "float")
	}
	var operands []*analysis.Expr
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return (e.Kind == analysis.ExprBinOp || e.Kind == analysis.ExprCompare) && e.Name == op && len(e.Args) == 2
	}) {
		operands = append(operands, e.Args[side])
	}
	// total += row["price"]: the augmented assignment's target is the left operand.
	if chain := enclosing(in.Facts.Statements, in.crashLine()); len(chain) > 0 {
		if st := chain[len(chain)-1]; st.Kind == analysis.StmtAugAssign && st.Op == op && len(st.Targets) == 1 && st.Value != nil {
			operands = append(operands, []*analysis.Expr{st.Targets[0], st.Value}[side])
		}
	}
	var out []Candidate
	for _, e := range operands {
		if e == nil || e.Kind == analysis.ExprConst {
			continue
		}
		for _, c := range convs {
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Convert %s to %s before %s (it holds a number as text)", e.Text, c, op), Edits: []finding.Edit{replaceAt(e.Range, c+"("+e.Text+")")}},
				Keeps: fmt.Sprintf("the same value of %s, read as the number its text holds", e.Text),
			})
		}
	}
	return out
}

// intOfFloat turns int(x) on the crash line into int(float(x)): the text is a fraction.
func intOfFloat(in *Input) []Candidate {
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == "int" && len(e.Args) == 1 && len(e.Keywords) == 0
	}) {
		a := e.Args[0]
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Parse %s as a float before int() (the text is a fraction)", a.Text), Edits: []finding.Edit{replaceAt(a.Range, "float("+a.Text+")")}},
			Keeps: "the same integers int() was asked for, the fraction's text parsed first",
		})
	}
	return out
}
