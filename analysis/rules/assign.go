package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// How statements change the abstract state: imports, bindings, assignments (including
// items and columns), del, and the names a block touches or a call may mutate.

// bindImport records what an import binds.
func (c *checker) bindImport(im analysis.Import) {
	if im.Star {
		return
	}
	v := &val{name: im.Bound()}
	switch {
	case im.Name == "":
		v.Kind = facts.KindPyModule
		if im.Alias != "" {
			v.module = im.Module
		} else {
			v.module = im.Bound()
		}
	default:
		// from m import n: a submodule, a class or a function; keep its qualified name.
		v.qual = im.Module + "." + im.Name
		if isModuleName(v.qual) {
			v.Kind = facts.KindPyModule
			v.module = v.qual
		}
	}
	c.bindName(im.Bound(), v)
}

// isModuleName reports whether a from-import names a module we resolve calls through.
func isModuleName(q string) bool {
	switch q {
	case "torch.nn", "torch.nn.functional", "matplotlib.pyplot", "numpy.random", "torch.optim":
		return true
	}
	return false
}

// bindName binds name to v (nil = unknown) at this point of the cell.
func (c *checker) bindName(name string, v *val) {
	if v != nil {
		n := *v
		if n.name == "" || !n.fromKernel || n.name != name {
			n.name = name
		}
		v = &n
	}
	c.state[name] = v
	delete(c.deleted, name)
}

// forget makes name unknown from here on (and anything aliased with it).
func (c *checker) forget(name string) {
	old := c.lookup(name)
	c.state[name] = nil
	if old != nil && old.ident != nil {
		for n, v := range c.state {
			if v != nil && v.ident == old.ident {
				c.state[n] = nil
			}
		}
	}
}

// rebind replaces what is known of the object name refers to after an in-place change.
func (c *checker) rebind(name string, v *val) {
	if name == "" {
		return
	}
	old := c.lookup(name)
	if old != nil && old.ident != nil {
		for n, o := range c.state {
			if o != nil && o.ident == old.ident && n != name {
				c.state[n] = nil
			}
		}
	}
	if v != nil && old != nil {
		v.ident = old.ident
		v.name = name
	}
	c.state[name] = v
}

// assign binds target to v.
func (c *checker) assign(t *analysis.Expr, v *val, src *analysis.Expr) {
	if t == nil {
		return
	}
	switch t.Kind {
	case analysis.ExprName:
		if v != nil && v.ident == nil {
			v.ident = new(int)
		}
		if v != nil && v.origin == "" && !v.fromKernel {
			v.origin = "line " + itoa(t.Range.Start.Line+1)
		}
		c.bindName(t.Name, v)
	case analysis.ExprTuple, analysis.ExprList:
		for i, x := range t.Args {
			var e *val
			if v != nil && len(v.elems) == len(t.Args) && !x.Starred {
				e = v.elems[i]
			}
			c.assign(x, e, nil)
		}
	case analysis.ExprSubscript:
		c.visit(t.Value)
		c.visit(t.Index)
		c.assignItem(t, v)
	case analysis.ExprAttribute:
		c.visit(t.Value)
		if root := t.Root(); root != "" {
			c.forget(root)
		}
	}
}

