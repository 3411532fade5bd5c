package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: PyTorch. Linear in_features and Conv in_channels vs the input, matmul shapes,
// device mismatch, dtype mismatch (float64 input into float32 weights, float targets for
// CrossEntropyLoss/NLLLoss, integer targets for BCE), view on non-contiguous tensors,
// view/reshape sizes; and the propagation of tensor shape, dtype and device through
// conversions, modules and Sequential stacks.

// tdtype normalises a dtype to torch's name: float64 -> torch.float64.
func tdtype(d string) string {
	if d == "" {
		return ""
	}
	d = strings.TrimPrefix(d, "torch.")
	switch d {
	case "float", "float32":
		return "torch.float32"
	case "double", "float64":
		return "torch.float64"
	case "half", "float16":
		return "torch.float16"
	case "long", "int64":
		return "torch.int64"
	case "int", "int32":
		return "torch.int32"
	}
	return "torch." + d
}

// isFloatT reports floating torch dtypes.
func isFloatT(d string) bool {
	return strings.HasPrefix(tdtype(d), "torch.float") || d == "torch.bfloat16"
}

// deviceKind reduces "cuda:0" to "cuda".
func deviceKind(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 {
		return d[:i]
	}
	return d
}

// deviceArg reads a device from 'cuda', torch.device('cuda'), or a device variable.
func deviceArg(v *val) string {
	if v == nil {
		return ""
	}
	if s, ok := constStr(v); ok {
		return s
	}
	if strings.Contains(v.Repr, "type='cuda'") {
		return "cuda"
	}
	if strings.Contains(v.Repr, "type='cpu'") || v.Repr == "cpu" {
		return "cpu"
	}
	if v.Device != "" && v.Kind == "" {
		return v.Device
	}
	return ""
}

// torchDtypeArg reads torch.float32 and friends.
func torchDtypeArg(v *val) string {
	if v == nil {
		return ""
	}
	if strings.HasPrefix(v.qual, "torch.") {
		return tdtype(v.qual)
	}
	if strings.HasPrefix(v.Repr, "torch.") {
		return tdtype(v.Repr)
	}
	return ""
}

// newTensor builds a tensor value.
func newTensor(text string, shape []int, dtype, device string) *val {
	v := &val{name: text, ident: new(int)}
	v.Kind, v.Shape, v.Dtype, v.Device = facts.KindTensor, shape, dtype, device
	t := true
	v.Contiguous = &t
	return v
}

// torchAttr handles tensor attributes.
func torchAttr(c *checker, e *analysis.Expr, base *val) *val {
	switch e.Name {
	case "T", "mT":
		if base.Shape != nil {
			nd := len(base.Shape)
			perm := make([]int, nd)
			for i := range perm {
				perm[i] = nd - 1 - i
			}
			if e.Name == "mT" {
				if nd < 2 {
					return nil
				}
				for i := range perm {
					perm[i] = i
				}
				perm[nd-2], perm[nd-1] = nd-1, nd-2
			}
			return permuted(base, perm, e.Text)
		}
	case "shape":
		return numpyAttr(c, e, base)
	}
	return &val{bound: base, name: e.Text}
}

// permuted is t with its dimensions reordered by perm (result dimension i is t's perm[i]).
// Contiguity follows from t's: a C-contiguous tensor stays contiguous only when the
// dimensions larger than 1 keep their order; of a tensor already not contiguous nothing is
// known (a Fortran-ordered one becomes contiguous when transposed).
func permuted(t *val, perm []int, text string) *val {
	n := t.clone()
	n.name, n.ident = text, new(int)
	shape := make([]int, len(perm))
	for i, p := range perm {
		if p < 0 || p >= len(t.Shape) {
			n.Shape, n.Contiguous = nil, nil
			return n
		}
		shape[i] = t.Shape[p]
	}
	n.Shape = shape
	n.Contiguous = nil
	if t.Contiguous == nil || !*t.Contiguous {
		return n
	}
	last, inOrder := -1, true
	for _, p := range perm {
		d := t.Shape[p]
		if d < 0 {
			return n // an unknown size might be 1
		}
		if d == 1 {
			continue
		}
		if p < last {
			inOrder = false
		}
		last = p
	}
	n.Contiguous = &inOrder
	return n
}

// tensorCompare models `t == 2` (and the other comparisons) of a tensor with a Python
// number: a bool tensor of the same shape on the same device.
func tensorCompare(e *analysis.Expr, a, b *val) *val {
	if len(e.Args) != 2 {
		return nil
	}
	switch e.Name {
	case "==", "!=", "<", ">", "<=", ">=":
	default:
		return nil
	}
	t, other := a, b
	if t == nil || t.Kind != facts.KindTensor {
		t, other = b, a
	}
	if t == nil || t.Kind != facts.KindTensor || other == nil || (other.Kind != facts.KindInt && other.Kind != facts.KindFloat) {
		return nil
	}
	out := newTensor(e.Text, append([]int(nil), t.Shape...), "torch.bool", t.Device)
	if t.Shape == nil {
		out.Shape = nil
	}
	out.origin = fmt.Sprintf("line %d", e.Range.Start.Line+1)
	return out
}

