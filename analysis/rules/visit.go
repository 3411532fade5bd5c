package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Evaluating expressions over the abstract state: names, constants, operators, containers,
// attributes and subscripts, with the rules that apply to each.

// maxVisitDepth bounds how deep visit recurses into an expression: below it a value is
// unknown and no rule runs. analysis already cuts syntax trees at a smaller depth, so this
// only guards expressions built some other way; the rules must never overflow the stack.
const maxVisitDepth = 4096

// visit evaluates e once per statement, running the rules on it after its children.
func (c *checker) visit(e *analysis.Expr) *val {
	if e == nil {
		return nil
	}
	if v, ok := c.vals[e]; ok {
		return v
	}
	if c.depth >= maxVisitDepth {
		return nil
	}
	c.depth++
	defer func() { c.depth-- }()
	var v *val
	switch e.Kind {
	case analysis.ExprName:
		v = c.lookup(e.Name)
		if at, gone := c.deleted[e.Name]; gone {
			c.report(e.Range, finding.SeverityError, finding.UndefinedName, "NameError",
				fmt.Sprintf("name '%s' is not defined: the cell deleted it on line %d", e.Name, at.Start.Line+1),
				0.95, []string{fmt.Sprintf("del %s on line %d", e.Name, at.Start.Line+1)}, nil)
		}
	case analysis.ExprConst:
		v = constVal(e.Const, e.Text)
	case analysis.ExprList, analysis.ExprTuple, analysis.ExprSet:
		v = c.visitSeq(e)
	case analysis.ExprDict:
		v = c.visitDict(e)
	case analysis.ExprAttribute:
		base := c.visit(e.Value)
		v = c.attribute(e, base)
	case analysis.ExprSubscript:
		base := c.visit(e.Value)
		idx := c.visit(e.Index)
		v = c.subscript(e, base, idx)
	case analysis.ExprCall:
		v = c.call(e)
	case analysis.ExprBinOp:
		var a, b *val
		if len(e.Args) == 2 {
			a, b = c.visit(e.Args[0]), c.visit(e.Args[1])
		}
		v = c.binop(e, a, b)
	case analysis.ExprUnaryOp:
		for _, a := range e.Args {
			c.visit(a)
		}
		if len(e.Args) == 1 && e.Name == "-" {
			if x := c.vals[e.Args[0]]; x != nil && x.hasConst {
				switch n := x.konst.(type) {
				case int64:
					v = constVal(-n, e.Text)
				case float64:
					v = constVal(-n, e.Text)
				}
			}
		}
	case analysis.ExprCompare, analysis.ExprSlice:
		var a, b *val
		for i, x := range e.Args {
			r := c.visit(x)
			if i == 0 {
				a = r
			} else if i == 1 {
				b = r
			}
		}
		if e.Kind == analysis.ExprCompare {
			checkCompare(c, e, a, b)
			v = tensorCompare(e, a, b)
		}
	case analysis.ExprLambda:
		// its body runs later, if ever
	case analysis.ExprBoolOp:
		// `a and b`: b runs only when a allows it, and is often guarded by a
		if len(e.Args) > 0 {
			c.visit(e.Args[0])
			c.guarded++
			for _, x := range e.Args[1:] {
				c.visit(x)
			}
			c.guarded--
		}
	case analysis.ExprOther:
		switch {
		case e.Name != "" && e.Value != nil: // walrus
			v = c.visit(e.Value)
			c.bindName(e.Name, v)
		case e.Node == "conditional_expression" && len(e.Args) == 3:
			// `a if cond else b`: only one branch runs
			c.visit(e.Args[1])
			c.guarded++
			c.visit(e.Args[0])
			c.visit(e.Args[2])
			c.guarded--
		default:
			c.visit(e.Value)
			c.visit(e.Index)
			for _, a := range e.Args {
				c.visit(a)
			}
			for _, k := range e.Keywords {
				c.visit(k.Value)
			}
		}
	default:
		c.visit(e.Value)
		c.visit(e.Index)
		for _, a := range e.Args {
			c.visit(a)
		}
		for _, k := range e.Keywords {
			c.visit(k.Value)
		}
	}
	c.vals[e] = v
	return v
}

// visitSeq evaluates a list/tuple/set display.
func (c *checker) visitSeq(e *analysis.Expr) *val {
	v := &val{name: e.Text}
	switch e.Kind {
	case analysis.ExprList:
		v.Kind = facts.KindList
	case analysis.ExprTuple:
		v.Kind = facts.KindTuple
	default:
		v.Kind = facts.KindSet
	}
	consts := []any{}
	allConst, starred := true, false
	for _, a := range e.Args {
		x := c.visit(a)
		if a.Starred {
			starred = true
		}
		v.elems = append(v.elems, x)
		if x != nil && x.hasConst {
			switch x.konst.(type) {
			case string, int64, float64, bool:
				consts = append(consts, x.konst)
				continue
			}
		}
		allConst = false
	}
	if starred {
		v.elems = nil
		return v
	}
	n := len(e.Args)
	v.Len = &n
	if allConst && e.Kind != analysis.ExprSet {
		v.konst, v.hasConst = consts, true
	}
	return v
}

