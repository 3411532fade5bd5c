package rules

import (
	"fmt"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Tensor methods: how view, reshape, permute, to, float, ... transform the tensor facts,
// and the rules on them (view of a non-contiguous tensor, dim out of range, backward and
// item of a non-scalar, .numpy() of a cuda tensor).

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
			c.report(rr, finding.SeverityError, finding.ViewNonContiguous, "RuntimeError",
				fmt.Sprintf("%s is not contiguous in memory (after a transpose/permute), so .view() fails (view size is not compatible with input tensor's size and stride); use .reshape() or call .contiguous() first", t.name),
				0.9, []string{describe(t)},
				[]finding.Fix{replaceFix("Use .reshape()", rr, "reshape", true),
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
					c.report(k.argExpr(-1, "dim").Range, finding.SeverityError, finding.AxisOutOfRange, "IndexError",
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
				c.report(k.e.Value.NameRange, finding.SeverityError, finding.NonScalar, "RuntimeError",
					fmt.Sprintf("%s has shape %s, and backward() without a gradient needs a single value (grad can be implicitly created only for scalar outputs); reduce it first, e.g. .mean()", t.name, shapeTuple(s)),
					0.93, []string{describe(t)}, []finding.Fix{replaceFix("Reduce to a scalar first", k.e.Value.NameRange, "mean().backward", false)})
			} else {
				c.report(k.e.Value.NameRange, finding.SeverityError, finding.NonScalar, "ValueError",
					fmt.Sprintf("%s has %d elements, and .item() needs exactly one (only one element tensors can be converted to Python scalars)", t.name, product(s)),
					0.93, []string{describe(t)}, []finding.Fix{replaceFix("Convert to a list", k.e.Value.NameRange, "tolist", false)})
			}
		}
		return nil, true
	case "numpy":
		if deviceKind(t.Device) == "cuda" {
			c.report(k.e.Value.NameRange, finding.SeverityError, finding.DeviceMismatch, "TypeError",
				fmt.Sprintf("%s lives on %s; .numpy() needs a CPU tensor (can't convert cuda tensor to numpy); call .cpu() first", t.name, t.Device),
				0.93, []string{describe(t)}, []finding.Fix{replaceFix("Move to CPU first", k.e.Value.NameRange, "cpu().numpy", true)})
			return nil, true
		}
		n := toNumpy(t, k.e.Text)
		return n, true
	}
	return nil, false
}
