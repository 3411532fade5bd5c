package repair

import (
	"fmt"
	"regexp"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Concatenation along the wrong axis: "all the input array dimensions except for the
// concatenation axis must match exactly, but along dimension D, the array at index i has
// size N and the array at index j has size M". The arrays disagree along D, so they can be
// joined only along D: np.concatenate gets axis=D, np.hstack (axis 1) becomes np.vstack when
// D is 0 and np.vstack (axis 0) becomes np.hstack when D is 1 (features side by side, rows
// stacked). Every array stays and keeps its values; the arrays the inspector knows must
// agree on every other axis, and a 1-D array is never stacked into one long vector.

func init() {
	register(family{name: "concat-axis", gen: concatGen})
}

var torchCatRE = regexp.MustCompile(`Sizes of tensors must match except in dimension (\d+)\. Expected size (\d+) but got size (\d+) for tensor number (\d+)`)

var concatSizesRE = regexp.MustCompile(`except for the concatenation axis must match exactly, but along dimension (\d+), the array at index (\d+) has size (\d+) and the array at index (\d+) has size (\d+)`)

func concatGen(in *Input) []Candidate {
	if m := torchCatRE.FindStringSubmatch(in.message()); m != nil {
		return torchCatDim(in, atoi(m[1]))
	}
	m := concatSizesRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	dim := atoi(m[1])
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || len(c.Expr.Args) == 0 || c.Expr.Value == nil {
			continue
		}
		chain, _ := c.Expr.Value.Chain()
		mod, fn := splitChain(chain)
		if mod != "np" && mod != "numpy" {
			continue
		}
		seq := c.Expr.Args[0]
		known, ok := agreeExcept(in, seq, dim)
		if !ok {
			continue
		}
		sizes := fmt.Sprintf("the arrays have %s and %s along axis %d but agree on the others", m[3], m[5], dim)
		switch fn {
		case "concatenate":
			out = append(out, concatAxis(in, c.Expr, dim, sizes)...)
		case "hstack":
			if dim == 0 {
				out = append(out, renameCall(c.Expr, "vstack", "Stack the rows instead (np.vstack)", sizes+"; np.hstack joins along axis 1, np.vstack along axis 0"))
			}
		case "vstack":
			// np.vstack makes 1-D arrays rows: of different lengths they disagree along
			// axis 1 too, and np.hstack would chain them into one vector. Only arrays known
			// to be 2-D are put side by side.
			if dim == 1 && known >= 2 {
				out = append(out, renameCall(c.Expr, "hstack", "Put the arrays side by side instead (np.hstack)", sizes+"; np.vstack joins along axis 0, np.hstack along axis 1"))
			}
		}
	}
	return out
}

// splitChain splits "np.concatenate" into "np" and "concatenate".
func splitChain(chain string) (string, string) {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i] == '.' {
			return chain[:i], chain[i+1:]
		}
	}
	return "", chain
}

// agreeExcept checks the arrays of a literal sequence whose shapes the inspector knows:
// all must have the same number of dimensions and agree on every axis but dim. It returns
// the number of dimensions they are known to have (0 when none is known) and false when
// they cannot be joined along dim.
func agreeExcept(in *Input, seq *analysis.Expr, dim int) (int, bool) {
	if seq.Kind != analysis.ExprList && seq.Kind != analysis.ExprTuple {
		return 0, true
	}
	var first []int
	for _, a := range seq.Args {
		v, ok := in.value(a.Text)
		if !ok || len(v.Shape) == 0 || v.Kind != facts.KindNDArray && v.Kind != facts.KindDataFrame {
			continue
		}
		if len(v.Shape) <= dim {
			return 0, false
		}
		if first == nil {
			first = v.Shape
			continue
		}
		if len(v.Shape) != len(first) {
			return 0, false
		}
		for i := range first {
			if i != dim && first[i] != v.Shape[i] {
				return 0, false
			}
		}
	}
	return len(first), true
}

