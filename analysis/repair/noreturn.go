package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A helper that forgets to return: def clean(df): df["x"] = ...; then df = clean(df) holds
// None ("'NoneType' object is not subscriptable"). The functions are those the crash line
// calls and those whose result a name on the crash line was bound to above it; one defined
// in the cell or an executed cell, whose body returns no value, gets a return at its end
// of what it built (the names its body binds or changes, the last first) or of its first
// parameter. The edit goes to the cell that defines the function.

func init() {
	register(family{name: "missing-return", gen: missingReturnGen})
}

// maxReturnGuesses bounds the values tried as the return of one function.
const maxReturnGuesses = 3

func missingReturnGen(in *Input) []Candidate {
	if e := in.exception(); (e != "TypeError" && e != "AttributeError") || !strings.Contains(in.message(), "'NoneType' object") || in.Facts == nil {
		return nil
	}
	l := in.crashLine()
	var callees []string
	seen := map[string]bool{}
	addCallee := func(e *analysis.Expr) {
		if e != nil && e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && !seen[e.Value.Name] {
			seen[e.Value.Name] = true
			callees = append(callees, e.Value.Name)
		}
	}
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		addCallee(e)
	}
	read := map[string]bool{}
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName }) {
		read[e.Name] = true
	}
	walkStmts(in.Facts.Statements, false, func(s *analysis.Statement) {
		if s.Kind == analysis.StmtAssign && s.Range.End.Line < l && len(s.Targets) == 1 && s.Targets[0].Kind == analysis.ExprName && read[s.Targets[0].Name] {
			addCallee(s.Value)
		}
	})
	var out []Candidate
	for _, f := range callees {
		cell, def, ok := in.definition(f)
		if !ok || returnsValue(def) {
			continue
		}
		ind, _, ok := bodyIndent(cell.Text, def)
		if !ok {
			continue
		}
		for _, r := range returnGuesses(def) {
			fix := finding.Fix{Title: fmt.Sprintf("Return %s at the end of %s() (it returns nothing, so its result is None)", r, f), Edits: []finding.Edit{appendAfter(cell.Text, def.Range.End.Line, ind, "return "+r)}}
			if cell.ID != "" {
				fix.Edits[0].Cell = cell.ID
				fix.Title += fmt.Sprintf(" in cell %d (then run it again)", cell.Index+1)
			}
			out = append(out, Candidate{Fix: fix, Keeps: fmt.Sprintf("%s() does the same work and hands back the %s it built", f, r)})
		}
	}
	return out
}

// definition finds the top-level def of name: in the cell (Cell ID ""), else in the newest
// executed cell that defines it.
func (in *Input) definition(name string) (Cell, *analysis.Statement, bool) {
	find := func(f *analysis.CellFacts) *analysis.Statement {
		if f == nil {
			return nil
		}
		var found *analysis.Statement
		for _, s := range f.Statements {
			if s.Kind == analysis.StmtDef && s.Name == name {
				found = s
			}
		}
		return found
	}
	if d := find(in.Facts); d != nil {
		return Cell{Text: in.Text, Index: -1}, d, true
	}
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		if h.Facts == nil {
			h.Facts = analysis.ParseCell(h.Text)
		}
		if d := find(h.Facts); d != nil {
			return h, d, true
		}
	}
	return Cell{}, nil, false
}

// returnsValue reports whether def's own body returns or yields anything.
func returnsValue(def *analysis.Statement) bool {
	found := false
	walkStmts(def.Body, true, func(s *analysis.Statement) {
		if s.Kind == analysis.StmtReturn && s.Value != nil {
			found = true
		}
		if s.Value != nil && s.Value.Kind == analysis.ExprOther && (s.Value.Node == "yield" || strings.HasPrefix(s.Value.Text, "yield")) {
			found = true
		}
	})
	return found
}

// returnGuesses lists what def may have meant to return: the names its top-level body binds
// or changes (df = ..., df["x"] = ..., df.x = ...), the last first, then its first
// parameter.
func returnGuesses(def *analysis.Statement) []string {
	var bound []string
	for _, s := range def.Body {
		switch s.Kind {
		case analysis.StmtAssign, analysis.StmtAugAssign, analysis.StmtAnnAssign:
			for _, t := range s.Targets {
				if t.Kind == analysis.ExprName {
					bound = append(bound, t.Name)
				} else if r := t.Root(); r != "" {
					bound = append(bound, r)
				}
			}
		}
	}
	var out []string
	seen := map[string]bool{"self": true, "cls": true}
	for i := len(bound) - 1; i >= 0 && len(out) < maxReturnGuesses; i-- {
		if !seen[bound[i]] {
			seen[bound[i]] = true
			out = append(out, bound[i])
		}
	}
	for _, p := range def.Params {
		if len(out) < maxReturnGuesses && !seen[p] && isIdent(p) {
			out = append(out, p)
			break
		}
	}
	return out
}
