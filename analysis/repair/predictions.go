package repair

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Undefined predictions: a NameError on the conventional name of a model's predictions
// (y_pred, preds, y_hat, predictions_test...) where no cell binds it, the kernel holds a
// fitted estimator and the features of the split the cell scores (X_test beside y_test).
// The cell means the model's predictions on that split: the repair binds them before the
// first use, `y_pred = model.predict(X_test)`. Several fitted estimators give one
// candidate each (at most two, the last fitted first); one whose feature count does not fit
// the split gives none.

func init() {
	register(family{name: "undefined-predictions", gen: predictionsGen, wanted: predictionsWanted})
}

var (
	predNameRE  = regexp.MustCompile(`^(?:y_?(?:pred|preds|predicted|prediction|predictions|hat)|pred|preds|prediction|predictions)(?:_(test|val|valid|validation|train))?$|^(test|val|valid|validation|train)_(?:pred|preds|predictions)$`)
	splitNameRE = regexp.MustCompile(`\by_(test|val|valid|validation|train)\b`)
)

func predictionsGen(in *Input) []Candidate {
	name, ok := undefinedName(in)
	if !ok || len(definingCells(in, name)) > 0 {
		return nil
	}
	m := predNameRE.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	split := m[1] + m[2]
	if split == "" {
		// The split the cell scores against: y_test on the crash line, else in the cell.
		if s := splitNameRE.FindStringSubmatch(lineAt(in.Text, in.crashLine())); s != nil {
			split = s[1]
		} else if s := splitNameRE.FindStringSubmatch(in.Text); s != nil {
			split = s[1]
		} else {
			split = "test"
		}
	}
	x := ""
	for _, c := range []string{"X_" + split, "x_" + split, "X" + split} {
		if in.inNamespace(c) {
			x = c
			break
		}
	}
	if x == "" {
		return nil
	}
	at, ok := firstUseStatement(in, name)
	if !ok {
		return nil
	}
	xv, _ := in.value(x)
	var out []Candidate
	for _, est := range fittedPredictors(in) {
		if len(out) == 2 {
			break
		}
		v, _ := in.value(est)
		if n := v.Estimator.NFeaturesIn; n != nil && len(xv.Shape) == 2 && xv.Shape[1] != *n {
			continue
		}
		code := fmt.Sprintf("%s = %s.predict(%s)", name, est, x)
		out = append(out, Candidate{
			Fix: finding.Fix{
				Title: fmt.Sprintf("Define %s as %s's predictions on %s: `%s`", name, est, x, code),
				Edits: []finding.Edit{insertBefore(in.Text, at, code)},
			},
			Keeps: fmt.Sprintf("%s conventionally names a model's predictions; %s is fitted and %s is the split the cell scores", name, est, x),
		})
	}
	return out
}

// fittedPredictors are the fitted estimators with predict the kernel holds, the one the
// history bound last first.
func fittedPredictors(in *Input) []string {
	if in.Inspection == nil {
		return nil
	}
	last := map[string]int{}
	for i, h := range in.History {
		if h.Facts == nil {
			continue
		}
		for _, d := range h.Facts.Defs {
			last[d.Name] = i + 1
		}
		for _, c := range h.Facts.Calls {
			if o, ok := fitReceiver(c.Callee); ok {
				last[o] = i + 1
			}
		}
	}
	var out []string
	for n, v := range in.Inspection.Values {
		if !v.Exists || v.Estimator == nil || !v.Estimator.Fitted || !isIdent(n) || !predicts(v) {
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if last[out[i]] != last[out[j]] {
			return last[out[i]] > last[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

func fitReceiver(callee string) (string, bool) {
	for _, suf := range []string{".fit", ".fit_transform", ".partial_fit"} {
		if len(callee) > len(suf) && callee[len(callee)-len(suf):] == suf {
			o := callee[:len(callee)-len(suf)]
			return o, isIdent(o)
		}
	}
	return "", false
}

func predicts(v facts.Value) bool {
	for _, x := range v.Estimator.Methods {
		if x == "predict" {
			return true
		}
	}
	return false
}

// predictionsWanted asks for what the history binds: the estimators among them.
func predictionsWanted(in *Input) []string {
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil || in.exception() != "NameError" || !predNameRE.MatchString(m[1]) {
		return nil
	}
	var out []string
	for _, h := range in.History {
		if h.Facts == nil {
			continue
		}
		for _, d := range h.Facts.Defs {
			if d.Kind == analysis.DefAssign {
				out = append(out, d.Name)
			}
		}
	}
	return out
}
