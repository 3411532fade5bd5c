package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// LabelEncoder.transform of labels it was not fitted on.

// completeValues returns every distinct value of v when the facts list them all.
func completeValues(v *val) ([]any, bool) {
	if v == nil {
		return nil, false
	}
	if labels, ok := constLabels(v); ok {
		return uniq(labels), true
	}
	if v.Kind != facts.KindSeries && v.Kind != facts.KindNDArray {
		return nil, false
	}
	if v.NUnique == nil || v.Sampled || len(v.Sample) == 0 {
		return nil, false
	}
	u := uniq(v.Sample)
	if len(u) != *v.NUnique {
		return nil, false
	}
	return u, true
}

func uniq(xs []any) []any {
	seen := map[string]bool{}
	var out []any
	for _, x := range xs {
		k, ok := colKey(x)
		if !ok {
			k = fmt.Sprint(x)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// checkUnseenLabels reports LabelEncoder.transform on values it never saw.
func checkUnseenLabels(c *checker, k *callInfo, est *val, X *val, xExpr *analysis.Expr) {
	classes := est.Estimator.Classes
	if len(classes) == 0 || len(classes) >= 100 || xExpr == nil { // the inspector lists at most 100
		return
	}
	vals, ok := completeValues(X)
	if !ok {
		return
	}
	known := map[string]bool{}
	for _, cl := range classes {
		kk, _ := colKey(cl)
		known[kk] = true
	}
	var unseen []string
	for _, v := range vals {
		kk, _ := colKey(v)
		if !known[kk] {
			unseen = append(unseen, pyRepr(v))
		}
	}
	if len(unseen) == 0 {
		return
	}
	var cls []string
	for _, cl := range classes {
		cls = append(cls, pyRepr(cl))
	}
	c.report(xExpr.Range, finding.SeverityError, finding.UnseenLabel, "ValueError",
		fmt.Sprintf("%s contains labels %s was not fitted on: %s (y contains previously unseen labels)", X.name, est.name, strings.Join(unseen, ", ")),
		0.95, []string{describe(X), fmt.Sprintf("%s.classes_: %s", est.name, strings.Join(cls, ", "))}, nil)
}
