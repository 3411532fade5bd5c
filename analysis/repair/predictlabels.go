package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Probabilities scored as labels: accuracy_score(y, clf.predict_proba(X)[:, 1]) ("
// Classification metrics can't handle a mix of binary and continuous targets"). The
// metric wants the labels the classifier predicts: predict_proba(A)[...] or
// decision_function(A) becomes predict(A), on the crash line or where the scores were bound.

func init() {
	register(family{name: "predicted-labels", gen: predictedLabelsGen})
}

func predictedLabelsGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "ValueError" || !strings.Contains(msg, "can't handle a mix of") || !strings.Contains(msg, "continuous") || in.Facts == nil {
		return nil
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "predict_proba" || e.Value.Name == "decision_function")
	}) {
		// The scores' column taken with [:, 1] goes too: predict gives one label per row.
		whole := e
		for _, s := range in.exprsOnLine(in.crashLine(), func(s *analysis.Expr) bool { return s.Kind == analysis.ExprSubscript && s.Value == e }) {
			whole = s
		}
		args := strings.TrimPrefix(e.Text, e.Value.Text)
		text := e.Value.Value.Text + ".predict" + args
		if seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Score the predicted labels, %s (the metric needs labels, not %s scores)", text, e.Value.Name), Edits: []finding.Edit{replaceAt(whole.Range, text)}},
			Keeps: "the same classifier and rows, scored on the labels it predicts",
		})
	}
	return out
}
