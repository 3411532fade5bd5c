package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A counted range beside the data it labels, of another length: ax.plot(range(EPOCHS + 1),
// losses) for a list of one loss per epoch, pd.DataFrame({"epoch": range(1, n), "acc":
// accs}), plt.bar(np.arange(k), counts). The exception says two sizes differ (matplotlib's
// "x and y must have same first dimension", pandas' "All arrays must be of the same
// length"); the range is the part computed to match the other, so it is counted from the
// data instead: range(len(losses)), range(1, len(losses) + 1), the same start and step
// kept. The data itself is never cut or padded.

func init() {
	register(family{name: "range-length", gen: rangeLengthGen})
}

func rangeLengthGen(in *Input) []Candidate {
	switch in.exception() {
	case "ValueError", "IndexError":
	default:
		return nil
	}
	if !sizesDiffer(in.message()) {
		return nil
	}
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall || e.Kind == analysis.ExprDict
	}) {
		ops := operands(e)
		for _, r := range ops {
			fn, ok := countedRange(r)
			if !ok {
				continue
			}
			for _, d := range ops {
				if d == r || d.Kind != analysis.ExprName && d.Kind != analysis.ExprAttribute && d.Kind != analysis.ExprSubscript {
					continue
				}
				if _, isRange := countedRange(d); isRange {
					continue
				}
				code := rangeOfLen(fn, r, d.Text)
				if code == "" || code == r.Text {
					continue
				}
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Count the range from the data it labels: %s", code), Edits: []finding.Edit{replaceAt(r.Range, code)}},
					Keeps: fmt.Sprintf("one value of the range per element of %s, from the same start; %s itself is unchanged", d.Text, d.Text),
				})
			}
		}
	}
	return out
}

// operands returns the values a call or a dict puts side by side: a call's positional
// arguments and keyword values, a dict's values.
func operands(e *analysis.Expr) []*analysis.Expr {
	var out []*analysis.Expr
	if e.Kind == analysis.ExprDict {
		for i := 1; i < len(e.Args); i += 2 {
			out = append(out, e.Args[i])
		}
		return out
	}
	for _, a := range e.Args {
		if !a.Starred {
			out = append(out, a)
		}
	}
	for _, k := range e.Keywords {
		if k.Name != "" && k.Value != nil {
			out = append(out, k.Value)
		}
	}
	return out
}

// countedRange returns the callee text of a call that counts (range, np.arange,
// torch.arange) with one to three positional arguments and no keyword.
func countedRange(e *analysis.Expr) (string, bool) {
	if e.Kind != analysis.ExprCall || e.Value == nil || len(e.Args) == 0 || len(e.Args) > 3 || len(e.Keywords) > 0 {
		return "", false
	}
	fn, _ := e.Value.Chain()
	if fn == "range" || fn == "arange" || len(fn) > 7 && fn[len(fn)-7:] == ".arange" {
		return fn, true
	}
	return "", false
}

// rangeOfLen returns the range r counted to the length of data: the same start and step;
// "" when the start or step is not a literal (what a computed start means is unknown).
func rangeOfLen(fn string, r *analysis.Expr, data string) string {
	n := "len(" + data + ")"
	switch len(r.Args) {
	case 1:
		return fn + "(" + n + ")"
	case 2:
		start := r.Args[0]
		if start.Kind != analysis.ExprConst {
			return ""
		}
		if v, ok := start.Const.(int64); ok && v == 0 {
			return fn + "(" + start.Text + ", " + n + ")"
		}
		return fn + "(" + start.Text + ", " + n + " + " + start.Text + ")"
	case 3:
		start, step := r.Args[0], r.Args[2]
		if start.Kind != analysis.ExprConst || step.Kind != analysis.ExprConst {
			return ""
		}
		return fn + "(" + start.Text + ", " + start.Text + " + " + n + " * " + step.Text + ", " + step.Text + ")"
	}
	return ""
}
