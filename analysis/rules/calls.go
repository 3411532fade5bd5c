package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Evaluating calls: the rule families in turn, then what an unknown call may change, and
// how a callee resolves to a qualified library name.

// call evaluates a call and runs call rules.
func (c *checker) call(e *analysis.Expr) *val {
	k := &callInfo{e: e, kw: map[string]*val{}}
	k.fn = c.visit(e.Value)
	if e.Value != nil && e.Value.Kind == analysis.ExprAttribute {
		k.recv = c.vals[e.Value.Value]
		k.method = e.Value.Name
	}
	for _, a := range e.Args {
		x := c.visit(a)
		if a.Starred {
			x = nil
		}
		k.args = append(k.args, x)
	}
	for _, kw := range e.Keywords {
		x := c.visit(kw.Value)
		if kw.Name != "" {
			k.kw[kw.Name] = x
		}
	}
	k.qual = c.qualify(e.Value, k.fn)
	if k.fn != nil && k.fn.fromKernel && k.e.Value.Kind == analysis.ExprName {
		switch k.fn.Kind {
		case facts.KindDataFrame, facts.KindSeries, facts.KindNDArray, facts.KindTensor, facts.KindList, facts.KindDict,
			facts.KindStr, facts.KindInt, facts.KindFloat, facts.KindTuple:
			c.report(k.e.Range, finding.SeverityError, finding.NotCallable, "TypeError",
				fmt.Sprintf("%s is a %s, not a function ('%s' object is not callable); was the name reused for data?", k.fn.name, kindLabel(k.fn), pyTypeName(k.fn)),
				0.93, []string{describe(k.fn)}, nil)
			return nil
		}
	}
	if k.fn != nil && k.fn.isNone() {
		n := len(c.findings)
		c.report(e.Range, finding.SeverityError, finding.NoneCall, "TypeError",
			k.fn.name+" is None, so calling it fails: 'NoneType' object is not callable",
			0.95, []string{describe(k.fn)}, nil)
		if k.fn.fromKernel && c.asInspected(e.Value) && c.pristine(e.Range.Start) {
			c.certainSince(n)
		}
		return nil
	}
	if notCallable(c, k) {
		return nil
	}
	for _, family := range callFamilies {
		if v, ok := family(c, k); ok {
			return v
		}
	}
	c.unknownCall(k)
	return nil
}

// callFamilies are tried in order; the first that handles a call gives its result.
var callFamilies = []func(c *checker, k *callInfo) (*val, bool){
	pythonCall, pandasCall, sklearnCall, numpyCall, torchCall, plotCall,
}

// unknownCall forgets what a call we do not model may change: the receiver of an unknown
// method on a mutable object, and mutable arguments of functions that are not library
// functions.
func (c *checker) unknownCall(k *callInfo) {
	if k.method != "" {
		if r := k.recvExpr().Root(); r != "" && mutableKind(k.recv) && !pureMethod(k.recv, k.method) && !accessorCall(k) {
			c.forget(r)
		}
	}
	if k.qual != "" && !strings.HasPrefix(k.qual, "__main__") {
		return
	}
	if k.fn != nil && k.fn.fn != nil {
		// a function of this cell: it may change any global it mentions
		touched := map[string]bool{}
		touchedBy(k.fn.fn.Body, touched)
		for n := range touched {
			if _, local := c.state[n]; local || c.env.Values != nil {
				c.forget(n)
			}
		}
	}
	for i, a := range k.e.Args {
		if a.Kind == analysis.ExprName && mutableKind(k.args[i]) {
			c.forget(a.Name)
		}
	}
	for _, kw := range k.e.Keywords {
		if kw.Value != nil && kw.Value.Kind == analysis.ExprName && mutableKind(c.vals[kw.Value]) {
			c.forget(kw.Value.Name)
		}
	}
}

// mutableKind reports whether a value can change in place (unknown counts as mutable).
func mutableKind(v *val) bool {
	if v == nil {
		return true
	}
	switch v.Kind {
	case facts.KindStr, facts.KindInt, facts.KindFloat, facts.KindBool, facts.KindNone, facts.KindTuple, facts.KindPyModule, facts.KindNumpyScalar:
		return false
	}
	return !v.hasConst
}

// pureMethod reports methods known not to change their receiver.
// accessorCall reports a method of pandas' .str/.dt/.cat accessors (s.str.len()): they
// return new objects and never change the frame.
func accessorCall(k *callInfo) bool {
	r := k.recvExpr()
	return r != nil && r.Kind == analysis.ExprAttribute && (r.Name == "str" || r.Name == "dt" || r.Name == "cat") &&
		k.method != "set_categories" && k.method != "add_categories" && k.method != "rename_categories" && k.method != "remove_categories"
}