// torchSubscript checks constant indices on tensors.
func torchSubscript(c *checker, e *analysis.Expr, base, idx *val) *val {
	return indexShape(c, e, base, idx, "IndexError")
}

// layerCtor models nn.Linear(...), nn.Conv2d(...), nn.Sequential(...) and losses built in
// the cell.
func layerCtor(k *callInfo, class string) *val {
	intArg := func(i int, name string) *int {
		if n, ok := constInt(k.arg(i, name)); ok {
			return &n
		}
		return nil
	}
	m := &facts.Module{Class: class, Dtype: "torch.float32"}
	switch class {
	case "Linear":
		l := facts.Layer{Name: "", Class: class, InFeatures: intArg(0, "in_features"), OutFeatures: intArg(1, "out_features")}
		if d := torchDtypeArg(k.kw["dtype"]); d != "" {
			m.Dtype, l.Dtype = d, d
		}
		m.Layers = []facts.Layer{l}
	case "Conv1d", "Conv2d", "Conv3d":
		m.Layers = []facts.Layer{{Class: class, InChannels: intArg(0, "in_channels"), OutChannels: intArg(1, "out_channels")}}
	case "Embedding":
		m.Layers = []facts.Layer{{Class: class, NumEmbedding: intArg(0, "num_embeddings"), EmbeddingDim: intArg(1, "embedding_dim")}}
	case "LSTM", "GRU", "RNN":
		m.Layers = []facts.Layer{{Class: class, InFeatures: intArg(0, "input_size")}}
	case "BatchNorm1d", "BatchNorm2d":
		m.Layers = []facts.Layer{{Class: class, InFeatures: intArg(0, "num_features"), OutFeatures: intArg(0, "num_features")}}
	case "Sequential":
		var ctors []*analysis.Expr
		for _, a := range k.args {
			if a == nil || a.Module == nil || len(a.Module.Layers) == 0 {
				m.Layers = append(m.Layers, facts.Layer{Class: "?"})
				ctors = append(ctors, nil)
				continue
			}
			m.Layers = append(m.Layers, a.Module.Layers...)
			if len(a.layerCtors) == len(a.Module.Layers) {
				ctors = append(ctors, a.layerCtors...)
			} else {
				ctors = append(ctors, make([]*analysis.Expr, len(a.Module.Layers))...)
			}
		}
		v := moduleVal(k, m)
		v.layerCtors = ctors
		return v
	default:
		m.Layers = []facts.Layer{{Class: class}}
	}
	v := moduleVal(k, m)
	if len(m.Layers) == 1 {
		v.layerCtors = []*analysis.Expr{k.e}
	}
	return v
}

// moduleVal wraps a module built by the call k.
func moduleVal(k *callInfo, m *facts.Module) *val {
	if len(m.Layers) > 0 {
		first, last := m.Layers[0], m.Layers[len(m.Layers)-1]
		m.First, m.Last = &first, &last
	}
	v := &val{name: k.e.Text, origin: fmt.Sprintf("created on line %d", k.e.Range.Start.Line+1), ctor: k.e, ident: new(int)}
	v.Kind, v.Module, v.Device = facts.KindModule, m, "cpu"
	return v
}

