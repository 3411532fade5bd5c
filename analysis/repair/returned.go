package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Undefined name that a function or method of the history returns: the notebook computes
// it inside `def variables(self): ... return (self.numvars, self.catvars)` and the cell reads
// it as if the call had bound it at top level. The repair calls the function (on the
// instance the history built, for a method) and binds what it returns before the first use:
// `numvars, catvars = pp.variables()`. Only calls whose arguments are certain are made: no
// parameters beyond self, parameters with defaults, or parameters named like the kernel's
// variables they stand for.

func init() {
	register(family{name: "returned-name", gen: returnedGen, wanted: returnedWanted})
}

func returnedGen(in *Input) []Candidate {
	name, ok := undefinedName(in)
	if !ok || len(definingCells(in, name)) > 0 {
		return nil
	}
	at, ok := firstUseStatement(in, name)
	if !ok {
		return nil
	}
	avail := availableAt(in, at)
	var out []Candidate
	for i := len(in.History) - 1; i >= 0 && len(out) < 2; i-- {
		h := in.History[i]
		if h.Facts == nil {
			h.Facts = analysis.ParseCell(h.Text)
		}
		for _, r := range returners(h, name) {
			call, ok := r.call(in, avail)
			if !ok {
				continue
			}
			bind := name + " = " + call
			if len(r.tuple) > 1 {
				bind = fmt.Sprintf("%s = %s[%d]", name, call, r.pos)
				if all := tupleNames(r.tuple, avail, in); all != "" {
					bind = all + " = " + call
				}
			}
			out = append(out, Candidate{
				Fix: finding.Fix{
					Title: fmt.Sprintf("Define %s from %s, which returns it (cell %d): `%s`", name, call, h.Index+1, bind),
					Edits: []finding.Edit{insertBefore(in.Text, at, bind)},
				},
				Keeps: fmt.Sprintf("%s in cell %d returns %s; the call binds the value the cell reads", r.fn, h.Index+1, name),
			})
			break
		}
	}
	return out
}

func returnedWanted(in *Input) []string {
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil || in.exception() != "NameError" {
		return nil
	}
	var out []string
	for _, h := range in.History {
		for _, r := range returners(h, m[1]) {
			if r.class == "" {
				out = append(out, r.fn)
			} else {
				for _, obj := range instancesOf(in.History, r.class) {
					out = append(out, obj+"."+r.fn)
				}
			}
		}
	}
	return out
}

// returner is a function (or a method of class) whose return statement returns the name,
// alone or at index pos of a tuple.
type returner struct {
	fn, class string
	params    []string // as written, self dropped for methods
	tuple     []*analysis.Expr
	pos       int
}

var defRE = regexp.MustCompile(`^\s*def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)\s*(?:->[^:]*)?:`)

// returners finds the module-level functions and class methods of cell h returning name.
func returners(h Cell, name string) []returner {
	cf := h.Facts
	if cf == nil {
		cf = analysis.ParseCell(h.Text)
	}
	var out []returner
	var visit func(st *analysis.Statement, class string)
	visit = func(st *analysis.Statement, class string) {
		switch st.Kind {
		case analysis.StmtClass:
			if class == "" {
				for _, b := range st.Body {
					visit(b, st.Name)
				}
			}
		case analysis.StmtDef:
			m := defRE.FindStringSubmatch(lineAt(h.Text, st.Range.Start.Line))
			if m == nil || m[1] != st.Name {
				return
			}
			params := splitParams(m[2])
			if class != "" {
				if len(params) == 0 || params[0] != "self" {
					return // a static or class method: skip
				}
				params = params[1:]
			}
			for _, ret := range returnsOf(st.Body) {
				elems := []*analysis.Expr{ret}
				if ret.Kind == analysis.ExprTuple {
					elems = ret.Args
				}
				for i, e := range elems {
					if returnedName(e, class != "") == name {
						out = append(out, returner{fn: st.Name, class: class, params: params, tuple: elems, pos: i})
					}
				}
			}
		}
	}
	for _, st := range cf.Statements {
		if st != nil {
			visit(st, "")
		}
	}
	return out
}

// returnsOf returns the values of the return statements of a function body (not of the
// functions nested in it).
func returnsOf(body []*analysis.Statement) []*analysis.Expr {
	var out []*analysis.Expr
	for _, st := range body {
		switch {
		case st == nil || st.Kind == analysis.StmtDef || st.Kind == analysis.StmtClass:
		case st.Kind == analysis.StmtReturn && st.Value != nil:
			out = append(out, st.Value)
		default:
			out = append(out, returnsOf(st.Body)...)
		}
	}
	return out
}

// returnedName is the name a returned expression carries: x, or self.x in a method.
func returnedName(e *analysis.Expr, method bool) string {
	switch {
	case e == nil:
	case e.Kind == analysis.ExprName:
		return e.Name
	case method && e.Kind == analysis.ExprAttribute && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == "self":
		return e.Name
	}
	return ""
}

func splitParams(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// call writes the call that returns the name, when every argument is certain.
func (r returner) call(in *Input, avail map[string]bool) (string, bool) {
	var args []string
	for _, p := range r.params {
		if strings.HasPrefix(p, "*") || strings.Contains(p, "=") {
			continue // *args, **kwargs and parameters with defaults need nothing
		}
		p = strings.TrimSpace(strings.SplitN(p, ":", 2)[0])
		if !isIdent(p) || !avail[p] {
			return "", false
		}
		args = append(args, p)
	}
	callee := r.fn
	if r.class != "" {
		objs := instancesOf(in.History, r.class)
		obj := ""
		for i := len(objs) - 1; i >= 0; i-- {
			if avail[objs[i]] {
				obj = objs[i]
				break
			}
		}
		if obj == "" {
			return "", false
		}
		callee = obj + "." + r.fn
		if v, ok := in.value(obj); ok && v.Type != "" && !strings.HasSuffix(v.Type, "."+r.class) && v.Type != r.class {
			return "", false // rebound to something else since
		}
	} else if !avail[r.fn] {
		return "", false
	}
	return callee + "(" + strings.Join(args, ", ") + ")", true
}

// instancesOf are the names the history binds to ClassName(...), in execution order.
func instancesOf(hist []Cell, class string) []string {
	var out []string
	for _, h := range hist {
		cf := h.Facts
		if cf == nil {
			cf = analysis.ParseCell(h.Text)
		}
		for _, st := range cf.Statements {
			if st == nil || st.Kind != analysis.StmtAssign || len(st.Targets) != 1 || st.Targets[0].Kind != analysis.ExprName || st.Value == nil || st.Value.Kind != analysis.ExprCall || st.Value.Value == nil {
				continue
			}
			if callee, ok := st.Value.Value.Chain(); ok && callee == class {
				out = append(out, st.Targets[0].Name)
			}
		}
	}
	return out
}

// tupleNames is "a, b" when every element of a returned tuple carries a name the kernel
// and the cell (above the use) leave free, so unpacking binds no name already in use; ""
// otherwise.
func tupleNames(elems []*analysis.Expr, avail map[string]bool, in *Input) string {
	var ns []string
	seen := map[string]bool{}
	for _, e := range elems {
		n := returnedName(e, true)
		if n == "" || avail[n] || seen[n] || analysis.IsBuiltin(n) {
			return ""
		}
		for _, d := range in.Facts.Defs {
			if d.Name == n {
				return ""
			}
		}
		seen[n] = true
		ns = append(ns, n)
	}
	return strings.Join(ns, ", ")
}