func pureMethod(_ *val, m string) bool {
	switch m {
	case "head", "tail", "describe", "info", "copy", "sum", "mean", "median", "std", "var", "min", "max",
		"count", "value_counts", "unique", "nunique", "isnull", "isna", "notnull", "notna", "corr",
		"plot", "hist", "print", "to_csv", "to_numpy", "tolist", "item", "size", "numel", "dim",
		"keys", "values", "items", "get", "argmax", "argmin", "any", "all", "nelement", "detach",
		"cpu", "numpy", "__len__", "show", "savefig", "predict", "predict_proba", "score", "transform",
		"decision_function", "get_params", "format", "join", "split", "strip", "lower", "upper",
		"startswith", "endswith", "replace", "eval", "train", "parameters", "state_dict", "named_parameters",
		"select_dtypes", "apply", "map", "applymap", "merge", "pivot_table", "pivot", "melt", "query",
		"filter", "isin", "nlargest", "nsmallest", "to_dict", "iterrows", "itertuples", "duplicated",
		"drop_duplicates", "memory_usage", "corrwith", "cov", "quantile", "cumsum", "diff", "pct_change",
		"shift", "rolling", "expanding", "resample", "agg", "aggregate", "idxmax",
		"idxmin", "abs", "round", "clip", "where", "mask", "explode", "stack", "unstack", "transpose",
		"to_frame", "to_list", "reindex", "rank", "sort_index", "mode", "prod",
		"skew", "kurt", "sem", "add", "sub", "mul", "div", "eq", "ne", "lt", "gt", "le", "ge", "between",
		"to_json", "to_excel", "to_parquet", "to_pickle", "to_string", "to_markdown", "to_html", "equals",
		"view", "reshape", "squeeze", "unsqueeze", "flatten", "ravel", "t", "permute",
		"float", "double", "long", "int", "to", "cuda", "contiguous", "clone", "argsort", "topk",
		"astype", "groupby":
		return true
	}
	return false
}

// qualify resolves a callee to a qualified library name when its root is a module or an
// imported class/function ("np.reshape" -> "numpy.reshape").
func (c *checker) qualify(callee *analysis.Expr, fn *val) string {
	if fn != nil && fn.qual != "" {
		return fn.qual
	}
	if callee == nil {
		return ""
	}
	if callee.Kind == analysis.ExprName {
		if (fn == nil || fn.fromKernel && (fn.Kind == facts.KindClass || fn.Kind == facts.KindCallable)) && c.fromKernelName(callee.Name) {
			if q, ok := knownBareFunction[callee.Name]; ok && looksLike(fn, q) {
				return q
			}
		}
		return ""
	}
	if callee.Kind == analysis.ExprAttribute {
		base := c.vals[callee.Value]
		if base != nil && base.Kind == facts.KindPyModule && base.module != "" {
			return base.module + "." + callee.Name
		}
		if base != nil && base.qual != "" && base.Kind == facts.KindPyModule {
			return base.qual + "." + callee.Name
		}
	}
	return ""
}

// knownBareFunction maps commonly from-imported names to their home, used only when the
// kernel holds the name and did not report what it is.
var knownBareFunction = map[string]string{}

// looksLike checks that a kernel class or function named like a library one really is it
// (tutorials define their own LinearRegression and train_test_split).
func looksLike(fn *val, q string) bool {
	if fn == nil {
		return true
	}
	switch {
	case fn.Kind == facts.KindClass:
		// attributes may be missing when the inspector ran out of budget: trust the name then
		return len(fn.Attributes) == 0 || contains(fn.Attributes, "get_params") || contains(fn.Attributes, "fit_transform")
	case strings.HasSuffix(q, "train_test_split"):
		return strings.HasPrefix(fn.Signature, "(*arrays")
	case strings.HasPrefix(q, "sklearn.metrics."):
		return strings.HasPrefix(fn.Signature, "(y_true, y_pred")
	}
	return false
}

// membershipKeys returns the constant strings tested with `in` / `not in` in a condition.
func membershipKeys(e *analysis.Expr) []string {
	if e == nil {
		return nil
	}
	var out []string
	if e.Kind == analysis.ExprCompare && (e.Name == "in" || e.Name == "not in") && len(e.Args) > 0 && e.Args[0].Kind == analysis.ExprConst {
		if s, ok := e.Args[0].Const.(string); ok {
			out = append(out, s)
		}
	}
	for _, a := range e.Args {
		out = append(out, membershipKeys(a)...)
	}
	return out
}

// readOnlyBuiltin are builtins that never change their arguments.
var readOnlyBuiltin = set("print", "len", "str", "repr", "int", "float", "bool", "type", "isinstance", "id",
	"sorted", "sum", "min", "max", "abs", "round", "range", "enumerate", "zip", "list", "tuple", "set", "dict",
	"hasattr", "getattr", "display", "format", "any", "all", "iter", "hash")

// plainData reports a value of a builtin data type, which is never callable.
func plainData(f facts.Value) bool {
	if f.Callable != nil && !*f.Callable {
		return true
	}
	switch f.Kind {
	case facts.KindBool, facts.KindInt, facts.KindFloat, facts.KindStr, facts.KindList, facts.KindTuple, facts.KindDict, facts.KindSet:
		return f.Type == f.Kind // exactly the builtin type, not a callable subclass
	}
	return false
}