// assignItem handles obj[key] = v: a new or replaced column, a dict key, an array element.
func (c *checker) assignItem(t *analysis.Expr, v *val) {
	root := t.Root()
	if t.Value.Kind != analysis.ExprName {
		if root != "" {
			c.forget(root)
		}
		return
	}
	obj := c.lookup(t.Value.Name)
	if obj == nil {
		return
	}
	key := c.vals[t.Index]
	switch obj.Kind {
	case facts.KindDataFrame:
		if v != nil && (v.Kind == facts.KindNDArray || v.Kind == facts.KindList || v.Kind == facts.KindTensor) {
			nv, ok1 := v.rows()
			nd, ok2 := obj.rows()
			if ok1 && ok2 && nv != nd && !(v.Kind == facts.KindNDArray && len(v.Shape) == 0) {
				c.report(t.Range, finding.SeverityError, finding.LengthMismatch, "ValueError",
					fmt.Sprintf("%s has %d values but %s has %d rows (Length of values (%d) does not match length of index (%d))", v.name, nv, obj.name, nd, nv, nd),
					0.95, []string{describe(v), describe(obj)}, nil)
			}
		}
		n := obj.clone()
		labels, ok := constLabels(key)
		if !ok {
			n.colsComplete = false
			n.absent = nil
			c.rebind(t.Value.Name, n)
			return
		}
		for _, l := range labels {
			col := facts.Column{Name: l}
			if v != nil {
				col.Dtype = v.Dtype
				if v.Kind == facts.KindSeries && len(v.Columns) == 1 {
					col = v.Columns[0]
					col.Name = l
				}
			}
			n.addColumn(col)
		}
		c.rebind(t.Value.Name, n)
	case facts.KindDict:
		n := obj.clone()
		if s, ok := constStr(key); ok && n.KeysComplete {
			n.Keys = append(append([]any(nil), n.Keys...), s)
		} else {
			n.KeysComplete = false
		}
		c.rebind(t.Value.Name, n)
	case facts.KindNDArray, facts.KindTensor:
		// element assignment keeps shape; dtype may upcast values but not the array.
		n := obj.clone()
		n.HasNaN, n.Min, n.Max = nil, nil, nil
		c.rebind(t.Value.Name, n)
	default:
		c.forget(t.Value.Name)
	}
}

// delete handles `del x` and `del df['a']`.
func (c *checker) delete(t *analysis.Expr) {
	switch t.Kind {
	case analysis.ExprName:
		if c.cond == 0 && c.guarded == 0 {
			delete(c.state, t.Name)
			c.deleted[t.Name] = t.Range
		} else {
			c.forget(t.Name)
		}
	case analysis.ExprTuple, analysis.ExprList:
		for _, x := range t.Args {
			c.delete(x)
		}
	case analysis.ExprSubscript:
		c.visit(t)
		if t.Value.Kind == analysis.ExprName {
			obj := c.lookup(t.Value.Name)
			key := c.vals[t.Index]
			if obj != nil && obj.Kind == facts.KindDataFrame {
				if labels, ok := constLabels(key); ok {
					n := obj.clone()
					n.dropColumns(labels, "deleted on line "+itoa(t.Range.Start.Line+1))
					c.rebind(t.Value.Name, n)
					return
				}
			}
			c.forget(t.Value.Name)
		}
	default:
		if r := t.Root(); r != "" {
			c.forget(r)
		}
	}
}

// touchedBy collects names a block may rebind or change in place: assignment targets, the
// receivers of method calls and names passed to calls.
func touchedBy(stmts []*analysis.Statement, out map[string]bool) {
	for _, s := range stmts {
		for _, t := range s.Targets {
			namesIn(t, out)
		}
		if s.Name != "" {
			out[s.Name] = true
		}
		mutatedIn(s.Value, out)
		touchedBy(s.Body, out)
	}
}

// namesIn adds the root names of targets.
func namesIn(t *analysis.Expr, out map[string]bool) {
	if t == nil {
		return
	}
	switch t.Kind {
	case analysis.ExprTuple, analysis.ExprList:
		for _, x := range t.Args {
			namesIn(x, out)
		}
	default:
		if r := t.Root(); r != "" {
			out[r] = true
		}
	}
}

// mutatedIn adds names that calls in e may change in place.
func mutatedIn(e *analysis.Expr, out map[string]bool) {
	if e == nil {
		return
	}
	pure := e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && readOnlyBuiltin[e.Value.Name]
	if e.Kind == analysis.ExprCall && !pure {
		if e.Value != nil && e.Value.Kind == analysis.ExprAttribute {
			if r := e.Value.Value.Root(); r != "" {
				out[r] = true
			}
		}
		for _, a := range e.Args {
			if a.Kind == analysis.ExprName {
				out[a.Name] = true
			}
		}
		for _, k := range e.Keywords {
			if k.Value != nil && k.Value.Kind == analysis.ExprName {
				out[k.Value.Name] = true
			}
		}
	}
	mutatedIn(e.Value, out)
	mutatedIn(e.Index, out)
	for _, a := range e.Args {
		mutatedIn(a, out)
	}
	for _, k := range e.Keywords {
		mutatedIn(k.Value, out)
	}
}
