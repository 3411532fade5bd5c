package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A function that updates a notebook-level counter or list: count += 1 inside def bump()
// makes count local to it ("cannot access local variable 'count' where it is not
// associated with a value"). The name the message quotes is bound at module level (the
// kernel holds it, or a cell binds it), so the function declares it global at the top of
// its body. A function nested in another is left alone: its name may be the outer one's.

func init() {
	register(family{name: "global-declaration", gen: globalDeclGen})
}

func globalDeclGen(in *Input) []Candidate {
	if in.exception() != "UnboundLocalError" || in.Facts == nil {
		return nil
	}
	name := quotedName(in.message(), "local variable ")
	if name == "" || !in.moduleLevel(name) {
		return nil
	}
	var defs []*analysis.Statement
	if def, nested := innermostDef(enclosing(in.Facts.Statements, in.crashLine())); def != nil {
		if nested {
			return nil
		}
		defs = append(defs, def)
	} else {
		// The crash line calls the function: the cell's own defs that bind the name.
		for _, s := range in.Facts.Statements {
			if s.Kind == analysis.StmtDef && bindsLocally(s, name) {
				defs = append(defs, s)
			}
		}
	}
	var out []Candidate
	for _, def := range defs {
		if !bindsLocally(def, name) {
			continue
		}
		first := def.Body[0]
		if first.Kind == analysis.StmtExpr && first.Value != nil && first.Value.Kind == analysis.ExprConst && len(def.Body) > 1 {
			first = def.Body[1] // after the docstring
		}
		if _, _, ok := bodyIndent(in.Text, def); !ok {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Declare %s global in %s() (it updates the notebook's %s)", name, def.Name, name), Edits: []finding.Edit{insertBefore(in.Text, first.Range.Start.Line, "global "+name)}},
			Keeps: fmt.Sprintf("the function updates the same %s the notebook holds", name),
		})
	}
	return out
}

// quotedName returns the name quoted right after prefix in msg ("local variable 'x' ...").
func quotedName(msg, prefix string) string {
	i := strings.Index(msg, prefix+"'")
	if i < 0 {
		return ""
	}
	rest := msg[i+len(prefix)+1:]
	n, _, ok := strings.Cut(rest, "'")
	if !ok || !isIdent(n) {
		return ""
	}
	return n
}

// moduleLevel reports whether name is bound at the notebook's top level: the kernel holds
// it, or the cell or an executed cell binds it outside any function.
func (in *Input) moduleLevel(name string) bool {
	if in.inNamespace(name) {
		return true
	}
	if _, ok := in.value(name); ok {
		return true
	}
	cells := []*analysis.CellFacts{in.Facts}
	for _, h := range in.History {
		cells = append(cells, h.Facts)
	}
	for _, f := range cells {
		if f == nil {
			continue
		}
		for _, d := range f.Defs {
			if d.Name == name {
				return true
			}
		}
	}
	return false
}

// bindsLocally reports whether def's own body (not nested defs) assigns name without
// declaring it global.
func bindsLocally(def *analysis.Statement, name string) bool {
	binds := false
	walkStmts(def.Body, true, func(s *analysis.Statement) {
		switch s.Kind {
		case analysis.StmtAssign, analysis.StmtAugAssign, analysis.StmtAnnAssign, analysis.StmtFor:
			for _, t := range s.Targets {
				for _, n := range targetNames(t) {
					if n == name {
						binds = true
					}
				}
			}
		}
	})
	return binds
}

// targetNames lists the names an assignment target binds (a, b in a, b = ...; not the
// object of a subscript or attribute target).
func targetNames(t *analysis.Expr) []string {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case analysis.ExprName:
		return []string{t.Name}
	case analysis.ExprTuple, analysis.ExprList:
		var out []string
		for _, a := range t.Args {
			out = append(out, targetNames(a)...)
		}
		return out
	}
	return nil
}
