package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: numpy. matmul/dot inner dimensions, broadcasting of known shapes, reshape to a
// different size, concatenate/stack mismatches, axis out of range, constant index out of
// bounds, string keys on arrays; and the propagation of array shapes.

// arrayLike reports whether v is an ndarray or tensor with known shape.
func arrayLike(v *val) bool {
	return v != nil && (v.Kind == facts.KindNDArray || v.Kind == facts.KindTensor) && v.Shape != nil
}

// binop evaluates a binary operation and runs the operator rules.
func (c *checker) binop(e *analysis.Expr, a, b *val) *val {
	if a == nil || b == nil {
		return nil
	}
	if objectArith(c, e, a, b) || strConcat(c, e, a, b) {
		return nil
	}
	if e.Name == "@" {
		return matmul(c, e, a, b, e.Range)
	}
	switch e.Name {
	case "+", "-", "*", "/", "//", "%", "**":
	default:
		return nil
	}
	if a.hasConst && b.hasConst {
		return arithConst(e, a, b)
	}
	if r := seriesArith(e, a, b); r != nil {
		return r
	}
	if !(arrayLike(a) || isScalar(a)) || !(arrayLike(b) || isScalar(b)) || (!arrayLike(a) && !arrayLike(b)) {
		return nil
	}
	if a.Kind == facts.KindTensor && b.Kind == facts.KindTensor && a.Device != "" && b.Device != "" && deviceKind(a.Device) != deviceKind(b.Device) {
		reportDevice(c, e.Range, a, b, e.Args[1])
		return nil
	}
	out, ok := broadcast(a.Shape, b.Shape)
	if isScalar(a) {
		out, ok = b.Shape, true
	}
	if isScalar(b) {
		out, ok = a.Shape, true
	}
	if !ok {
		tensor := a.Kind == facts.KindTensor || b.Kind == facts.KindTensor
		exc, detail := "ValueError", fmt.Sprintf("operands could not be broadcast together with shapes %s %s", shapeTuple(a.Shape), shapeTuple(b.Shape))
		if tensor {
			exc, detail = "RuntimeError", "the size of tensor a must match the size of tensor b at a non-singleton dimension"
		}
		c.report(e.Range, finding.SeverityError, finding.BroadcastShape, exc,
			fmt.Sprintf("%s has shape %s and %s has shape %s, which do not broadcast (%s)", a.name, shapeTuple(a.Shape), b.name, shapeTuple(b.Shape), detail),
			0.95, []string{describe(a), describe(b)}, nil)
		return nil
	}
	r := &val{name: e.Text, ident: new(int)}
	base := a
	if !arrayLike(a) {
		base = b
	}
	r.Kind = base.Kind
	r.Shape = append([]int(nil), out...)
	r.Device = base.Device
	if a.Dtype == b.Dtype || !arrayLike(b) {
		r.Dtype = base.Dtype
	}
	return r
}

// seriesArith models arithmetic between a numeric Series and a number or another numeric
// Series: a numeric Series (float64 when / or a float takes part, else int64), so a later
// rule knows the result holds numbers. Two Series align on their index: length unknown.
func seriesArith(e *analysis.Expr, a, b *val) *val {
	num := func(v *val) (bool, bool) { // numeric, float
		d := v.Dtype
		if v.Kind == facts.KindInt {
			return true, false
		}
		if v.Kind == facts.KindFloat {
			return true, true
		}
		if v.Kind != facts.KindSeries {
			return false, false
		}
		switch {
		case strings.HasPrefix(d, "float"):
			return true, true
		case strings.HasPrefix(d, "int"), strings.HasPrefix(d, "uint"):
			return true, false
		}
		return false, false
	}
	if a.Kind != facts.KindSeries && b.Kind != facts.KindSeries {
		return nil
	}
	na, fa := num(a)
	nb, fb := num(b)
	if !na || !nb {
		return nil
	}
	r := &val{name: e.Text, ident: new(int)}
	r.Kind = facts.KindSeries
	r.Dtype = "int64"
	if fa || fb || e.Name == "/" || e.Name == "**" {
		r.Dtype = "float64"
	}
	if a.Kind != facts.KindSeries || b.Kind != facts.KindSeries {
		s := a
		if s.Kind != facts.KindSeries {
			s = b
		}
		r.Shape = append([]int(nil), s.Shape...)
	}
	return r
}

