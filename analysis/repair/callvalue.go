package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A value called, or a method not called. df.shape() calls a tuple ("'tuple' object is not
// callable"), df.columns() an Index, model.coef_() an array: the attribute is data, read it
// without the call. The other way, df["a"].mean - 1 subtracts from the method itself
// ("unsupported operand type(s) for -: 'method' and 'int'"), df.head[0] subscripts it,
// float(s.max) converts it: the method was meant to be called. The message names the kind
// of object; the attributes of the crash line are the candidates, and the shadow run keeps
// the one that runs.

func init() {
	register(family{name: "call-value", gen: callValueGen})
}

// maxCallValueGuesses bounds the attributes tried on one line.
const maxCallValueGuesses = 3

func callValueGen(in *Input) []Candidate {
	if in.exception() != "TypeError" {
		return nil
	}
	msg := in.message()
	switch {
	case strings.HasSuffix(msg, "object is not callable") && !strings.HasPrefix(msg, "'method'") && !strings.HasPrefix(msg, "'function'"):
		return dropCall(in, strings.TrimSuffix(msg, " object is not callable"))
	case strings.Contains(msg, "'method'") || strings.Contains(msg, "'builtin_function_or_method'"):
		return addCall(in)
	}
	return nil
}

// dropCall proposes reading each attribute called with no arguments on the crash line
// without the call.
func dropCall(in *Input, kind string) []Candidate {
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && len(e.Args) == 0 && len(e.Keywords) == 0
	}) {
		if len(out) == maxCallValueGuesses {
			break
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Read %s without calling it (it is a %s, not a method)", c.Value.Text, strings.Trim(kind, "'")), Edits: []finding.Edit{replaceAt(c.Range, c.Value.Text)}},
			Keeps: fmt.Sprintf("the same attribute %s, read as the data it is", c.Value.Text),
		})
	}
	return out
}

// addCall proposes calling, with no arguments, each attribute of the crash line that is
// not called already.
func addCall(in *Input) []Candidate {
	called := map[string]bool{}
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && e.Value != nil }) {
		called[rangeKey(c.Value.Range)] = true
	}
	var out []Candidate
	for _, a := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprAttribute && e.Value != nil && !called[rangeKey(e.Range)]
	}) {
		if len(out) == maxCallValueGuesses {
			break
		}
		// The module path of a call (np.round) is no method to call: only an attribute of
		// something that is not itself an imported module's name.
		if in.Facts != nil && isImportedName(in, a.Value.Text) {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Call %s() (it is a method)", a.Text), Edits: []finding.Edit{replaceAt(a.Range, a.Text+"()")}},
			Keeps: fmt.Sprintf("the same method %s, called for the value it returns", a.Text),
		})
	}
	return out
}

// isImportedName reports whether name is a module the cell or its history imports (np,
// pd.api): its attributes are functions and classes, not values to call for.
func isImportedName(in *Input, name string) bool {
	root, _, _ := strings.Cut(name, ".")
	cells := []*analysis.CellFacts{in.Facts}
	for _, h := range in.History {
		if h.Facts == nil {
			h.Facts = analysis.ParseCell(h.Text)
		}
		cells = append(cells, h.Facts)
	}
	for _, f := range cells {
		if f == nil {
			continue
		}
		for _, d := range f.Defs {
			if d.Name == root && d.Kind == analysis.DefImport {
				return true
			}
		}
	}
	v, ok := in.value(root)
	return ok && v.Kind == facts.KindPyModule
}
