package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A container built with a fixed size and filled by a loop over data that has more items:
// fig, ax = plt.subplots(1, 3), then ax[index] for every column of a frame with four. The
// index is the loop's counter, over enumerate(E) or range(len(E)); the literal size in the
// statement that built the container (the one the message names) becomes len(E), so the
// container follows the data instead of a number.

func init() {
	register(family{name: "loop-size", gen: loopSizeGen})
}

func loopSizeGen(in *Input) []Candidate {
	m := indexOOBRE.FindStringSubmatch(in.message())
	if m == nil || m[2] != "0" || in.Facts == nil {
		return nil
	}
	size := atoi(m[3])
	l := in.crashLine()
	var out []Candidate
	for _, sub := range in.exprsOnLine(l, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Index != nil && e.Index.Kind == analysis.ExprName
	}) {
		loop := enclosingFor(in.Facts.Statements, l, sub.Index.Name)
		if loop == nil {
			continue
		}
		data := loopData(loop, sub.Index.Name)
		if data == nil {
			continue
		}
		lit := sizeLiteral(in.Facts.Statements, sub.Value.Name, loop.Range.Start.Line, size)
		if lit == nil {
			continue
		}
		n := "len(" + data.Text + ")"
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Size %s by the data the loop goes over (%s instead of %d)", sub.Value.Name, n, size), Edits: []finding.Edit{replaceAt(lit.Range, n)}},
			Keeps: fmt.Sprintf("%s gets one place for each item of %s, which the loop indexes it by", sub.Value.Name, data.Text),
		})
	}
	return out
}

// enclosingFor returns the innermost for statement around line l whose target binds name.
func enclosingFor(ss []*analysis.Statement, l int, name string) *analysis.Statement {
	var found *analysis.Statement
	for _, st := range ss {
		if st == nil || st.Range.Start.Line > l || st.Range.End.Line < l {
			continue
		}
		if st.Kind == analysis.StmtFor && len(st.Targets) > 0 && binds(st.Targets[0], name) {
			found = st
		}
		if inner := enclosingFor(st.Body, l, name); inner != nil {
			found = inner
		}
	}
	return found
}

func binds(t *analysis.Expr, name string) bool {
	if t == nil {
		return false
	}
	if t.Kind == analysis.ExprName {
		return t.Name == name
	}
	if t.Kind == analysis.ExprTuple || t.Kind == analysis.ExprList {
		for _, a := range t.Args {
			if binds(a, name) {
				return true
			}
		}
	}
	return false
}

// loopData returns E of `for i, x in enumerate(E)` or `for i in range(len(E))`, when i is
// the counter.
func loopData(loop *analysis.Statement, counter string) *analysis.Expr {
	it := loop.Value
	if it == nil || it.Kind != analysis.ExprCall || it.Value == nil || len(it.Args) != 1 {
		return nil
	}
	callee, _ := it.Value.Chain()
	t := loop.Targets[0]
	switch callee {
	case "enumerate":
		if (t.Kind == analysis.ExprTuple || t.Kind == analysis.ExprList) && len(t.Args) == 2 && t.Args[0].Kind == analysis.ExprName && t.Args[0].Name == counter {
			return it.Args[0]
		}
	case "range":
		a := it.Args[0]
		if t.Kind == analysis.ExprName && a.Kind == analysis.ExprCall && a.Value != nil && len(a.Args) == 1 {
			if c, _ := a.Value.Chain(); c == "len" {
				return a.Args[0]
			}
		}
	}
	return nil
}

// sizeLiteral finds, among the top-level statements before line before, the last one that
// binds name from a call, and in that call the one integer literal equal to size.
func sizeLiteral(ss []*analysis.Statement, name string, before, size int) *analysis.Expr {
	var lit *analysis.Expr
	for _, st := range ss {
		if st == nil || st.Range.Start.Line >= before || st.Kind != analysis.StmtAssign || st.Value == nil || st.Value.Kind != analysis.ExprCall {
			continue
		}
		bound := false
		for _, t := range st.Targets {
			bound = bound || binds(t, name)
		}
		if !bound {
			continue
		}
		lit = nil
		count := 0
		args := append([]*analysis.Expr(nil), st.Value.Args...)
		for _, k := range st.Value.Keywords {
			args = append(args, k.Value)
		}
		for _, a := range args {
			if v, ok := a.Const.(int64); ok && a.Kind == analysis.ExprConst && int(v) == size {
				lit = a
				count++
			}
		}
		if count != 1 {
			lit = nil
		}
	}
	return lit
}