// isScalar reports whether v is a Python number.
func isScalar(v *val) bool {
	return v != nil && (v.Kind == facts.KindInt || v.Kind == facts.KindFloat || v.Kind == facts.KindBool || v.Kind == facts.KindNumpyScalar)
}

// arithConst folds integer constants (for shapes such as 28*28).
func arithConst(e *analysis.Expr, a, b *val) *val {
	x, ok1 := a.konst.(int64)
	y, ok2 := b.konst.(int64)
	if !ok1 || !ok2 {
		return nil
	}
	switch e.Name {
	case "+":
		return constVal(x+y, e.Text)
	case "-":
		return constVal(x-y, e.Text)
	case "*":
		return constVal(x*y, e.Text)
	case "//":
		if y != 0 {
			return constVal(x/y, e.Text)
		}
	}
	return nil
}

// broadcast computes numpy's broadcast shape; unknown dimensions (-1) match anything.
func broadcast(a, b []int) ([]int, bool) {
	n := len(a)
	if len(b) > n {
		n = len(b)
	}
	out := make([]int, n)
	for i := 1; i <= n; i++ {
		x, y := 1, 1
		if i <= len(a) {
			x = a[len(a)-i]
		}
		if i <= len(b) {
			y = b[len(b)-i]
		}
		switch {
		case x < 0 || y < 0:
			out[n-i] = -1
		case x == y || y == 1:
			out[n-i] = x
		case x == 1:
			out[n-i] = y
		default:
			return nil, false
		}
	}
	return out, true
}

// matmul checks a @ b (numpy or torch) and returns the result shape.
func matmul(c *checker, e *analysis.Expr, a, b *val, r finding.Range) *val {
	if !arrayLike(a) || !arrayLike(b) || len(a.Shape) == 0 || len(b.Shape) == 0 {
		return nil
	}
	tensor := a.Kind == facts.KindTensor || b.Kind == facts.KindTensor
	if tensor && a.Kind == b.Kind && a.Device != "" && b.Device != "" && deviceKind(a.Device) != deviceKind(b.Device) {
		reportDevice(c, r, a, b, nil)
		return nil
	}
	ka := a.Shape[len(a.Shape)-1]
	kb := b.Shape[0]
	if len(b.Shape) >= 2 {
		kb = b.Shape[len(b.Shape)-2]
	}
	if ka >= 0 && kb >= 0 && ka != kb {
		exc := "ValueError"
		detail := fmt.Sprintf("matmul: size %d is different from %d", kb, ka)
		if tensor {
			exc = "RuntimeError"
			if len(a.Shape) == 2 && len(b.Shape) == 2 {
				detail = fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", a.Shape[0], a.Shape[1], b.Shape[0], b.Shape[1])
			} else {
				detail = "the inner dimensions differ"
			}
		}
		c.report(r, finding.SeverityError, finding.MatmulShape, exc,
			fmt.Sprintf("cannot multiply %s %s by %s %s: inner dimensions %d and %d differ (%s)", a.name, shapeTuple(a.Shape), b.name, shapeTuple(b.Shape), ka, kb, detail),
			0.96, []string{describe(a), describe(b)}, nil)
		return nil
	}
	var shape []int
	switch {
	case len(a.Shape) == 2 && len(b.Shape) == 2:
		shape = []int{a.Shape[0], b.Shape[1]}
	case len(a.Shape) == 2 && len(b.Shape) == 1:
		shape = []int{a.Shape[0]}
	case len(a.Shape) == 1 && len(b.Shape) == 2:
		shape = []int{b.Shape[1]}
	case len(a.Shape) == 1 && len(b.Shape) == 1:
		shape = []int{}
	default:
		return nil
	}
	out := &val{name: e.Text, ident: new(int)}
	out.Kind, out.Shape, out.Dtype, out.Device = a.Kind, shape, a.Dtype, a.Device
	return out
}