// torchCall handles torch functions, tensor methods, module construction and module calls.
func torchCall(c *checker, k *callInfo) (*val, bool) {
	q := k.qual
	switch {
	case strings.HasPrefix(q, "torch.nn.functional."):
		fn := strings.TrimPrefix(q, "torch.nn.functional.")
		switch fn {
		case "cross_entropy", "nll_loss":
			checkLoss(c, k, map[string]string{"cross_entropy": "CrossEntropyLoss", "nll_loss": "NLLLoss"}[fn], k.arg(0, "input"), k.arg(1, "target"), k.argExpr(1, "target"))
			return nil, true
		}
		return nil, false
	case strings.HasPrefix(q, "torch.nn."):
		class := strings.TrimPrefix(q, "torch.nn.")
		if strings.Contains(class, ".") || class == "" || class[0] < 'A' || class[0] > 'Z' {
			return nil, false
		}
		return layerCtor(k, class), true
	case q == "torch.tensor" || q == "torch.from_numpy" || q == "torch.as_tensor" || q == "torch.Tensor" || q == "torch.FloatTensor" || q == "torch.LongTensor":
		return tensorFrom(c, k, strings.TrimPrefix(q, "torch.")), true
	case q == "torch.zeros" || q == "torch.ones" || q == "torch.randn" || q == "torch.rand" || q == "torch.empty":
		var shape []int
		dims := k.args
		if len(k.args) == 1 && k.args[0] != nil && (k.args[0].Kind == facts.KindTuple || k.args[0].Kind == facts.KindList) {
			dims = k.args[0].elems
		}
		for _, d := range dims {
			n, ok := constInt(d)
			if !ok {
				return nil, true
			}
			shape = append(shape, n)
		}
		dt := "torch.float32"
		if d := torchDtypeArg(k.kw["dtype"]); d != "" {
			dt = d
		}
		dev := "cpu"
		if k.has(-1, "device") {
			dev = deviceArg(k.kw["device"])
		}
		return newTensor(k.e.Text, shape, dt, dev), true
	case q == "torch.matmul" || q == "torch.mm":
		if len(k.args) >= 2 {
			return matmul(c, k.e, k.args[0], k.args[1], k.e.Range), true
		}
	case q == "torch.cat" || q == "torch.stack":
		return nil, true
	}
	// calling a module: model(x), criterion(out, y)
	if k.fn != nil && k.fn.Kind == facts.KindModule && k.fn.Module != nil {
		return moduleCall(c, k, k.fn), true
	}
	if k.recv == nil || k.recv.Kind != facts.KindTensor {
		if k.recv != nil && k.recv.Kind == facts.KindModule && k.method == "to" {
			n := k.recv.clone()
			if d := deviceArg(k.arg(0, "device")); d != "" {
				n.Device = d
			}
			if name := k.recvName(); name != "" {
				c.rebind(name, n)
			}
			return n, true
		}
		return nil, false
	}
	return tensorMethod(c, k, k.recv)
}

// tensorFrom models torch.tensor(x) / torch.from_numpy(x) / torch.FloatTensor(x).
func tensorFrom(c *checker, k *callInfo, fn string) *val {
	x := k.arg(0, "data")
	if x == nil {
		return nil
	}
	var shape []int
	dt := ""
	switch x.Kind {
	case facts.KindNDArray, facts.KindTensor:
		shape = append([]int(nil), x.Shape...)
		dt = tdtype(x.Dtype)
		if isObjectDtype(x.Dtype) && fn != "FloatTensor" {
			c.report(k.e.Range, analysis.SeverityError, finding.DtypeMismatch, "TypeError",
				fmt.Sprintf("%s is an object array (mixed or string values), which torch cannot turn into a tensor (can't convert np.ndarray of type numpy.object_)", x.name),
				0.93, []string{describe(x)},
				[]analysis.Fix{replaceFix("Convert to float32 first", k.e.Args[0].Range, k.e.Args[0].Text+".astype(np.float32)", false)})
			return nil
		}
	case facts.KindDataFrame, facts.KindSeries:
		if fn == "from_numpy" {
			return nil
		}
		return nil
	case facts.KindList:
		if n, ok := x.rows(); ok {
			shape = []int{n}
			if consts, ok := x.konst.([]any); ok && x.hasConst {
				dt = "torch.int64"
				for _, e := range consts {
					if _, isF := e.(float64); isF {
						dt = "torch.float32"
					}
				}
			} else {
				shape = nil
			}
		}
	default:
		return nil
	}
	switch fn {
	case "FloatTensor", "Tensor":
		dt = "torch.float32"
	case "LongTensor":
		dt = "torch.int64"
	}
	if d := torchDtypeArg(k.kw["dtype"]); d != "" {
		dt = d
	}
	dev := "cpu"
	if k.has(-1, "device") {
		dev = deviceArg(k.kw["device"])
	}
	t := newTensor(k.e.Text, shape, dt, dev)
	t.HasNaN = x.HasNaN
	if x.Kind == facts.KindNDArray || x.Kind == facts.KindTensor {
		// torch keeps the array's strides: a Fortran-ordered array gives a tensor that is
		// not contiguous (and becomes contiguous when transposed).
		t.Contiguous = x.Contiguous
	}
	return t
}

