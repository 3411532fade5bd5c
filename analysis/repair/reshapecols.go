package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Rows reshaped with columns that are not part of them: the pixels of an image frame
// reshaped with its label (785 values per row into 28 x 28), a sequence frame with an id
// column. The reshape's sizes after the first, multiplied, are what one row should hold;
// the frame the reshaped data comes from (train in train.values.reshape(-1, 28, 28),
// np.array(train).reshape(...), torch.tensor(train.values).view(...)) has one to three
// columns more. Those columns are left out where the frame is read: first the columns
// whose name is not like the others' (label among pixel0...pixel783), else the first or
// the last ones. The frame itself keeps them, for the labels the next line takes.

func init() {
	register(family{name: "reshape-columns", gen: reshapeColumnsGen})
}

// maxExtraColumns is the most columns a row may hold besides what the reshape wants.
const maxExtraColumns = 3

func reshapeColumnsGen(in *Input) []Candidate {
	switch in.exception() {
	case "ValueError", "RuntimeError":
	default:
		return nil
	}
	if _, ok := elementCount(in.message()); !ok {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute &&
			(e.Value.Name == "reshape" || e.Value.Name == "view")
	}) {
		row, ok := rowSize(c)
		if !ok {
			continue
		}
		for _, f := range walkExpr(c.Value.Value, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName }) {
			v, ok := in.value(f.Name)
			if !ok || v.Kind != facts.KindDataFrame || len(v.Shape) != 2 || len(v.Columns) != v.Shape[1] {
				continue
			}
			extra := v.Shape[1] - row
			if extra < 1 || extra > maxExtraColumns {
				continue
			}
			for _, drop := range extraColumns(v.Columns, extra) {
				code := f.Name + ".drop(columns=[" + strings.Join(drop, ", ") + "])"
				out = append(out, Candidate{
					Fix: finding.Fix{Title: fmt.Sprintf("Reshape the rows of %s without %s", f.Name, strings.Join(drop, ", ")),
						Edits: []finding.Edit{replaceAt(f.Range, code)}},
					Keeps: fmt.Sprintf("each row of %s holds %d values besides %s, as many as the reshape's sizes need; %s keeps its columns", f.Name, row, strings.Join(drop, ", "), f.Name),
				})
			}
		}
	}
	return out
}

// rowSize multiplies the literal sizes of a reshape or view after its first (the rows):
// what one row should hold. False when a size is no literal, or -1 stands among them.
func rowSize(c *analysis.Expr) (int, bool) {
	sizes := c.Args
	if len(sizes) == 1 && (sizes[0].Kind == analysis.ExprTuple || sizes[0].Kind == analysis.ExprList) {
		sizes = sizes[0].Args
	}
	if len(sizes) < 2 {
		return 0, false
	}
	p := 1
	for _, s := range sizes[1:] {
		n, ok := s.Const.(int64)
		if s.Kind != analysis.ExprConst || !ok || n < 1 {
			return 0, false
		}
		p *= int(n)
	}
	return p, true
}

// extraColumns returns the sets of k column labels (as Python literals) to try leaving
// out: the columns whose name's stem (without digits) no other column shares, when there
// are k of them, then the first k and the last k.
func extraColumns(cols []facts.Column, k int) [][]string {
	lit := func(c facts.Column) string {
		if s, ok := c.Name.(string); ok {
			return strconv.Quote(s)
		}
		return fmt.Sprint(c.Name)
	}
	stems := map[string]int{}
	for _, c := range cols {
		stems[strings.TrimRight(fmt.Sprint(c.Name), "0123456789_")]++
	}
	var odd, first, last []string
	for i, c := range cols {
		if stems[strings.TrimRight(fmt.Sprint(c.Name), "0123456789_")] == 1 {
			odd = append(odd, lit(c))
		}
		if i < k {
			first = append(first, lit(c))
		}
		if i >= len(cols)-k {
			last = append(last, lit(c))
		}
	}
	var out [][]string
	seen := map[string]bool{}
	for _, s := range [][]string{odd, first, last} {
		key := strings.Join(s, ",")
		if len(s) == k && !seen[key] {
			seen[key] = true
			out = append(out, s)
		}
	}
	return out
}

// walkExpr returns e and the expressions inside it that keep accepts, outermost first.
func walkExpr(e *analysis.Expr, keep func(*analysis.Expr) bool) []*analysis.Expr {
	return walkExprs([]*analysis.Statement{{Value: e, Range: e.Range}}, func(finding.Range) bool { return true }, keep)
}