// numpyAttr handles ndarray attributes.
func numpyAttr(c *checker, e *analysis.Expr, base *val) *val {
	switch e.Name {
	case "T":
		if base.Shape != nil {
			n := base.clone()
			n.name, n.ident = e.Text, new(int)
			for i, j := 0, len(n.Shape)-1; i < j; i, j = i+1, j-1 {
				n.Shape[i], n.Shape[j] = n.Shape[j], n.Shape[i]
			}
			return n
		}
	case "shape":
		if s, ok := base.shapeKnown(); ok {
			return shapeValue(e.Text, s)
		}
	case "size":
		if s, ok := base.shapeKnown(); ok {
			return constVal(int64(product(s)), e.Text)
		}
	case "ndim":
		if n, ok := base.ndim(); ok {
			return constVal(int64(n), e.Text)
		}
	}
	return &val{bound: base, name: e.Text}
}

// product multiplies dimensions.
func product(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// numpySubscript checks constant indices and string keys on arrays.
func numpySubscript(c *checker, e *analysis.Expr, base, idx *val) *val {
	if s, ok := constStr(idx); ok {
		c.report(e.Index.Range, finding.SeverityError, finding.InvalidIndex, "IndexError",
			fmt.Sprintf("%s is a numpy array, not a DataFrame, so it cannot be indexed by the string %s (only integers, slices, ... are valid indices)", base.name, pyRepr(s)),
			0.96, []string{describe(base)}, nil)
		return nil
	}
	return indexShape(c, e, base, idx, "IndexError")
}

// indexShape checks constant integer indices against known dimensions and computes the
// result shape of basic indexing (ints and full slices).
func indexShape(c *checker, e *analysis.Expr, base, idx *val, exc string) *val {
	if base.Shape == nil {
		return nil
	}
	parts := []*analysis.Expr{e.Index}
	if e.Index.Kind == analysis.ExprTuple {
		parts = e.Index.Args
	}
	if len(parts) > len(base.Shape) {
		return nil
	}
	var out []int
	for i, p := range parts {
		pv := c.vals[p]
		if p.Kind == analysis.ExprSlice {
			if len(p.Args) == 0 || (p.Args[0] == nil && (len(p.Args) < 2 || p.Args[1] == nil) && (len(p.Args) < 3 || p.Args[2] == nil)) {
				out = append(out, base.Shape[i])
			} else {
				out = append(out, -1)
			}
			continue
		}
		n, ok := constInt(pv)
		if !ok {
			return nil // fancy or unknown index
		}
		d := base.Shape[i]
		if d >= 0 && (n >= d || n < -d) {
			what := "index"
			if base.Kind == facts.KindTensor {
				what = "tensor index"
			}
			c.report(p.Range, finding.SeverityError, finding.IndexOutOfRange, exc,
				fmt.Sprintf("%s %d is out of bounds for axis %d of %s, which has size %d", what, n, i, base.name, d),
				0.96, []string{describe(base)}, nil)
			return nil
		}
	}
	out = append(out, base.Shape[len(parts):]...)
	r := &val{name: e.Text, ident: new(int)}
	r.Kind, r.Shape, r.Dtype, r.Device = base.Kind, out, base.Dtype, base.Device
	if base.Kind == facts.KindTensor {
		// t[1:, :] stays contiguous, t[:, 1:] does not: without tracking which slices are
		// full, say nothing.
		r.Contiguous = nil
	}
	return r
}

// numpyCall handles numpy functions and ndarray methods.
func numpyCall(c *checker, k *callInfo) (*val, bool) {
	q := k.qual
	if strings.HasPrefix(q, "numpy.") {
		switch strings.TrimPrefix(q, "numpy.") {
		case "array", "asarray":
			x := k.arg(0, "object")
			if x == nil {
				return nil, true
			}
			if x.Kind == facts.KindDataFrame || x.Kind == facts.KindSeries || x.Kind == facts.KindNDArray {
				r := toNumpy(x, k.e.Text)
				if d, ok := dtypeArg(k.kw["dtype"]); ok && r != nil {
					r.Dtype = d
				}
				return r, true
			}
			return nil, true
		case "dot", "matmul":
			if len(k.args) >= 2 {
				return matmul(c, k.e, k.args[0], k.args[1], k.e.Range), true
			}
		case "reshape":
			if len(k.args) >= 2 && k.args[0] != nil && k.args[0].Kind == facts.KindNDArray {
				return reshape(c, k, k.args[0], k.e.Args[1:], k.args[1:]), true
			}
		case "concatenate", "stack", "vstack", "hstack":
			return concat(c, k, strings.TrimPrefix(q, "numpy.")), true
		case "zeros", "ones", "empty", "random.rand", "random.randn", "full":
			return newArray(k, q), true
		case "sum", "mean", "max", "min", "argmax", "argmin", "std", "var", "median":
			if x := k.arg(0, "a"); x != nil && x.Kind == facts.KindNDArray {
				checkAxis(c, k, x)
			}
			return nil, true
		case "savetxt":
			x := k.arg(1, "X")
			if nd, ok := x.ndim(); ok && x.Kind == facts.KindNDArray && nd > 2 {
				c.report(k.argExpr(1, "X").Range, finding.SeverityError, finding.NdimMismatch, "ValueError",
					fmt.Sprintf("%s is %d-D, but np.savetxt writes only 1-D or 2-D arrays (Expected 1D or 2D array, got %dD array instead)", x.name, nd, nd),
					0.95, []string{describe(x)}, nil)
			}
			return nil, true
		}
		return nil, false
	}
	if k.recv == nil || k.recv.Kind != facts.KindNDArray {
		return nil, false
	}
	a := k.recv
	switch k.method {
	case "reshape":
		if len(k.e.Args) == 1 && k.args[0] != nil && k.args[0].Kind == facts.KindTuple {
			return reshape(c, k, a, k.e.Args[0].Args, k.args[0].elems), true
		}
		return reshape(c, k, a, k.e.Args, k.args), true
	case "sum", "mean", "max", "min", "argmax", "argmin", "std", "var", "cumsum", "any", "all", "prod":
		checkAxis(c, k, a)
		return reduced(k, a), true
	case "astype":
		n := a.clone()
		n.name, n.ident = k.e.Text, new(int)
		if d, ok := astypeArg(c, k); ok {
			n.Dtype = d
		} else {
			n.Dtype = ""
		}
		checkAstype(c, k, a)
		return n, true
	case "flatten", "ravel":
		if s, ok := a.shapeKnown(); ok {
			n := &val{name: k.e.Text, ident: new(int)}
			n.Kind, n.Shape, n.Dtype = facts.KindNDArray, []int{product(s)}, a.Dtype
			return n, true
		}
		return nil, true
	case "copy":
		n := a.clone()
		n.name, n.ident = k.e.Text, new(int)
		return n, true
	}
	return nil, false
}

// newArray models np.zeros((a, b)) and friends with constant shapes.
func newArray(k *callInfo, q string) *val {
	var dims []*val
	if strings.HasPrefix(q, "numpy.random.") {
		dims = k.args
	} else if s := k.arg(0, "shape"); s != nil {
		if s.Kind == facts.KindTuple || s.Kind == facts.KindList {
			dims = s.elems
		} else {
			dims = []*val{s}
		}
	}
	shape := []int{}
	for _, d := range dims {
		n, ok := constInt(d)
		if !ok {
			return nil
		}
		shape = append(shape, n)
	}
	v := &val{name: k.e.Text, ident: new(int)}
	v.Kind, v.Shape, v.Dtype = facts.KindNDArray, shape, "float64"
	if d, ok := dtypeArg(k.kw["dtype"]); ok {
		v.Dtype = d
	}
	return v
}

// reshape checks a reshape/view to constant dimensions and returns the new shape.
func reshape(c *checker, k *callInfo, a *val, dimExprs []*analysis.Expr, dims []*val) *val {
	size, ok := a.shapeKnown()
	if !ok || len(dims) == 0 {
		return nil
	}
	total := product(size)
	var want []int
	known, infer := 1, -1
	for i, d := range dims {
		n, ok := constInt(d)
		if !ok {
			return nil
		}
		if n == -1 {
			if infer >= 0 {
				return nil
			}
			infer = i
		} else {
			known *= n
		}
		want = append(want, n)
	}
	bad := false
	switch {
	case infer < 0 && known != total:
		bad = true
	case infer >= 0 && (known == 0 || total%known != 0):
		bad = true
	}
	tensor := a.Kind == facts.KindTensor
	if bad {
		exc := "ValueError"
		detail := fmt.Sprintf("cannot reshape array of size %d into shape %s", total, shapeTuple(want))
		if tensor {
			exc = "RuntimeError"
			parts := make([]string, len(want))
			for i, w := range want {
				parts[i] = itoa(w)
			}
			detail = fmt.Sprintf("shape '[%s]' is invalid for input of size %d", strings.Join(parts, ", "), total)
		}
		c.report(k.e.Range, finding.SeverityError, finding.ReshapeSize, exc,
			fmt.Sprintf("%s has %d elements %s, which cannot be arranged as %s (%s)", a.name, total, shapeTuple(size), shapeTuple(want), detail),
			0.96, []string{describe(a)}, nil)
		return nil
	}
	if infer >= 0 {
		want[infer] = total / known
	}
	n := &val{name: k.e.Text, ident: new(int)}
	n.Kind, n.Shape, n.Dtype, n.Device = a.Kind, want, a.Dtype, a.Device
	n.HasNaN = a.HasNaN
	n.Columns = nil
	if tensor {
		t := true
		n.Contiguous = &t
	}
	_ = dimExprs
	return n
}

// checkAxis reports a constant axis outside the array's dimensions.
// reduced models the result of an ndarray reduction (a.mean(axis=1)): the reduced dimension
// goes (or stays as 1 with keepdims=True); no axis gives a scalar. Anything not constant
// leaves the result unknown, and so does a full reduction to a scalar.
func reduced(k *callInfo, a *val) *val {
	shape, ok := a.shapeKnown()
	if !ok || k.has(-1, "out") || k.has(-1, "where") {
		return nil
	}
	keep := false
	if k.has(-1, "keepdims") {
		kd := k.kw["keepdims"]
		if kd == nil || !kd.hasConst {
			return nil
		}
		b, isBool := kd.konst.(bool)
		if !isBool {
			return nil
		}
		keep = b
	}
	if k.method == "argmax" || k.method == "argmin" || k.method == "cumsum" {
		if keep {
			return nil
		}
	}
	out := &val{name: k.e.Text, origin: fmt.Sprintf("line %d", k.e.Range.Start.Line+1), ident: new(int)}
	out.Kind = facts.KindNDArray
	switch k.method {
	case "mean", "std", "var":
		if strings.HasPrefix(a.Dtype, "float") {
			out.Dtype = a.Dtype
		} else if a.Dtype != "" && !isObjectDtype(a.Dtype) {
			out.Dtype = "float64"
		}
	case "argmax", "argmin":
		out.Dtype = "int64"
	case "any", "all":
		out.Dtype = "bool"
	case "max", "min", "cumsum":
		out.Dtype = a.Dtype
	}
	if !k.has(0, "axis") {
		if k.method == "cumsum" {
			out.Shape = []int{product(shape)}
			return out
		}
		if keep {
			out.Shape = make([]int, len(shape))
			for i := range out.Shape {
				out.Shape[i] = 1
			}
			return out
		}
		return nil // a numpy scalar: other rules model scalars by kind, not by shape ()
	}
	ax, ok := constInt(k.arg(0, "axis"))
	nd := len(shape)
	if !ok || ax >= nd || ax < -nd {
		return nil
	}
	if ax < 0 {
		ax += nd
	}
	switch {
	case k.method == "cumsum":
		out.Shape = append([]int(nil), shape...)
	case keep:
		out.Shape = append([]int(nil), shape...)
		out.Shape[ax] = 1
	default:
		out.Shape = append(append([]int(nil), shape[:ax]...), shape[ax+1:]...)
	}
	return out
}

func checkAxis(c *checker, k *callInfo, a *val) {
	axExpr := k.argExpr(-1, "axis")
	if axExpr == nil {
		return
	}
	ax, ok := constInt(k.kw["axis"])
	nd, known := a.ndim()
	if !ok || !known {
		return
	}
	if ax >= nd || ax < -nd {
		exc := "AxisError"
		if a.Kind == facts.KindTensor {
			exc = "IndexError"
		}
		c.report(axExpr.Range, finding.SeverityError, finding.AxisOutOfRange, exc,
			fmt.Sprintf("axis %d is out of bounds for %s, which has %d dimension(s)", ax, a.name, nd),
			0.96, []string{describe(a)}, nil)
	}
}

// concat checks np.concatenate/stack/vstack/hstack over a list of arrays of known shapes.
func concat(c *checker, k *callInfo, fn string) *val {
	seq := k.arg(0, "arrays")
	if seq == nil || seq.elems == nil || len(seq.elems) < 2 {
		return nil
	}
	var shapes [][]int
	for _, el := range seq.elems {
		if el == nil || (el.Kind != facts.KindNDArray && el.Kind != facts.KindNumpyScalar) {
			return nil
		}
		s, ok := el.shapeKnown()
		if !ok {
			return nil
		}
		if len(s) == 0 && fn == "concatenate" {
			c.report(k.e.Range, finding.SeverityError, finding.ConcatShape, "ValueError",
				fmt.Sprintf("%s is zero-dimensional (a scalar), and np.concatenate cannot join scalars (zero-dimensional arrays cannot be concatenated)", el.name),
				0.95, []string{describe(el)}, nil)
			return nil
		}
		shapes = append(shapes, s)
	}
	axis := 0
	if fn == "hstack" {
		axis = 1
		if len(shapes[0]) == 1 {
			axis = 0
		}
	}
	if a, ok := constInt(k.kw["axis"]); ok {
		axis = a
	} else if k.has(-1, "axis") {
		return nil
	}
	if fn == "vstack" {
		for i, s := range shapes {
			if len(s) == 1 {
				shapes[i] = []int{1, s[0]}
			}
		}
	}
	first := shapes[0]
	for i, s := range shapes[1:] {
		bad, why := false, ""
		if fn == "stack" {
			if !equalInts(s, first) {
				bad, why = true, fmt.Sprintf("stack needs equal shapes, got %s and %s (all input arrays must have the same shape)", shapeTuple(first), shapeTuple(s))
			}
		} else {
			if len(s) != len(first) {
				bad, why = true, fmt.Sprintf("the arrays have %d and %d dimensions", len(first), len(s))
			} else {
				ax := axis
				if ax < 0 {
					ax += len(first)
				}
				if ax < 0 || ax >= len(first) {
					return nil
				}
				for d := range s {
					if d != ax && s[d] != first[d] {
						bad, why = true, fmt.Sprintf("along dimension %d the array at index 0 has size %d and the array at index %d has size %d", d, first[d], i+1, s[d])
						break
					}
				}
			}
		}
		if bad {
			c.report(k.e.Range, finding.SeverityError, finding.ConcatShape, "ValueError",
				fmt.Sprintf("np.%s cannot join these arrays: %s", fn, why),
				0.95, describeAll(seq.elems), nil)
			return nil
		}
	}
	if fn == "stack" {
		return nil
	}
	out := append([]int(nil), first...)
	ax := axis
	if ax < 0 {
		ax += len(out)
	}
	for _, s := range shapes[1:] {
		out[ax] += s[ax]
	}
	v := &val{name: k.e.Text, ident: new(int)}
	v.Kind, v.Shape = facts.KindNDArray, out
	return v
}

func describeAll(vs []*val) []string {
	var out []string
	for _, v := range vs {
		out = append(out, describe(v))
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
