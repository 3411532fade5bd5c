package rules

import (
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
)

// val is the abstract value of an expression while Check walks a cell: the kernel's facts
// for free names, facts derived by propagation for names the cell binds, or constants. A nil
// *val means unknown. Absent fields inside Value mean unknown too (as in package facts).
type val struct {
	facts.Value
	// name is how the user refers to the value in messages: "df", "X_train".
	name string
	// origin says where the facts come from, for evidence: "as of run 14", "after line 3".
	origin string
	// fromKernel is true for facts the inspector reported (not derived in this cell).
	fromKernel bool
	// colsComplete is true when Columns lists every column of a DataFrame.
	colsComplete bool
	// absent maps the key (see colKey) of a column known to be missing to the reason.
	absent map[string]string
	// konst holds a Python constant (string, int64, float64, bool, nil, []any) when hasConst.
	konst    any
	hasConst bool
	// elems are the elements of a tuple/list whose length is known.
	elems []*val
	// module is the dotted module name for module objects ("numpy").
	module string
	// qual is the qualified name of a class or function ("torch.nn.Linear").
	qual string
	// fn is a function the cell defines.
	fn *analysis.Statement
	// ident ties together names bound to the same object, so an in-place change through one
	// forgets what was known about the others.
	ident *int
	// bound is set for a bound method value (recv.method), for calls.
	bound *val
	// ctorArgs keeps the constructor call of an object created in this cell.
	ctor *analysis.Expr
	// layerCtors holds, parallel to Module.Layers, the constructor call of each layer built
	// in this cell (nil where unknown), so a fix can edit its arguments.
	layerCtors []*analysis.Expr
}

// clone copies v deeply enough that propagation can change the copy.
func (v *val) clone() *val {
	if v == nil {
		return nil
	}
	n := *v
	n.Shape = append([]int(nil), v.Shape...)
	n.Columns = append([]facts.Column(nil), v.Columns...)
	if v.absent != nil {
		n.absent = map[string]string{}
		for k, r := range v.absent {
			n.absent[k] = r
		}
	}
	if v.Estimator != nil {
		e := *v.Estimator
		n.Estimator = &e
	}
	if v.Module != nil {
		m := *v.Module
		m.Layers = append([]facts.Layer(nil), v.Module.Layers...)
		n.Module = &m
	}
	n.elems = append([]*val(nil), v.elems...)
	return &n
}

// fromFacts wraps kernel facts.
func fromFacts(name string, f facts.Value, env *Env) *val {
	v := &val{Value: f, name: name, origin: env.asOf(), fromKernel: true, ident: new(int)}
	if f.Kind == facts.KindDataFrame && len(f.Columns) > 0 && len(f.Shape) == 2 && f.Shape[1] == len(f.Columns) {
		v.colsComplete = true
	}
	if f.Kind == facts.KindNone {
		v.hasConst = true
	}
	if f.Shape == nil && f.Ndim != nil && *f.Ndim == 0 {
		v.Shape = []int{} // JSON drops an empty shape; ndim 0 keeps it
	}
	if f.Kind == facts.KindPyModule {
		v.module = moduleFromRepr(f.Repr)
		if v.module == "" {
			v.module = guessModule(name, f.Attributes)
		}
	}
	if f.Kind == facts.KindClass || f.Kind == facts.KindCallable {
		v.qual = classFromRepr(f.Repr)
	}
	return v
}

// moduleFromRepr reads "numpy" out of "<module 'numpy' from '...'>".
func moduleFromRepr(r string) string {
	const p = "<module '"
	if !strings.HasPrefix(r, p) {
		return ""
	}
	r = r[len(p):]
	if i := strings.IndexByte(r, '\''); i >= 0 {
		return r[:i]
	}
	return ""
}

// classFromRepr reads the qualified name out of "<class 'a.b.C'>" or "<function f at ...>".
func classFromRepr(r string) string {
	const p = "<class '"
	if strings.HasPrefix(r, p) {
		r = r[len(p):]
		if i := strings.IndexByte(r, '\''); i >= 0 {
			return r[:i]
		}
	}
	return ""
}

