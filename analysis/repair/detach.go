package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Tensors into NumPy: a tensor that requires grad (a model's output, a parameter) cannot
// become an array until it is detached from the graph ("Can't call numpy() on Tensor that
// requires grad. Use tensor.detach().numpy() instead."), and a tensor on an accelerator
// must be copied to the host first ("Can't convert cuda:0 device type tensor to numpy. Use
// Tensor.cpu() ..."). The conversion stays; the tensor is detached (and copied to the CPU
// when it lives elsewhere) on its way. A gradient is never wanted in an array, so nothing
// the cell computes changes.

func init() {
	register(family{name: "detach", gen: detachGen})
}

var (
	requiresGradRE = regexp.MustCompile(`Can't call numpy\(\) on Tensor that requires grad`)
	deviceNumpyRE  = regexp.MustCompile(`can't convert (\w+(?::\d+)?) device type tensor to numpy`)
)

func detachGen(in *Input) []Candidate {
	msg := in.message()
	grad := requiresGradRE.MatchString(msg)
	dev := deviceNumpyRE.FindStringSubmatch(strings.ToLower(msg))
	if !grad && dev == nil {
		return nil
	}
	// The .numpy() calls of the crash line whose tensor is not yet made convertible.
	var edits []finding.Edit
	var bases []string
	accel := dev != nil || movesToDevice(in.Facts)
	for _, e := range in.exprsOnLine(in.crashLine(), isNumpyCall) {
		attr := e.Value
		base := attr.Value
		if grad && endsWithCall(base, "detach") || !grad && endsWithCall(base, "cpu") {
			continue
		}
		v, known := in.value(base.Text)
		if known && grad && v.Kind == facts.KindTensor && v.RequiresGrad != nil && !*v.RequiresGrad && v.Device == "cpu" {
			continue // this one converts already: only the tensor in the graph is detached
		}
		if known && v.Device != "" && v.Device != "cpu" {
			accel = true
		}
		edits = append(edits, finding.Edit{Range: finding.Range{Start: attr.NameRange.Start, End: attr.NameRange.Start}})
		bases = append(bases, base.Text)
	}
	if len(edits) > 0 {
		return conversionCandidates(edits, bases, grad, accel, ".numpy()")
	}
	if !grad {
		return nil
	}
	// np.array(t) / np.asarray(t) call the tensor's __array__, which raises the same: the
	// tensor argument is detached.
	for _, e := range in.exprsOnLine(in.crashLine(), isArrayCall) {
		a := e.Args[0]
		if endsWithCall(a, "detach") || a.Kind == analysis.ExprList || a.Kind == analysis.ExprConst {
			continue
		}
		if v, ok := in.value(a.Text); ok && (v.Kind != facts.KindTensor || v.RequiresGrad != nil && !*v.RequiresGrad) {
			continue
		}
		text := a.Text
		if needsParens(a) {
			text = "(" + text + ")"
		}
		edits = append(edits, finding.Edit{Range: a.Range, NewText: text + ".detach()"})
		bases = append(bases, a.Text)
	}
	if len(edits) == 0 {
		// Any call that makes an array of its argument (plt.plot, pd.Series, a metric)
		// raises the same: the arguments the inspector knows to be in the graph are
		// detached.
		for _, c := range in.callsOnLine(in.crashLine()) {
			if c.Expr == nil {
				continue
			}
			for _, a := range c.Expr.Args {
				if v, ok := in.value(a.Text); ok && v.Kind == facts.KindTensor && v.RequiresGrad != nil && *v.RequiresGrad {
					edits = append(edits, finding.Edit{Range: a.Range, NewText: a.Text + ".detach()"})
					bases = append(bases, a.Text)
				}
			}
		}
	}
	if len(edits) == 0 {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Detach %s before making it an array", strings.Join(bases, ", ")), Edits: edits},
		Keeps: "the same values; an array cannot carry the gradient graph, so the tensor is detached from it first",
	}}
}

// conversionCandidates builds the .detach().numpy() (and .detach().cpu().numpy()) repairs
// from insertion points just before "numpy" in each `.numpy()`.
func conversionCandidates(at []finding.Edit, bases []string, grad, accel bool, call string) []Candidate {
	with := func(insert string) []finding.Edit {
		es := make([]finding.Edit, len(at))
		for i, e := range at {
			es[i] = finding.Edit{Range: e.Range, NewText: insert}
		}
		return es
	}
	who := strings.Join(bases, ", ")
	var out []Candidate
	if grad {
		host := Candidate{
			Fix:   finding.Fix{Title: "Detach and copy to the CPU first: .detach().cpu()" + call, Edits: with("detach().cpu().")},
			Keeps: fmt.Sprintf("the same values of %s; an array cannot carry the gradient graph, and NumPy reads only host memory", who),
		}
		plain := Candidate{
			Fix:   finding.Fix{Title: "Detach the tensor first: .detach()" + call, Edits: with("detach().")},
			Keeps: fmt.Sprintf("the same values of %s; an array cannot carry the gradient graph, so the tensor is detached from it first", who),
		}
		if accel {
			return append(out, host, plain)
		}
		return append(out, plain, host)
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: "Copy the tensor to the CPU first: .cpu()" + call, Edits: with("cpu().")},
		Keeps: fmt.Sprintf("the same values of %s; NumPy reads only host memory", who),
	}}
}

// isNumpyCall matches t.numpy() (no arguments).
func isNumpyCall(e *analysis.Expr) bool {
	return e.Kind == analysis.ExprCall && len(e.Args) == 0 && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "numpy" && e.Value.Value != nil
}

// isArrayCall matches np.array(x, ...) and np.asarray(x, ...).
func isArrayCall(e *analysis.Expr) bool {
	if e.Kind != analysis.ExprCall || len(e.Args) == 0 || e.Value == nil {
		return false
	}
	c, _ := e.Value.Chain()
	return c == "np.array" || c == "np.asarray" || c == "numpy.array" || c == "numpy.asarray"
}

// endsWithCall reports whether e is a call of method name (t.detach()).
func endsWithCall(e *analysis.Expr, name string) bool {
	return e != nil && e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == name
}

// needsParens reports whether a postfix (.T, .detach()) on e needs parentheses around it.
func needsParens(e *analysis.Expr) bool {
	switch e.Kind {
	case analysis.ExprName, analysis.ExprAttribute, analysis.ExprSubscript, analysis.ExprCall, analysis.ExprList, analysis.ExprTuple, analysis.ExprDict:
		return false
	}
	return true
}

// movesToDevice tells, from the cell's syntax tree, that its tensors live on an
// accelerator: a .cuda() call, or .to() of a device name, a "cuda" or "mps" string or a
// torch.device(...).
func movesToDevice(cf *analysis.CellFacts) bool {
	if cf == nil {
		return false
	}
	return len(walkExprs(cf.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
		if e.Kind != analysis.ExprCall || e.Value == nil || e.Value.Kind != analysis.ExprAttribute {
			return false
		}
		switch e.Value.Name {
		case "cuda":
			return true
		case "to":
			if len(e.Args) == 0 {
				return false
			}
			a := e.Args[0]
			s, _ := a.Const.(string)
			callee := ""
			if a.Kind == analysis.ExprCall && a.Value != nil {
				callee = calleeText(a)
			}
			return a.Kind == analysis.ExprName && a.Name == "device" || strings.HasPrefix(s, "cuda") || s == "mps" || callee == "torch.device"
		}
		return false
	})) > 0
}
