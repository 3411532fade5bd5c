package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Dimensions written as numbers that the data does not have. A reshape or view whose sizes
// multiply to more or fewer elements than there are ("cannot reshape array of size 6272
// into shape (8,28,27)", "shape '[8, 28, 27]' is invalid for input of size 6272") gets -1
// in the place of one size, wherever the others divide the element count: the data
// decides that dimension. A dimension argument one off (unsqueeze(0) where the channel
// axis is 1, torch.cat(dim=0) of rows that differ in width) is tried at the neighbouring
// dimensions; the shadow run keeps the one the rest of the cell runs with.

func init() {
	register(family{name: "dimension", gen: inferDimensionGen})
	register(family{name: "dimension-shift", gen: shiftDimensionGen, broad: true})
}

// dimensionArgs are the calls whose integer argument (or dim=/axis= keyword) names a
// dimension.
var dimensionArgs = map[string]bool{"unsqueeze": true, "squeeze": true, "cat": true, "stack": true, "concatenate": true,
	"softmax": true, "log_softmax": true, "argmax": true, "expand_dims": true, "flatten": true}

func inferDimensionGen(in *Input) []Candidate {
	if n, ok := elementCount(in.message()); ok && in.Facts != nil {
		return inferDimension(in, n)
	}
	return nil
}

func shiftDimensionGen(in *Input) []Candidate {
	msg := in.message()
	if e := in.exception(); (e != "RuntimeError" && e != "ValueError" && e != "IndexError") || in.Facts == nil {
		return nil
	}
	if strings.Contains(msg, "size") || strings.Contains(msg, "dimension") || strings.Contains(msg, "shape") || strings.Contains(msg, "channels") {
		return shiftDimension(in)
	}
	return nil
}

// elementCount reads the element count off a reshape or view error.
func elementCount(msg string) (int, bool) {
	for _, p := range []string{"cannot reshape array of size ", "is invalid for input of size "} {
		if i := strings.Index(msg, p); i >= 0 {
			rest := msg[i+len(p):]
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(rest[:j])
			return n, err == nil && n > 0
		}
	}
	return 0, false
}

// inferDimension proposes -1 for one literal size of each reshape or view on the crash
// line, where the other sizes divide n.
func inferDimension(in *Input, n int) []Candidate {
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "reshape" || e.Value.Name == "view")
	}) {
		args := c.Args
		if len(args) == 1 && args[0] != nil && args[0].Kind == analysis.ExprTuple {
			args = args[0].Args
		}
		sizes := make([]int, len(args))
		known := true
		for i, a := range args {
			v, ok := a.Const.(int64)
			if a.Kind != analysis.ExprConst || !ok || v == -1 {
				known = false
				break
			}
			sizes[i] = int(v)
		}
		if !known || len(sizes) < 2 {
			continue
		}
		for i := range sizes {
			rest := 1
			for j, s := range sizes {
				if j != i {
					rest *= s
				}
			}
			if rest <= 0 || n%rest != 0 {
				continue
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Let the data decide dimension %d (-1 for %d: %d elements)", i, sizes[i], n), Edits: []finding.Edit{replaceAt(args[i].Range, "-1")}},
				Keeps: fmt.Sprintf("the other dimensions as written; the data's %d elements fill dimension %d", n, i),
			})
		}
	}
	return out
}

// shiftDimension proposes the neighbouring dimensions for the dimension argument of each
// call on the crash line that takes one.
func shiftDimension(in *Input) []Candidate {
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && e.Value != nil }) {
		name := c.Value.Name // the function's or the method's
		if !dimensionArgs[name] {
			continue
		}
		var arg *analysis.Expr
		for _, k := range c.Keywords {
			if k.Name == "dim" || k.Name == "axis" {
				arg = k.Value
			}
		}
		if arg == nil {
			switch {
			case (name == "unsqueeze" || name == "squeeze" || name == "softmax" || name == "log_softmax" || name == "argmax" || name == "flatten") && c.Value.Kind == analysis.ExprAttribute && len(c.Args) == 1:
				arg = c.Args[0]
			case len(c.Args) == 2:
				arg = c.Args[1] // torch.cat(ts, 1), np.expand_dims(a, 0)
			}
		}
		v, ok := dimLiteral(arg)
		if !ok {
			continue
		}
		for _, d := range []int64{v + 1, v - 1, -1} {
			if d == v || d < -1 || d > 4 {
				continue
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Use dimension %d in %s, not %d", d, name, v), Edits: []finding.Edit{replaceAt(arg.Range, strconv.FormatInt(d, 10))}},
				Keeps: fmt.Sprintf("the same %s, along the dimension the data has there", name),
			})
		}
	}
	return out
}

// dimLiteral returns the value of a dimension written as a literal, negative ones included.
func dimLiteral(e *analysis.Expr) (int64, bool) {
	if e != nil && e.Kind == analysis.ExprUnaryOp && e.Name == "-" && len(e.Args) == 1 {
		v, ok := dimLiteral(e.Args[0])
		return -v, ok
	}
	if e == nil || e.Kind != analysis.ExprConst {
		return 0, false
	}
	v, ok := e.Const.(int64)
	return v, ok
}