// constVal is the abstract value of a literal.
func constVal(c any, text string) *val {
	v := &val{konst: c, hasConst: true, name: text}
	switch c.(type) {
	case string:
		v.Kind = facts.KindStr
	case int64:
		v.Kind = facts.KindInt
	case float64:
		v.Kind = facts.KindFloat
	case bool:
		v.Kind = facts.KindBool
	case nil:
		v.Kind = facts.KindNone
	case []any:
		v.Kind = facts.KindList
	}
	return v
}

// kind returns v's Kind, "" when unknown.
func (v *val) kind() string {
	if v == nil {
		return ""
	}
	return v.Kind
}

// isNone reports whether v is certainly None.
func (v *val) isNone() bool { return v != nil && v.Kind == facts.KindNone }

// ndim returns the number of dimensions when known.
func (v *val) ndim() (int, bool) {
	if v == nil {
		return 0, false
	}
	if v.Shape != nil {
		return len(v.Shape), true
	}
	if v.Ndim != nil {
		return *v.Ndim, true
	}
	switch v.Kind {
	case facts.KindSeries:
		return 1, true
	case facts.KindDataFrame:
		return 2, true
	}
	return 0, false
}

// shapeKnown returns the full shape when every dimension is known.
func (v *val) shapeKnown() ([]int, bool) {
	if v == nil || v.Shape == nil {
		return nil, false
	}
	for _, d := range v.Shape {
		if d < 0 {
			return nil, false
		}
	}
	return v.Shape, true
}

// rows returns the number of samples (first dimension) when known.
func (v *val) rows() (int, bool) {
	if v == nil {
		return 0, false
	}
	if len(v.Shape) > 0 && v.Shape[0] >= 0 {
		return v.Shape[0], true
	}
	if v.Len != nil && (v.Kind == facts.KindList || v.Kind == facts.KindTuple || v.Kind == facts.KindSeries) {
		return *v.Len, true
	}
	if v.hasConst {
		if l, ok := v.konst.([]any); ok {
			return len(l), true
		}
	}
	return 0, false
}

// ncols returns the number of features of a 2-D value when known.
func (v *val) ncols() (int, bool) {
	if v == nil {
		return 0, false
	}
	if v.Kind == facts.KindDataFrame && v.colsComplete {
		return len(v.Columns), true
	}
	if len(v.Shape) == 2 && v.Shape[1] >= 0 {
		return v.Shape[1], true
	}
	return 0, false
}

// colKey normalises a column label (JSON string or number, or a Python constant) so that
// 3, 3.0 and int64(3) compare equal and "3" does not.
func colKey(label any) (string, bool) {
	switch l := label.(type) {
	case string:
		return "s:" + l, true
	case int64:
		return "n:" + strconv.FormatInt(l, 10), true
	case int:
		return "n:" + strconv.Itoa(l), true
	case float64:
		if l == float64(int64(l)) {
			return "n:" + strconv.FormatInt(int64(l), 10), true
		}
		return "n:" + strconv.FormatFloat(l, 'g', -1, 64), true
	case bool:
		return "b:" + strconv.FormatBool(l), true
	}
	return "", false
}

// column finds a column by label.
func (v *val) column(label any) (facts.Column, bool) {
	k, ok := colKey(label)
	if !ok || v == nil {
		return facts.Column{}, false
	}
	for _, c := range v.Columns {
		if ck, ok := colKey(c.Name); ok && ck == k {
			return c, true
		}
	}
	return facts.Column{}, false
}

// columnMissing says whether label is certainly not a column of v, and why.
func (v *val) columnMissing(label any) (string, bool) {
	if v == nil {
		return "", false
	}
	k, ok := colKey(label)
	if !ok {
		return "", false
	}
	if why, ok := v.absent[k]; ok {
		return why, true
	}
	if !v.colsComplete {
		return "", false
	}
	for _, c := range v.Columns {
		if _, ok := colKey(c.Name); !ok {
			return "", false // MultiIndex or odd labels: don't judge
		}
	}
	if _, ok := v.column(label); ok {
		return "", false
	}
	return "", true
}

