package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A method called on the class instead of an instance: Model.fit(X) passes X as self and
// misses an argument ("Model.fit() missing 1 required positional argument: 'x'"), and
// StandardScaler.fit_transform(X) the same. The object of the call is a class (the kernel
// says so, or a cell defines it), so it is instantiated with no arguments first.

func init() {
	register(family{name: "instance-call", gen: instanceCallGen})
}

func instanceCallGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "TypeError" || !strings.Contains(msg, "required positional argument") {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Value != nil
	}) {
		obj := c.Value.Value
		name, ok := obj.Chain()
		if !ok || !in.isClass(name) {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Call %s on an instance, %s() (it is a class)", c.Value.Name, name), Edits: []finding.Edit{replaceAt(obj.Range, obj.Text+"()")}},
			Keeps: fmt.Sprintf("the same %s, called on a new %s as its method expects", c.Value.Name, name),
		})
	}
	return out
}

// isClass reports whether name is a class: the kernel's facts say so, or the cell or an
// executed cell defines it with class.
func (in *Input) isClass(name string) bool {
	if v, ok := in.value(name); ok {
		return v.Kind == facts.KindClass
	}
	if _, _, ok := in.classDefinition(name); ok {
		return true
	}
	return false
}

// classDefinition finds the top-level class statement of name in the cell or the history.
func (in *Input) classDefinition(name string) (Cell, *analysis.Statement, bool) {
	cells := append([]Cell{{Text: in.Text, Facts: in.Facts, Index: -1}}, in.History...)
	for _, c := range cells {
		if c.Facts == nil {
			c.Facts = analysis.ParseCell(c.Text)
		}
		for _, s := range c.Facts.Statements {
			if s.Kind == analysis.StmtClass && s.Name == name {
				return c, s, true
			}
		}
	}
	return Cell{}, nil, false
}