// visitDict evaluates a dict display with constant string keys.
func (c *checker) visitDict(e *analysis.Expr) *val {
	v := &val{Value: facts.Value{Kind: facts.KindDict}, name: e.Text}
	complete := true
	for i := 0; i+1 < len(e.Args); i += 2 {
		k := c.visit(e.Args[i])
		c.visit(e.Args[i+1])
		if s, ok := constStr(k); ok {
			v.Keys = append(v.Keys, s)
		} else {
			complete = false
		}
	}
	if len(e.Args)%2 != 0 {
		complete = false
	}
	v.KeysComplete = complete
	return v
}

// hasattrGuard returns "x.a" for `if hasattr(x, 'a'):`.
func hasattrGuard(s *analysis.Statement) string {
	v := s.Value
	if s.Kind != analysis.StmtIf || v == nil || v.Kind != analysis.ExprCall || v.Value == nil || v.Value.Kind != analysis.ExprName ||
		v.Value.Name != "hasattr" || len(v.Args) != 2 || v.Args[1].Kind != analysis.ExprConst {
		return ""
	}
	name, ok := v.Args[1].Const.(string)
	if !ok {
		return ""
	}
	return v.Args[0].Text + "." + name
}

// attribute evaluates base.name and runs attribute rules.
func (c *checker) attribute(e *analysis.Expr, base *val) *val {
	if c.attrGuards[e.Text] > 0 {
		return nil // the code checked hasattr first
	}
	// The inspector may have looked at the whole chain ("model.fc1", "df.Age").
	if chain, ok := e.Chain(); ok {
		if root := e.Root(); root != "" && c.fromKernelName(root) {
			if f, ok := c.env.value(chain); ok {
				if !f.Exists && base != nil {
					if checkMissingAttr(c, e, base, true) {
						return nil
					}
				}
				if f.Exists && !modeledKind(base) {
					checkAttrOf(c, e, base)
					return fromFacts(chain, f, c.env)
				}
			}
		}
	}
	if base == nil {
		return nil
	}
	if base.isNone() {
		noneAttribute(c, e, base)
		return nil
	}
	if checkMissingAttr(c, e, base, false) {
		return nil
	}
	checkAttrOf(c, e, base)
	if base.Kind == facts.KindPyModule && base.module != "" {
		q := base.module + "." + e.Name
		r := &val{qual: q, name: e.Text}
		if isModuleName(q) {
			r.Kind, r.module = facts.KindPyModule, q
		}
		return r
	}
	switch base.Kind {
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy:
		return pandasAttr(c, e, base)
	case facts.KindNDArray:
		return numpyAttr(c, e, base)
	case facts.KindTensor:
		return torchAttr(c, e, base)
	case facts.KindEstimator:
		return sklearnAttr(c, e, base)
	}
	return &val{bound: base, name: e.Text}
}

// modeledKind reports kinds whose attributes propagation models itself.
func modeledKind(v *val) bool {
	if v == nil {
		return false
	}
	switch v.Kind {
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy, facts.KindNDArray, facts.KindTensor, facts.KindEstimator, facts.KindPyModule:
		return true
	}
	return false
}

// subscript evaluates base[idx] and runs subscript rules.
func (c *checker) subscript(e *analysis.Expr, base, idx *val) *val {
	if base == nil {
		return nil
	}
	if base.isNone() {
		n := len(c.findings)
		c.report(e.Range, finding.SeverityError, finding.NoneSubscript, "TypeError",
			base.name+" is None, so "+e.Text+" fails: 'NoneType' object is not subscriptable",
			0.95, []string{describe(base)}, nil)
		if base.fromKernel && c.asInspected(e.Value) && c.pristine(e.Range.Start) {
			c.certainSince(n)
		}
		return nil
	}
	switch base.Kind {
	case facts.KindInt, facts.KindFloat, facts.KindBool:
		t := map[string]string{facts.KindInt: "int", facts.KindFloat: "float", facts.KindBool: "bool"}[base.Kind]
		c.report(e.Range, finding.SeverityError, finding.NotSubscriptable, "TypeError",
			fmt.Sprintf("%s is a single %s, so %s fails ('%s' object is not subscriptable)", base.name, t, e.Text, t),
			0.95, []string{describe(base)}, nil)
		return nil
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy:
		return pandasSubscript(c, e, base, idx)
	case facts.KindNDArray:
		return numpySubscript(c, e, base, idx)
	case facts.KindTensor:
		return torchSubscript(c, e, base, idx)
	case facts.KindDict, facts.KindList, facts.KindTuple, facts.KindStr:
		return pythonSubscript(c, e, base, idx)
	}
	if base.bound != nil && base.bound.Kind == facts.KindDataFrame && (strings.HasSuffix(e.Value.Text, ".loc") || strings.HasSuffix(e.Value.Text, ".iloc")) {
		return pandasIndexer(c, e, base, idx)
	}
	return nil
}