// dropColumns removes labels from v's columns and remembers why.
func (v *val) dropColumns(labels []any, why string) {
	if v.absent == nil {
		v.absent = map[string]string{}
	}
	for _, l := range labels {
		k, ok := colKey(l)
		if !ok {
			v.colsComplete = false
			continue
		}
		v.absent[k] = why
		for i := 0; i < len(v.Columns); i++ {
			if ck, _ := colKey(v.Columns[i].Name); ck == k {
				v.Columns = append(v.Columns[:i], v.Columns[i+1:]...)
				i--
			}
		}
	}
	if len(v.Shape) == 2 {
		if v.colsComplete {
			v.Shape[1] = len(v.Columns)
		} else {
			v.Shape[1] = -1
		}
	}
}

// addColumn adds (or replaces) a column.
func (v *val) addColumn(c facts.Column) {
	k, ok := colKey(c.Name)
	if !ok {
		v.colsComplete = false
		return
	}
	delete(v.absent, k)
	for i := range v.Columns {
		if ck, _ := colKey(v.Columns[i].Name); ck == k {
			v.Columns[i] = c
			return
		}
	}
	v.Columns = append(v.Columns, c)
	if len(v.Shape) == 2 {
		if v.colsComplete {
			v.Shape[1] = len(v.Columns)
		} else {
			v.Shape[1] = -1
		}
	}
}

// constStrings returns the constant as a list of labels: "a" -> ["a"], ["a","b"] as is.
func constLabels(v *val) ([]any, bool) {
	if v == nil || !v.hasConst {
		return nil, false
	}
	switch c := v.konst.(type) {
	case string, int64, float64:
		return []any{c}, true
	case []any:
		for _, x := range c {
			switch x.(type) {
			case string, int64, float64:
			default:
				return nil, false
			}
		}
		return c, true
	}
	return nil, false
}

// constInt returns an integer constant.
func constInt(v *val) (int, bool) {
	if v == nil || !v.hasConst {
		return 0, false
	}
	if i, ok := v.konst.(int64); ok {
		return int(i), true
	}
	return 0, false
}

// constStr returns a string constant.
func constStr(v *val) (string, bool) {
	if v == nil || !v.hasConst {
		return "", false
	}
	s, ok := v.konst.(string)
	return s, ok
}

// isNumericDtype reports whether a pandas/numpy/torch dtype name is numeric (bool excluded).
func isNumericDtype(d string) bool {
	d = strings.TrimPrefix(d, "torch.")
	for _, p := range []string{"int", "uint", "float", "Int", "UInt", "Float", "complex", "double", "half", "long", "short"} {
		if strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}

// isObjectDtype reports whether a dtype holds Python objects or strings.
func isObjectDtype(d string) bool {
	return d == "object" || d == "string" || strings.HasPrefix(d, "<U") || strings.HasPrefix(d, "|S") || strings.HasPrefix(d, "str")
}

func itoa(i int) string { return strconv.Itoa(i) }

// guessModule names a kernel module the inspector did not name, from its alias or from
// attributes only that module has.
func guessModule(alias string, attrs []string) string {
	has := func(names ...string) bool {
		for _, n := range names {
			if !contains(attrs, n) {
				return false
			}
		}
		return true
	}
	switch {
	case has("ndarray", "concatenate", "reshape"):
		return "numpy"
	case has("DataFrame", "read_csv", "get_dummies"):
		return "pandas"
	case has("Tensor", "from_numpy", "nn"):
		return "torch"
	case has("Linear", "Conv2d", "Sequential"):
		return "torch.nn"
	case has("cross_entropy", "relu"):
		return "torch.nn.functional"
	case has("imshow", "subplots", "figure"):
		return "matplotlib.pyplot"
	case has("countplot", "heatmap", "barplot"):
		return "seaborn"
	case has("OLS", "qqplot", "add_constant"):
		return "statsmodels.api"
	case has("rand", "randn", "randint") && !has("Tensor"):
		return "numpy.random"
	}
	switch alias {
	case "numpy", "pandas", "torch":
		return alias
	}
	return ""
}

// shapeValue is the value of `x.shape` for a known shape: a tuple of int constants, so
// `X.shape[1]` and unpacking work as in Python.
func shapeValue(name string, shape []int) *val {
	t := &val{name: name}
	t.Kind = facts.KindTuple
	consts := make([]any, 0, len(shape))
	for _, d := range shape {
		t.elems = append(t.elems, constVal(int64(d), itoa(d)))
		consts = append(consts, int64(d))
	}
	t.konst, t.hasConst = consts, true
	return t
}