// concatAxis sets np.concatenate's axis (keyword or second positional argument) to dim,
// or adds axis=dim where the default (0) was used.
func concatAxis(in *Input, call *analysis.Expr, dim int, keeps string) []Candidate {
	title := fmt.Sprintf("Concatenate along axis %d, where the arrays differ", dim)
	keeps += fmt.Sprintf("; joined along axis %d every array keeps its values", dim)
	for _, k := range call.Keywords {
		if k.Name == "axis" && k.Value != nil {
			return []Candidate{{Fix: finding.Fix{Title: title, Edits: []finding.Edit{replaceAt(k.Value.Range, itoa(dim))}}, Keeps: keeps}}
		}
	}
	if len(call.Args) >= 2 {
		return []Candidate{{Fix: finding.Fix{Title: title, Edits: []finding.Edit{replaceAt(call.Args[1].Range, itoa(dim))}}, Keeps: keeps}}
	}
	end := call.Args[0].Range.End
	return []Candidate{{Fix: finding.Fix{Title: title, Edits: []finding.Edit{{Range: finding.Range{Start: end, End: end}, NewText: ", axis=" + itoa(dim)}}}, Keeps: keeps}}
}

// renameCall replaces the function name of call (np.hstack's hstack) by name, module and
// arguments unchanged.
func renameCall(call *analysis.Expr, name, title, keeps string) Candidate {
	return Candidate{Fix: finding.Fix{Title: title, Edits: []finding.Edit{replaceAt(call.Value.NameRange, name)}}, Keeps: keeps}
}

// torchCatDim repairs torch.cat of 2-D tensors that disagree on the axis they are not
// joined along: "Sizes of tensors must match except in dimension K" names the axis they
// are joined along, so for 2-D tensors the other one (1-K) is where they differ, and they
// are joined there. The tensors the inspector knows must be 2-D and agree on axis K.
func torchCatDim(in *Input, k int) []Candidate {
	if k != 0 && k != 1 {
		return nil
	}
	other := 1 - k
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || len(c.Expr.Args) == 0 || c.Callee != "torch.cat" && c.Callee != "torch.concat" {
			continue
		}
		seq := c.Expr.Args[0]
		if seq.Kind == analysis.ExprList || seq.Kind == analysis.ExprTuple {
			var at []int
			ok := true
			for _, a := range seq.Args {
				v, known := in.value(a.Text)
				if !known || len(v.Shape) == 0 {
					continue
				}
				if len(v.Shape) != 2 || at != nil && at[k] != v.Shape[k] {
					ok = false
				}
				at = v.Shape
			}
			if !ok {
				continue
			}
		}
		title := fmt.Sprintf("Join along dim %d, where the tensors differ", other)
		keeps := fmt.Sprintf("the tensors differ in size along dim %d and agree along dim %d; joined along %d every tensor keeps its values", other, k, other)
		var e finding.Edit
		switch {
		case keywordValue(c.Expr, "dim", "axis") != nil:
			e = replaceAt(keywordValue(c.Expr, "dim", "axis").Range, itoa(other))
		case len(c.Expr.Args) >= 2:
			e = replaceAt(c.Expr.Args[1].Range, itoa(other))
		default:
			end := seq.Range.End
			e = finding.Edit{Range: finding.Range{Start: end, End: end}, NewText: ", dim=" + itoa(other)}
		}
		out = append(out, Candidate{Fix: finding.Fix{Title: title, Edits: []finding.Edit{e}}, Keeps: keeps})
	}
	return out
}

// keywordValue is the value of the first of names passed as a keyword to call, nil if none.
func keywordValue(call *analysis.Expr, names ...string) *analysis.Expr {
	for _, k := range call.Keywords {
		for _, n := range names {
			if k.Name == n && k.Value != nil {
				return k.Value
			}
		}
	}
	return nil
}
