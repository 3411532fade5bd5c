package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Probabilities scored as labels: accuracy_score(y, clf.predict_proba(X)[:, 1]) ("
// Classification metrics can't handle a mix of binary and continuous targets"). The
// metric wants the labels the classifier predicts: predict_proba(A)[...] or
// decision_function(A) becomes predict(A), on the crash line or where the scores were bound.
// Scores that come from elsewhere (a regressor's predict, a network's output) are made
// labels where the metric reads them: a binary target's at 0.5, (p > 0.5).astype(int), a
// multiclass target's rounded to the nearest class, p.round().astype(int). The message
// names the target's kind first and the prediction's second, so only the side it calls
// continuous is touched.

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
	if in.scoresReadElsewhere() {
		// Other lines read the scores as scores (roc_auc_score): labels go where the metric
		// reads them, not where the scores are bound.
		return thresholdScores(in, msg)
	}
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
	if len(out) == 0 {
		return thresholdScores(in, msg)
	}
	return out
}

// metricMixRE is sklearn's _check_targets message: the target's kind, then the prediction's.
var metricMixRE = regexp.MustCompile(`can't handle a mix of ([\w-]+) and ([\w-]+) targets`)

// thresholdScores makes labels of the continuous predictions a classification metric on the
// crash line reads.
func thresholdScores(in *Input, msg string) []Candidate {
	m := metricMixRE.FindStringSubmatch(msg)
	if m == nil || m[2] != "continuous" || (m[1] != "binary" && m[1] != "multiclass") {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && e.Value != nil }) {
		callee, _ := c.Value.Chain()
		name := callee[strings.LastIndexByte(callee, '.')+1:]
		if !strings.HasSuffix(name, "_score") && name != "confusion_matrix" && name != "classification_report" {
			continue
		}
		var pred *analysis.Expr
		if len(c.Args) >= 2 {
			pred = c.Args[1]
		}
		for _, k := range c.Keywords {
			if k.Name == "y_pred" {
				pred = k.Value
			}
		}
		if pred == nil || pred.Starred || in.exprKind(pred) == facts.KindTensor {
			continue
		}
		if call := in.scoresCall(pred); call != nil {
			// Scores a classifier gave: the metric reads its labels for the same rows.
			text := call.Value.Value.Text + ".predict" + strings.TrimPrefix(call.Text, call.Value.Text)
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Score the predicted labels, %s (the metric needs labels, not %s scores)", text, call.Value.Name), Edits: []finding.Edit{replaceAt(pred.Range, text)}},
				Keeps: fmt.Sprintf("the same classifier and rows, scored on the labels it predicts; %s keeps its scores for the lines that read them", pred.Text),
			})
			continue
		}
		text := pred.Text
		if needsParens(pred) {
			text = "(" + text + ")"
		}
		label, how := text+".round().astype(int)", "rounded to the nearest class"
		if m[1] == "binary" {
			label, how = "("+pred.Text+" > 0.5).astype(int)", "cut at 0.5"
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Score labels, not scores: %s (the target is %s, %s is continuous)", label, m[1], pred.Text), Edits: []finding.Edit{replaceAt(pred.Range, label)}},
			Keeps: fmt.Sprintf("the same predictions, %s, scored against the same target", how),
		})
	}
	return out
}

// scoresCall returns the predict_proba or decision_function call the name e is bound to
// (the crash line's last binding of it, in the cell or the history); nil otherwise.
func (in *Input) scoresCall(e *analysis.Expr) *analysis.Expr {
	if e.Kind != analysis.ExprName {
		return nil
	}
	s, _, ok := in.binding(e.Name, -1, in.crashLine())
	if !ok {
		return nil
	}
	for _, x := range walkExprs([]*analysis.Statement{s.stmt}, func(finding.Range) bool { return true }, func(x *analysis.Expr) bool {
		return x.Kind == analysis.ExprCall && x.Value != nil && x.Value.Kind == analysis.ExprAttribute && (x.Value.Name == "predict_proba" || x.Value.Name == "decision_function")
	}) {
		return x
	}
	return nil
}

// scoresReadElsewhere reports whether the crash line binds names that two or more later
// lines of the cell read: seen from a binding site, the scores bound there have readers
// besides the metric that raised.
func (in *Input) scoresReadElsewhere() bool {
	if in.Facts == nil {
		return false
	}
	l := in.crashLine()
	for _, d := range in.Facts.Defs {
		if d.Range.Start.Line != l {
			continue
		}
		readers := map[int]bool{}
		for _, st := range analysis.CellStatements(in.Text) {
			if st.StartLine <= l {
				continue
			}
			for _, u := range st.Facts.Uses {
				if u.Name == d.Name {
					readers[st.StartLine] = true
				}
			}
		}
		if len(readers) >= 2 {
			return true
		}
	}
	return false
}

// The other way round: a column of scores taken from labels. predict gives one label per
// row, so clf.predict(X)[:, 1] indexes a 1-D array with two indices ("too many indices for
// array: array is 1-dimensional, but 2 were indexed"); the column of class 1 is in
// predict_proba(X). On the crash line, or where the name it indexes was bound to predict.

func init() {
	register(family{name: "scores-for-columns", gen: scoresForColumnsGen})
}

func scoresForColumnsGen(in *Input) []Candidate {
	if in.exception() != "IndexError" || !strings.Contains(in.message(), "too many indices") {
		return nil
	}
	var out []Candidate
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Index != nil && e.Index.Kind == analysis.ExprTuple && e.Value != nil
	}) {
		call := s.Value
		var cell string
		if call.Kind == analysis.ExprName {
			b, ok := in.assignedAbove(call.Name)
			if !ok {
				continue
			}
			call, cell = b.value, b.cell
		}
		if call.Kind != analysis.ExprCall || call.Value == nil || call.Value.Kind != analysis.ExprAttribute || call.Value.Name != "predict" {
			continue
		}
		e := replaceAt(call.Value.NameRange, "predict_proba")
		e.Cell = cell
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Take the scores from %s.predict_proba (predict gives one label per row)", call.Value.Value.Text), Edits: []finding.Edit{e}},
			Keeps: "the same classifier and rows; the columns indexed are its probabilities per class",
		})
	}
	return out
}
