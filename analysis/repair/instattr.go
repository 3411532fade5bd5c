package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Undefined name that an object of the history holds as an attribute: a method of the
// notebook's own class set `self.numvars = ...`, the object the history built has it, and
// the cell reads numvars at top level. The repair reads it from the object: `pp.numvars`.
// Only attributes the history's class bodies assign on self (not methods), on objects the
// kernel holds, whose attribute lists the inspection gives.

func init() {
	register(family{name: "instance-attribute", gen: instAttrGen, wanted: instAttrWanted})
}

func instAttrGen(in *Input) []Candidate {
	name, ok := undefinedName(in)
	if !ok || len(definingCells(in, name)) > 0 || !selfAssigned(in.History, name) {
		return nil
	}
	var out []Candidate
	for _, obj := range instAttrWanted(in) {
		v, ok := in.value(obj)
		if !ok || !contains(v.Attributes, name) || len(out) == 2 {
			continue
		}
		var edits []finding.Edit
		for _, u := range in.Facts.Uses {
			if u.Name == name && u.InFunction == "" {
				edits = append(edits, replaceAt(u.Range, obj+"."+name))
			}
		}
		if len(edits) == 0 {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Use %s.%s (%s holds %s)", obj, name, obj, name), Edits: edits},
			Keeps: fmt.Sprintf("a method of %s's class set self.%s; the cell reads that value", obj, name),
		})
	}
	return out
}

// instAttrWanted lists the names the history binds to instances of classes it defines.
func instAttrWanted(in *Input) []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range in.History {
		cf := h.Facts
		if cf == nil {
			cf = analysis.ParseCell(h.Text)
		}
		for _, st := range cf.Statements {
			if st != nil && st.Kind == analysis.StmtClass {
				for _, obj := range instancesOf(in.History, st.Name) {
					if !seen[obj] {
						seen[obj] = true
						out = append(out, obj)
					}
				}
			}
		}
	}
	return out
}

// selfAssigned reports whether a cell of the history assigns self.name (or an item of it)
// in a method, on the syntax tree.
func selfAssigned(hist []Cell, name string) bool {
	var walk func(ss []*analysis.Statement, inDef bool) bool
	walk = func(ss []*analysis.Statement, inDef bool) bool {
		for _, st := range ss {
			if inDef && (st.Kind == analysis.StmtAssign || st.Kind == analysis.StmtAugAssign || st.Kind == analysis.StmtAnnAssign) {
				for _, t := range st.Targets {
					if t.Kind == analysis.ExprSubscript {
						t = t.Value
					}
					if t != nil && t.Kind == analysis.ExprAttribute && t.Name == name && t.Value != nil && t.Value.Kind == analysis.ExprName && t.Value.Name == "self" {
						return true
					}
				}
			}
			if walk(st.Body, inDef || st.Kind == analysis.StmtDef) {
				return true
			}
		}
		return false
	}
	for _, h := range hist {
		f := h.Facts
		if f == nil {
			f = analysis.ParseCell(h.Text)
		}
		if walk(f.Statements, false) {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
