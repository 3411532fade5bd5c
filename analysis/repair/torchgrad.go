package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// backward() on a loss of one value per sample ("grad can be implicitly created only for
// scalar outputs") from a criterion built with reduction="none": where the criterion is
// built (a binding site of what the loss reads), the reduction becomes torch's default
// mean, so every loss it gives is the scalar a training step differentiates. (The mean
// taken at the backward() call itself is a rule's fix.)

func init() {
	register(family{name: "scalar-loss", gen: scalarLossGen})
}

func scalarLossGen(in *Input) []Candidate {
	if in.exception() != "RuntimeError" || !strings.Contains(in.message(), "only for scalar outputs") {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		for _, k := range c.Keywords {
			if v, _ := k.Value.Const.(string); k.Name == "reduction" && v == "none" && isPlainString(k.Value) {
				q := k.Value.Text[:1]
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Build the criterion with reduction=%smean%s, which backward() needs", q, q), Edits: []finding.Edit{replaceAt(k.Value.Range, q+"mean"+q)}},
					Keeps: "the same loss, averaged over the samples as torch's default reduction does; each loss the criterion gives is a scalar",
				})
			}
		}
	}
	return out
}