// tensorMethod models tensor methods.
func tensorMethod(c *checker, k *callInfo, t *val) (*val, bool) {
	cp := func() *val {
		n := t.clone()
		n.name, n.ident, n.fromKernel = k.e.Text, new(int), false
		n.origin = fmt.Sprintf("line %d", k.e.Range.Start.Line+1)
		return n
	}
	switch k.method {
	case "float", "double", "long", "int", "half", "bool":
		n := cp()
		n.Dtype = tdtype(k.method)
		return n, true
	case "to", "cuda", "cpu", "type":
		n := cp()
		switch k.method {
		case "cuda":
			n.Device = "cuda"
		case "cpu":
			n.Device = "cpu"
		case "to":
			for _, a := range append(append([]*val{}, k.args...), k.kw["device"], k.kw["dtype"]) {
				if d := torchDtypeArg(a); d != "" {
					n.Dtype = d
				} else if d := deviceArg(a); d != "" {
					n.Device = d
				} else if a != nil && a.Kind == facts.KindTensor {
					n.Dtype, n.Device = a.Dtype, a.Device
				} else if a != nil {
					n.Device = "" // a variable we cannot read
				}
			}
		case "type":
			n.Dtype = torchDtypeArg(k.arg(0, "dtype"))
		}
		return n, true
	case "contiguous", "clone", "detach":
		n := cp()
		if k.method != "detach" {
			tr := true
			n.Contiguous = &tr
		}
		return n, true
	case "t", "transpose", "permute":
		nd := len(t.Shape)
		var perm []int
		if t.Shape != nil {
			perm = make([]int, nd)
			for i := range perm {
				perm[i] = i
			}
		}
		switch {
		case perm == nil:
		case k.method == "t" && nd == 2:
			perm[0], perm[1] = 1, 0
		case k.method == "t" && nd < 2:
		case k.method == "transpose":
			a, ok1 := constInt(k.arg(0, "dim0"))
			b, ok2 := constInt(k.arg(1, "dim1"))
			if a < 0 {
				a += nd
			}
			if b < 0 {
				b += nd
			}
			if ok1 && ok2 && a >= 0 && b >= 0 && a < nd && b < nd {
				perm[a], perm[b] = perm[b], perm[a]
			} else {
				perm = nil
			}
		case k.method == "permute":
			dims := k.args
			if len(k.args) == 1 && k.args[0] != nil && (k.args[0].Kind == facts.KindTuple || k.args[0].Kind == facts.KindList) {
				dims = k.args[0].elems
			}
			if len(dims) != nd {
				perm = nil
				break
			}
			for i, d := range dims {
				x, ok := constInt(d)
				if x < 0 {
					x += nd
				}
				if !ok || x < 0 || x >= nd {
					perm = nil
					break
				}
				perm[i] = x
			}
		default:
			perm = nil
		}
		if perm == nil {
			n := cp()
			n.Shape, n.Contiguous = nil, nil
			return n, true
		}
		n := permuted(t, perm, k.e.Text)
		n.origin = fmt.Sprintf("line %d", k.e.Range.Start.Line+1)
		n.fromKernel = false
		return n, true
	case "view":
		if t.Contiguous != nil && !*t.Contiguous {
			rr := k.e.Value.NameRange
			c.report(rr, analysis.SeverityError, finding.ViewNonContiguous, "RuntimeError",
				fmt.Sprintf("%s is not contiguous in memory (after a transpose/permute), so .view() fails (view size is not compatible with input tensor's size and stride); use .reshape() or call .contiguous() first", t.name),
				0.9, []string{describe(t)},
				[]analysis.Fix{replaceFix("Use .reshape()", rr, "reshape", true),
					replaceFix("Call .contiguous() first", rr, "contiguous().view", false)})
			return nil, true
		}
		fallthrough
	case "reshape":
		if len(k.e.Args) == 1 && k.args[0] != nil && (k.args[0].Kind == facts.KindTuple || k.args[0].Kind == facts.KindList) && k.args[0].elems != nil {
			return reshape(c, k, t, k.e.Args[0].Args, k.args[0].elems), true
		}
		return reshape(c, k, t, k.e.Args, k.args), true
	case "sum", "mean", "max", "min", "argmax", "argmin", "softmax", "log_softmax":
		if k.has(-1, "dim") {
			if ax, ok := constInt(k.kw["dim"]); ok {
				if nd, known := t.ndim(); known && (ax >= nd || ax < -nd) {
					c.report(k.argExpr(-1, "dim").Range, analysis.SeverityError, finding.AxisOutOfRange, "IndexError",
						fmt.Sprintf("dim %d is out of range for %s, which has %d dimension(s) (Dimension out of range)", ax, t.name, nd),
						0.95, []string{describe(t)}, nil)
					return nil, true
				}
			}
		}
		dt := t.Dtype
		if k.method == "argmax" || k.method == "argmin" {
			dt = "torch.int64"
		}
		return newTensor(k.e.Text, nil, dt, t.Device), true
	case "unsqueeze":
		if ax, ok := constInt(k.arg(0, "dim")); ok && t.Shape != nil {
			nd := len(t.Shape)
			if ax < 0 {
				ax += nd + 1
			}
			if ax >= 0 && ax <= nd {
				n := cp()
				n.Shape = append(append(append([]int{}, t.Shape[:ax]...), 1), t.Shape[ax:]...)
				return n, true
			}
		}
		return nil, true
	case "backward", "item":
		if s, ok := t.shapeKnown(); ok && product(s) != 1 && len(k.e.Args) == 0 && len(k.e.Keywords) == 0 {
			if k.method == "backward" {
				c.report(k.e.Value.NameRange, analysis.SeverityError, finding.NonScalar, "RuntimeError",
					fmt.Sprintf("%s has shape %s, and backward() without a gradient needs a single value (grad can be implicitly created only for scalar outputs); reduce it first, e.g. .mean()", t.name, shapeTuple(s)),
					0.93, []string{describe(t)}, []analysis.Fix{replaceFix("Reduce to a scalar first", k.e.Value.NameRange, "mean().backward", false)})
			} else {
				c.report(k.e.Value.NameRange, analysis.SeverityError, finding.NonScalar, "ValueError",
					fmt.Sprintf("%s has %d elements, and .item() needs exactly one (only one element tensors can be converted to Python scalars)", t.name, product(s)),
					0.93, []string{describe(t)}, []analysis.Fix{replaceFix("Convert to a list", k.e.Value.NameRange, "tolist", false)})
			}
		}
		return nil, true
	case "numpy":
		if deviceKind(t.Device) == "cuda" {
			c.report(k.e.Value.NameRange, analysis.SeverityError, finding.DeviceMismatch, "TypeError",
				fmt.Sprintf("%s lives on %s; .numpy() needs a CPU tensor (can't convert cuda tensor to numpy); call .cpu() first", t.name, t.Device),
				0.93, []string{describe(t)}, []analysis.Fix{replaceFix("Move to CPU first", k.e.Value.NameRange, "cpu().numpy", true)})
			return nil, true
		}
		n := toNumpy(t, k.e.Text)
		return n, true
	}
	return nil, false
}

