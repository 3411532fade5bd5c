package rules

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Which findings are certain by construction (finding.Finding.Certain), decided where a
// rule concludes. An editor shows a certain finding at once and holds the others until the
// shadow run of the same state answers, so this decides what a user may see before any
// code ran: when in doubt, not certain.
//
// A finding is certain only when all of these hold:
//   - its facts are the inspector's own, about a name the cell has not bound, seen whole: the kernel's namespace, a frame's
//     complete columns, a dict's complete keys, a None, an estimator's check_is_fitted;
//   - the object's type is the exact library or builtin type whose failure is defined (a
//     pandas DataFrame, a dict, None, a scikit-learn estimator), never a subclass, a user
//     class or a type that provides attributes at run time;
//   - nothing the cell does before the line can have changed that state: no call, no
//     magic, no star import or exec, no store into a subscript or attribute, no compound
//     statement (pristine);
//   - the line runs: not in an if/for/while body (those findings are warnings anyway),
//     not in a function the cell calls.
//
// Everything else (shapes and dtypes through modelled library calls, attributes from the
// tables of known attributes, values the cell computed) rests on a model of code premortem
// did not run, and waits for the shadow run.

// certainSince marks the findings reported since the checker held n of them as certain,
// unless they sit in an if/loop body (the line may not run).
func (c *checker) certainSince(n int) {
	if c.cond > 0 {
		return
	}
	for i := n; i < len(c.findings); i++ {
		c.findings[i].Certain = true
	}
}

// pristine reports whether the kernel's state is still what the inspection saw when the
// cell reaches pos: every statement before it is a plain assignment to names or a plain
// expression, and no call is evaluated before pos (a call may run any code: a user
// function that binds a global, an in-place method). Operators and attribute reads on the
// way count as harmless.
func (c *checker) pristine(pos finding.Position) bool {
	if len(c.cf.StarImports) > 0 || len(c.cf.Magics) > 0 || len(c.cf.SyntaxErrors) > 0 || len(c.cf.Limits) > 0 {
		return false
	}
	for _, s := range c.cf.Statements {
		if !s.Range.Start.Before(pos) {
			break
		}
		switch s.Kind {
		case analysis.StmtAssign, analysis.StmtAnnAssign:
			for _, t := range s.Targets {
				if t == nil || t.Kind != analysis.ExprName {
					return false
				}
			}
		case analysis.StmtExpr:
		default:
			return false
		}
		if !noCallBefore(s.Value, pos) {
			return false
		}
	}
	return true
}

// noCallBefore reports whether evaluating e up to pos calls nothing: no call, lambda or
// construct the expression tree does not model is evaluated before pos. A call whose
// callee or arguments hold pos has not run yet when pos is evaluated; its callee and
// arguments before pos have.
func noCallBefore(e *analysis.Expr, pos finding.Position) bool {
	if e == nil || !e.Range.Start.Before(pos) {
		return true
	}
	switch e.Kind {
	case analysis.ExprCall:
		if !pos.Before(e.Range.End) {
			return false // the call ran before pos
		}
	case analysis.ExprLambda, analysis.ExprOther:
		return false
	}
	if !noCallBefore(e.Value, pos) || !noCallBefore(e.Index, pos) {
		return false
	}
	for _, a := range e.Args {
		if !noCallBefore(a, pos) {
			return false
		}
	}
	for _, k := range e.Keywords {
		if !noCallBefore(k.Value, pos) {
			return false
		}
	}
	return true
}

// asInspected reports whether e is a name the cell has not bound so far: its value is the
// one the inspection described, not one propagation derived (a derived value may carry
// the kernel's facts through a model of what the cell did to it).
func (c *checker) asInspected(e *analysis.Expr) bool {
	if e == nil || e.Kind != analysis.ExprName {
		return false
	}
	_, bound := c.state[e.Name]
	return !bound
}

// exactType reports whether v's facts are the kernel's and its type is exactly one of
// types (no subclass, no type with run-time attributes).
func exactType(v *val, types ...string) bool {
	if v == nil || !v.fromKernel || v.Dynamic {
		return false
	}
	for _, t := range types {
		if v.Type == t {
			return true
		}
	}
	return false
}

// sklearnClass reports whether v is a scikit-learn estimator of scikit-learn's own class,
// whose fitted state the inspector read with scikit-learn's check_is_fitted rule. A
// Pipeline is left out: its steps may be anyone's classes.
func sklearnClass(v *val) bool {
	return v != nil && v.fromKernel && !v.Dynamic && v.Estimator != nil && strings.HasPrefix(v.Type, "sklearn.") &&
		!v.Estimator.FittedUnknown && v.Estimator.Class != "Pipeline"
}
