package repair

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Statement helpers for operators that edit around the crash line on the syntax tree: the
// statements that enclose it (the loop that indexes, the function that returns nothing),
// the token between two operands, the line after a block.

// enclosing returns the statements of ss whose range covers line l, outermost first (the
// def, then the for inside it, then the statement on l).
func enclosing(ss []*analysis.Statement, l int) []*analysis.Statement {
	var out []*analysis.Statement
	for {
		var next *analysis.Statement
		for _, s := range ss {
			if s != nil && s.Range.Start.Line <= l && s.Range.End.Line >= l {
				next = s
				break
			}
		}
		if next == nil {
			return out
		}
		out = append(out, next)
		ss = next.Body
	}
}

// innermostDef returns the innermost def of chain (as enclosing returns it), and whether
// a def encloses another one there (its names may be the outer function's, not globals).
func innermostDef(chain []*analysis.Statement) (def *analysis.Statement, nested bool) {
	for _, s := range chain {
		if s.Kind == analysis.StmtDef {
			if def != nil {
				nested = true
			}
			def = s
		}
	}
	return def, nested
}

// walkStmts calls visit on every statement of ss, nested bodies included; it does not
// enter a def or class body when skipDefs is true.
func walkStmts(ss []*analysis.Statement, skipDefs bool, visit func(*analysis.Statement)) {
	for _, s := range ss {
		if s == nil {
			continue
		}
		visit(s)
		if skipDefs && (s.Kind == analysis.StmtDef || s.Kind == analysis.StmtClass) {
			continue
		}
		walkStmts(s.Body, skipDefs, visit)
	}
}

// operatorRange returns the range of the operator token op between the two operands of a
// binary or comparison expression on one line; false when they span lines or the gap
// holds something else.
func operatorRange(text string, e *analysis.Expr, op string) (finding.Range, bool) {
	if len(e.Args) < 2 || e.Args[0] == nil || e.Args[1] == nil {
		return finding.Range{}, false
	}
	from, to := e.Args[0].Range.End, e.Args[1].Range.Start
	if from.Line != to.Line {
		return finding.Range{}, false
	}
	gap := textOf(text, finding.Range{Start: from, End: to})
	i := strings.Index(gap, op)
	if i < 0 || strings.Trim(gap[:i]+gap[i+len(op):], " \t()") != "" {
		return finding.Range{}, false
	}
	start := finding.Position{Line: from.Line, Character: from.Character + analysis.UTF16Len(gap[:i])}
	return finding.Range{Start: start, End: finding.Position{Line: from.Line, Character: start.Character + len(op)}}, true
}

// bodyIndent returns the indentation of the first line of def's body, and that line.
func bodyIndent(text string, def *analysis.Statement) (string, int, bool) {
	if def == nil || len(def.Body) == 0 || def.Body[0] == nil {
		return "", 0, false
	}
	l := def.Body[0].Range.Start.Line
	if l == def.Range.Start.Line {
		return "", 0, false // def f(): return x on one line
	}
	return indentOf(lineAt(text, l)), l, true
}

// appendAfter is an edit adding code as a whole line after line l, indented with ind.
func appendAfter(text string, l int, ind, code string) finding.Edit {
	p := finding.Position{Line: l, Character: analysis.UTF16Len(lineAt(text, l))}
	return finding.Edit{Range: finding.Range{Start: p, End: p}, NewText: "\n" + ind + code}
}