// moduleCall checks model(x) and criterion(out, target).
func moduleCall(c *checker, k *callInfo, m *val) *val {
	class := m.Module.Class
	switch class {
	case "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss":
		checkLoss(c, k, class, k.arg(0, "input"), k.arg(1, "target"), k.argExpr(1, "target"))
		return nil
	}
	x, xExpr := k.arg(0, "input"), k.argExpr(0, "input")
	if x == nil || x.Kind != facts.KindTensor || xExpr == nil {
		return nil
	}
	layers := m.Module.Layers
	if len(layers) == 0 && m.Module.First != nil {
		layers = []facts.Layer{*m.Module.First}
	}
	if len(layers) == 0 {
		return nil
	}
	exact := (class == "Sequential" && flatLayers(layers)) || (len(layers) == 1 && layers[0].Class == class)
	first := layers[0]
	// device: parameters on one device, input on another
	if dev := firstDevice(m); dev != "" && x.Device != "" && deviceKind(dev) != deviceKind(x.Device) && hasWeights(first.Class) {
		fix := replaceFix("Move the input to the model's device", xExpr.Range, xExpr.Text+".to("+deviceExpr(c, dev)+")", true)
		reportModule(c, exact, xExpr.Range, 0.93, finding.DeviceMismatch, "RuntimeError",
			fmt.Sprintf("%s is on %s but %s's parameters are on %s (Expected all tensors to be on the same device)", x.name, x.Device, m.name, dev),
			[]string{describe(x), describe(m)}, []analysis.Fix{fix})
		return nil
	}
	// dtype: float64 (or integer) input into float32 weights
	mdt := m.Module.Dtype
	if first.Dtype != "" {
		mdt = first.Dtype
	}
	if mdt != "" && x.Dtype != "" && tdtype(mdt) != tdtype(x.Dtype) && (first.Class == "Linear" || strings.HasPrefix(first.Class, "Conv")) {
		conv := map[string]string{"torch.float32": ".float()", "torch.float64": ".double()", "torch.float16": ".half()"}[tdtype(mdt)]
		var fixes []analysis.Fix
		if conv != "" {
			fixes = append(fixes, replaceFix("Convert the input with "+conv, xExpr.Range, xExpr.Text+conv, true))
		}
		detail := "mat1 and mat2 must have the same dtype"
		if strings.HasPrefix(first.Class, "Conv") {
			detail = "Input type and bias type should be the same"
		}
		reportModule(c, exact, xExpr.Range, 0.95, finding.DtypeMismatch, "RuntimeError",
			fmt.Sprintf("%s has dtype %s but %s's weights are %s (%s)", x.name, tdtype(x.Dtype), m.name, tdtype(mdt), detail),
			[]string{describe(x), describe(m)}, fixes)
		return nil
	}
	if first.Class == "Embedding" && x.Dtype != "" && isFloatT(x.Dtype) {
		reportModule(c, exact, xExpr.Range, 0.9, finding.DtypeMismatch, "RuntimeError",
			fmt.Sprintf("%s has dtype %s, but an Embedding takes integer indices (Long or Int)", x.name, tdtype(x.Dtype)),
			[]string{describe(x), describe(m)}, []analysis.Fix{replaceFix("Convert indices with .long()", xExpr.Range, xExpr.Text+".long()", true)})
		return nil
	}
	shape := append([]int(nil), x.Shape...)
	if shape == nil {
		return nil
	}
	limit := len(layers)
	if !exact {
		limit = 1
	}
	for i := 0; i < limit && shape != nil; i++ {
		l := layers[i]
		switch {
		case l.Class == "Linear":
			if len(shape) == 0 {
				return nil
			}
			last := shape[len(shape)-1]
			if l.InFeatures != nil && last >= 0 && last != *l.InFeatures {
				if !exact && mayReshapeTo(x.Shape, *l.InFeatures) {
					return nil // forward probably flattens or views the input first
				}
				rows := 1
				for _, d := range shape[:len(shape)-1] {
					rows *= d
				}
				out := "?"
				if l.OutFeatures != nil {
					out = itoa(*l.OutFeatures)
				}
				where := "its first layer"
				got := fmt.Sprintf("%s has %d (shape %s)", x.name, last, shapeTuple(x.Shape))
				if i > 0 {
					where = fmt.Sprintf("layer %d (%s)", i, l.Class)
					got = fmt.Sprintf("the layers before it produce %d (input %s of shape %s)", last, x.name, shapeTuple(x.Shape))
				}
				reportModule(c, exact, xExpr.Range, 0.96, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s expects %d input features at %s, but %s: mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%s)",
						m.name, *l.InFeatures, where, got, rows, last, *l.InFeatures, out),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "in_features", last))
				return nil
			}
			if l.OutFeatures == nil {
				return nil
			}
			shape[len(shape)-1] = *l.OutFeatures
		case strings.HasPrefix(l.Class, "Conv") && len(l.Class) == 6:
			spatial := int(l.Class[4] - '0')
			var ch int
			switch len(shape) {
			case spatial + 2:
				ch = shape[1]
			case spatial + 1:
				ch = shape[0]
			default:
				return nil
			}
			if l.InChannels != nil && ch >= 0 && ch != *l.InChannels {
				if !exact && containsInt(shape, *l.InChannels) {
					return nil // forward probably permutes the channels into place first
				}
				hint := ""
				fixes := layerArgFix(m, i, 0, "in_channels", ch)
				if len(shape) == spatial+2 && shape[len(shape)-1] == *l.InChannels && i == 0 {
					perm := channelsFirst(spatial)
					hint = "; the channels look last: move them to dimension 1 with " + perm
					fixes = []analysis.Fix{replaceFix("Move the channels first with "+perm, xExpr.Range, xExpr.Text+perm, true)}
				}
				reportModule(c, exact, xExpr.Range, 0.95, finding.ConvInChannels, "RuntimeError",
					fmt.Sprintf("%s's %s expects %d input channels, but %s has %d at dimension %d (shape %s)%s",
						m.name, l.Class, *l.InChannels, x.name, ch, len(shape)-spatial-1, shapeTuple(x.Shape), hint),
					[]string{describe(x), describe(m)}, fixes)
				return nil
			}
			if l.OutChannels == nil || len(shape) != spatial+2 {
				return nil
			}
			shape = append([]int{shape[0], *l.OutChannels}, minusOnes(spatial)...)
		case l.Class == "LSTM" || l.Class == "GRU" || l.Class == "RNN":
			if len(shape) == 0 {
				return nil
			}
			last := shape[len(shape)-1]
			if l.InFeatures != nil && last >= 0 && last != *l.InFeatures && (exact || !mayReshapeTo(x.Shape, *l.InFeatures)) {
				reportModule(c, exact, xExpr.Range, 0.95, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s's %s has input_size %d, but %s's last dimension is %d (input.size(-1) must be equal to input_size. Expected %d, got %d)",
						m.name, l.Class, *l.InFeatures, x.name, last, *l.InFeatures, last),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "input_size", last))
			}
			return nil
		case l.Class == "Embedding":
			if i == 0 && l.NumEmbedding != nil && x.Max != nil && *x.Max >= float64(*l.NumEmbedding) {
				reportModule(c, exact, xExpr.Range, 0.95, finding.IndexOutOfRange, "IndexError",
					fmt.Sprintf("%s holds index %g, but %s's Embedding has only %d rows (index out of range in self); raise num_embeddings or re-encode the indices", x.name, *x.Max, m.name, *l.NumEmbedding),
					[]string{describe(x) + fmt.Sprintf(", max %g", *x.Max), describe(m)}, nil)
				return nil
			}
			if l.EmbeddingDim == nil {
				return nil
			}
			shape = append(shape, *l.EmbeddingDim)
		case (l.Class == "BatchNorm1d" || l.Class == "BatchNorm2d") && l.InFeatures != nil && len(shape) >= 2:
			if shape[1] >= 0 && shape[1] != *l.InFeatures {
				reportModule(c, exact, xExpr.Range, 0.93, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s's %s at layer %d normalises %d features, but it receives %d (running_mean should contain %d elements not %d)",
						m.name, l.Class, i, *l.InFeatures, shape[1], shape[1], *l.InFeatures),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "num_features", shape[1]))
				return nil
			}
		case passThrough[l.Class]:
		case l.Class == "Flatten":
			if len(shape) < 2 {
				return nil
			}
			p := 1
			for _, d := range shape[1:] {
				if d < 0 {
					p = -1
					break
				}
				p *= d
			}
			shape = []int{shape[0], p}
		default:
			return nil
		}
	}
	if !exact {
		return nil
	}
	out := newTensor(k.e.Text, shape, x.Dtype, x.Device)
	out.origin = fmt.Sprintf("line %d", k.e.Range.Start.Line+1)
	return out
}

