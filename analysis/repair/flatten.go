package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Samples with more axes than the consumer reads: images of shape (B, 1, 28, 28) handed
// to a Linear layer built for 784 features ("mat1 and mat2 shapes cannot be multiplied
// (1792x28 and 784x128)": it multiplied the last axis only), or a stack of images to a
// scikit-learn estimator ("Found array with dim 3. ... expected <= 2."). The operand's
// shape is in the runtime facts: where its axes after the first multiply to what the layer
// needs (or to anything, for an estimator), each sample is flattened (x.flatten(1),
// X.reshape(len(X), -1)); the samples and their values stay. At a forward of an earlier
// cell (Input.Site) the frame's own tensor is the operand.

func init() {
	register(family{name: "flatten-samples", gen: flattenGen})
}

func flattenGen(in *Input) []Candidate {
	msg := in.message()
	want, got := 0, 0
	estimator := false
	if m := matmulRE.FindStringSubmatch(msg); m != nil {
		got, _ = strconv.Atoi(m[2])
		want, _ = strconv.Atoi(m[3])
	} else if strings.Contains(msg, "Found array with dim") && strings.Contains(msg, "expected <= 2") {
		estimator = true
	} else {
		return nil
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName }) {
		v, ok := in.value(e.Name)
		if !ok || len(v.Shape) < 3 || seen[e.Name] {
			continue
		}
		per := 1
		for _, d := range v.Shape[1:] {
			per *= d
		}
		switch {
		case estimator && v.Kind == facts.KindNDArray:
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Flatten each sample of %s: %s.reshape(len(%s), -1) (%d values each)", e.Name, e.Name, e.Name, per), Edits: []finding.Edit{replaceAt(e.Range, e.Name+".reshape(len("+e.Name+"), -1)")}},
				Keeps: fmt.Sprintf("the same %d samples, each as one row of its %d values", v.Shape[0], per),
			})
		case !estimator && v.Kind == facts.KindTensor && per == want && v.Shape[len(v.Shape)-1] == got:
			// A Sequential that starts with the Linear built for the flattened size is fixed
			// in the model, so every later call of it takes the images too.
			if c, ok := flattenLayer(in, want); ok {
				return []Candidate{c}
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Flatten each sample of %s: %s.flatten(1) (%d features, as the layer needs)", e.Name, e.Name, per), Edits: []finding.Edit{replaceAt(e.Range, e.Name+".flatten(1)")}},
				Keeps: fmt.Sprintf("the same batch of %d, each sample's %s values as one row of %d features", v.Shape[0], joinInts(v.Shape[1:]), per),
			})
		default:
			continue
		}
		seen[e.Name] = true
	}
	return out
}

// flattenLayer puts nn.Flatten() first in the Sequential whose first layer is a Linear of
// want input features, in this cell or the history's newest cell that builds one.
func flattenLayer(in *Input, want int) (Candidate, bool) {
	for _, s := range in.editSites() {
		for _, c := range walkExprs(s.Facts.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Name == "Sequential" && len(e.Args) > 0
		}) {
			first := c.Args[0]
			if first.Kind != analysis.ExprCall || first.Value == nil || first.Value.Name != "Linear" || len(first.Args) == 0 {
				continue
			}
			if n, ok := constInt(first.Args[0]); !ok || n != want {
				continue
			}
			if s.ID == "" && c.Range.Start.Line > in.crashLine() {
				continue
			}
			nn := strings.TrimSuffix(calleeText(first), "Linear")
			e := finding.Edit{Cell: s.ID, Range: finding.Range{Start: first.Range.Start, End: first.Range.Start}, NewText: nn + "Flatten(), "}
			if first.Range.Start.Line > c.Range.Start.Line {
				// One layer per line: the new one on its own line, indented as the first.
				e.NewText = nn + "Flatten(),\n" + indentOf(lineAt(s.Text, first.Range.Start.Line))
			}
			title := "Flatten the images first in the model: nn.Flatten() before its first Linear"
			if s.ID != "" {
				title += fmt.Sprintf(" in cell %d (run it again)", s.Index+1)
			}
			return Candidate{
				Fix:   finding.Fix{Title: title, Edits: []finding.Edit{e}},
				Keeps: fmt.Sprintf("the same layers; each sample reaches the first Linear as the %d features it was built for", want),
			}, true
		}
	}
	return Candidate{}, false
}
