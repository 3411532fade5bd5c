package rules

import (
	"github.com/premortem/premortem/analysis"
)

// callInfo is one call being visited: its receiver (for methods), callee value, qualified
// name when the callee resolves to a library function, and the visited arguments.
type callInfo struct {
	e      *analysis.Expr
	recv   *val   // receiver of a method call
	method string // method name, "" for plain calls
	fn     *val   // the callee's value
	qual   string // "pandas.get_dummies", "torch.nn.Linear", ... when known
	args   []*val
	kw     map[string]*val
}

// arg returns positional argument i or keyword name (nil when absent or unknown).
func (k *callInfo) arg(i int, name string) *val {
	if name != "" {
		if v, ok := k.kw[name]; ok {
			return v
		}
	}
	if i >= 0 && i < len(k.args) {
		return k.args[i]
	}
	return nil
}

// argExpr returns the expression of positional argument i or keyword name.
func (k *callInfo) argExpr(i int, name string) *analysis.Expr {
	if name != "" {
		if x := k.e.Keyword(name); x != nil {
			return x
		}
	}
	if i >= 0 && i < len(k.e.Args) {
		return k.e.Args[i]
	}
	return nil
}

// has reports whether argument i or keyword name is given at all.
func (k *callInfo) has(i int, name string) bool { return k.argExpr(i, name) != nil }

// recvName returns the receiver's plain name ("df" in df.drop(...)), or "".
func (k *callInfo) recvName() string {
	if k.e.Value == nil || k.e.Value.Kind != analysis.ExprAttribute {
		return ""
	}
	if x := k.e.Value.Value; x != nil && x.Kind == analysis.ExprName {
		return x.Name
	}
	return ""
}

// recvExpr returns the receiver expression of a method call.
func (k *callInfo) recvExpr() *analysis.Expr {
	if k.e.Value == nil || k.e.Value.Kind != analysis.ExprAttribute {
		return nil
	}
	return k.e.Value.Value
}

// kwTrue reports whether keyword name is the constant True.
func (k *callInfo) kwTrue(name string) bool {
	v := k.kw[name]
	return v != nil && v.hasConst && v.konst == true
}