// reportModule reports what calling a module with its input will raise. Only a Sequential
// of known layers or a bare layer runs its registered layers in order on the input: a custom
// nn.Module's forward may view, flatten, permute, convert or move the input before its first
// registered layer, so there the finding is only an information hint that predicts no crash.
func reportModule(c *checker, exact bool, r analysis.Range, conf float64, code, exc, msg string, evidence []string, fixes []analysis.Fix) {
	if exact {
		c.report(r, analysis.SeverityError, code, exc, msg, conf, evidence, fixes)
		return
	}
	c.report(r, analysis.SeverityInfo, code, "",
		"if forward() passes the input to its first registered layer unchanged: "+msg+" (this module has its own forward, which may reshape the input first)",
		0.4, evidence, fixes)
}

// mayReshapeTo reports whether some view of shape could end in a dimension of n: n is the
// product of a run of its trailing dimensions (x.view(-1, 32*32*3), x.flatten(1)), or a
// dimension is unknown.
func mayReshapeTo(shape []int, n int) bool {
	p := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			return true
		}
		p *= shape[i]
		if p == n {
			return true
		}
	}
	return false
}

// channelsFirst is the permute call that moves the last dimension of a batch with spatial
// dimensions to dimension 1: .permute(0, 3, 1, 2) for images.
func channelsFirst(spatial int) string {
	dims := []string{"0", itoa(spatial + 1)}
	for d := 1; d <= spatial; d++ {
		dims = append(dims, itoa(d))
	}
	return ".permute(" + strings.Join(dims, ", ") + ")"
}

