package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// The PyTorch family: Linear in_features and Conv in_channels vs the input, matmul shapes,
// device mismatch, dtype mismatch (float64 input into float32 weights, float targets for
// CrossEntropyLoss/NLLLoss, integer targets for BCE), view on non-contiguous tensors,
// view/reshape sizes; and the propagation of tensor shape, dtype and device through
// conversions, modules and Sequential stacks. This file: dtypes, devices, tensor
// attributes, layer constructors, torch functions and tensors built from data; tensor
// methods are in torch_tensor.go, module calls in torch_modules.go, device mismatches in
// torch_devices.go, losses in torch_loss.go.

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
			c.report(k.e.Range, finding.SeverityError, finding.DtypeMismatch, "TypeError",
				fmt.Sprintf("%s is an object array (mixed or string values), which torch cannot turn into a tensor (can't convert np.ndarray of type numpy.object_)", x.name),
				0.93, []string{describe(x)},
				[]finding.Fix{replaceFix("Convert to float32 first", k.e.Args[0].Range, k.e.Args[0].Text+".astype(np.float32)", false)})
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