// containsInt reports whether xs holds n.
func containsInt(xs []int, n int) bool {
	for _, x := range xs {
		if x == n {
			return true
		}
	}
	return false
}

// layerArgFix rewrites argument pos (or keyword kw) of layer i's constructor to n, when the
// layer was built in this cell and the argument is an integer literal.
func layerArgFix(m *val, i, pos int, kw string, n int) []analysis.Fix {
	if i < 0 || i >= len(m.layerCtors) || m.layerCtors[i] == nil || n < 0 {
		return nil
	}
	ctor := m.layerCtors[i]
	a := ctor.Keyword(kw)
	if a == nil && pos < len(ctor.Args) && !ctor.Args[pos].Starred {
		a = ctor.Args[pos]
	}
	if a == nil || a.Kind != analysis.ExprConst {
		return nil
	}
	if _, isInt := a.Const.(int64); !isInt {
		return nil
	}
	return []analysis.Fix{replaceFix(fmt.Sprintf("Set %s to %d", kw, n), a.Range, itoa(n), true)}
}

var passThrough = set("ReLU", "Sigmoid", "Tanh", "Dropout", "LeakyReLU", "GELU", "Softmax", "LogSoftmax",
	"Identity", "ELU", "SiLU", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout2d", "ReLU6", "Softplus", "Mish", "PReLU")

func minusOnes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// hasWeights reports layer classes whose parameters take part in the first operation.
func hasWeights(class string) bool {
	return class == "Linear" || strings.HasPrefix(class, "Conv") || class == "Embedding" || strings.HasPrefix(class, "LSTM") || strings.HasPrefix(class, "GRU") || class == "RNN"
}

// firstDevice is where the module's first layer lives.
func firstDevice(m *val) string {
	if m.Module.First != nil && m.Module.First.Device != "" {
		return m.Module.First.Device
	}
	if len(m.Module.Layers) > 0 && m.Module.Layers[0].Device != "" {
		return m.Module.Layers[0].Device
	}
	return m.Device
}

// deviceExpr names a device in a fix: the user's `device` variable when it exists.
func deviceExpr(c *checker, dev string) string {
	if c.nameExists("device") {
		return "device"
	}
	return "'" + deviceKind(dev) + "'"
}

// reportDevice reports an operation between tensors on different devices.
func reportDevice(c *checker, r analysis.Range, a, b *val, bExpr *analysis.Expr) {
	var fixes []analysis.Fix
	if bExpr != nil {
		fixes = append(fixes, replaceFix("Move "+b.name+" to "+a.Device, bExpr.Range, bExpr.Text+".to("+deviceExpr(c, a.Device)+")", true))
	}
	c.report(r, analysis.SeverityError, finding.DeviceMismatch, "RuntimeError",
		fmt.Sprintf("%s is on %s and %s is on %s (Expected all tensors to be on the same device)", a.name, a.Device, b.name, b.Device),
		0.93, []string{describe(a), describe(b)}, fixes)
}

// checkLoss checks the target of classification losses.
func checkLoss(c *checker, k *callInfo, class string, input, target *val, tExpr *analysis.Expr) {
	if target == nil || tExpr == nil || target.Kind != facts.KindTensor {
		return
	}
	ev := []string{describe(target)}
	if input != nil {
		ev = append([]string{describe(input)}, ev...)
	}
	switch class {
	case "CrossEntropyLoss", "NLLLoss":
		if input != nil && input.Kind == facts.KindTensor && len(input.Shape) >= 1 && len(target.Shape) >= 1 &&
			input.Shape[0] >= 0 && target.Shape[0] >= 0 && input.Shape[0] != target.Shape[0] && len(input.Shape) >= 2 {
			c.report(tExpr.Range, analysis.SeverityError, finding.LossTarget, "ValueError",
				fmt.Sprintf("the batch sizes differ: %s has %d rows but the target %s has %d (Expected input batch_size (%d) to match target batch_size (%d))",
					input.name, input.Shape[0], target.name, target.Shape[0], input.Shape[0], target.Shape[0]),
				0.95, ev, nil)
			return
		}
		if tdtype(target.Dtype) == "torch.int64" && input != nil && input.Kind == facts.KindTensor && len(input.Shape) == 2 && len(target.Shape) == 2 {
			var fixes []analysis.Fix
			if target.Shape[1] == 1 {
				fixes = append(fixes, replaceFix("Drop the extra dimension with .squeeze(1)", tExpr.Range, tExpr.Text+".squeeze(1)", true))
			}
			c.report(tExpr.Range, analysis.SeverityError, finding.LossTarget, "RuntimeError",
				fmt.Sprintf("%s takes one class index per sample (a 1-D target of shape (%d,)) for a 2-D input, but %s has shape %s (0D or 1D target tensor expected, multi-target not supported)",
					class, input.Shape[0], target.name, shapeTuple(target.Shape)),
				0.95, ev, fixes)
			return
		}
		if target.Dtype == "" || tdtype(target.Dtype) == "torch.int64" {
			return
		}
		probs := class == "CrossEntropyLoss" && isFloatT(target.Dtype) && input != nil && input.Shape != nil && equalInts(input.Shape, target.Shape)
		if probs {
			return // class probabilities are a valid float target
		}
		found := map[string]string{"torch.float32": "Float", "torch.float64": "Double", "torch.int32": "Int", "torch.float16": "Half", "torch.uint8": "Byte", "torch.int16": "Short", "torch.bool": "Bool"}[tdtype(target.Dtype)]
		if found == "" {
			return
		}
		c.report(tExpr.Range, analysis.SeverityError, finding.LossTarget, "RuntimeError",
			fmt.Sprintf("%s needs class indices of dtype torch.int64 as target, but %s is %s (expected scalar type Long but found %s)", class, target.name, tdtype(target.Dtype), found),
			0.95, ev, []analysis.Fix{replaceFix("Convert the target with .long()", tExpr.Range, tExpr.Text+".long()", true)})
	case "BCELoss", "BCEWithLogitsLoss":
		if target.Dtype != "" && !isFloatT(target.Dtype) {
			c.report(tExpr.Range, analysis.SeverityError, finding.LossTarget, "RuntimeError",
				fmt.Sprintf("%s needs a float target, but %s is %s (Found dtype Long but expected Float)", class, target.name, tdtype(target.Dtype)),
				0.93, ev, []analysis.Fix{replaceFix("Convert the target with .float()", tExpr.Range, tExpr.Text+".float()", true)})
			return
		}
		if input != nil && input.Kind == facts.KindTensor {
			if a, ok1 := input.shapeKnown(); ok1 {
				if b, ok2 := target.shapeKnown(); ok2 && !equalInts(a, b) {
					c.report(tExpr.Range, analysis.SeverityError, finding.LossTarget, "ValueError",
						fmt.Sprintf("%s needs the target shape to equal the input shape, but %s is %s and %s is %s", class, input.name, shapeTuple(a), target.name, shapeTuple(b)),
						0.93, ev, nil)
				}
			}
		}
	}
}

// flatLayers reports whether a Sequential's leaves are its direct children ("0", "1", ...):
// leaves of nested blocks ("0.conv1", "0.downsample.0") run in an order only their forward
// knows.
func flatLayers(ls []facts.Layer) bool {
	for _, l := range ls {
		if strings.Contains(l.Name, ".") || l.Class == "?" {
			return false
		}
	}
	return true
}
