package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// What estimators accept as input: 2-D numbers without NaN where the estimator rejects
// it, the feature count and names it was fitted on, X and y of one length; and telling
// text and continuous values from class labels.

// checkInput runs the input checks in the order scikit-learn raises them: feature names,
// strings, dimensionality, NaN, then feature count. It returns true after the first report.
func checkInput(c *checker, k *callInfo, est *val, info estInfo, known bool, X *val, xExpr *analysis.Expr, fitting bool) bool {
	if X == nil || xExpr == nil {
		return false
	}
	e := est.Estimator
	class := e.Class
	if !fitting && e.Fitted && checkFeatureNames(c, k, est, X, xExpr) {
		return true
	}
	if known && !info.strOK {
		if cols, sample := nonNumericColumns(X); len(cols) > 0 {
			c.report(xExpr.Range, finding.SeverityError, finding.StringInput, "ValueError",
				fmt.Sprintf("%s holds text (%s, e.g. %q), and %s needs numbers (could not convert string to float: %q); encode it first (get_dummies, OneHotEncoder, LabelEncoder)",
					X.name, strings.Join(cols, ", "), sample, class, sample),
				0.95, []string{describe(X)}, nil)
			return true
		}
	}
	if known && !info.strOK && likelyText(X) {
		c.report(xExpr.Range, finding.SeverityWarning, finding.StringInput, "ValueError",
			fmt.Sprintf("%s holds Python strings (dtype object), and %s needs numbers: unless every string is a number, fit/predict raises (could not convert string to float)", X.name, class),
			0.75, []string{describe(X) + ", element types: str"}, nil)
		return true
	}
	if known && !info.oneD {
		if nd, ok := X.ndim(); ok && nd == 1 && (X.Kind == facts.KindSeries || X.Kind == facts.KindNDArray) {
			var fixes []finding.Fix
			if xExpr.Kind == analysis.ExprSubscript && xExpr.Index != nil && xExpr.Index.Kind == analysis.ExprConst {
				fixes = append(fixes, replaceFix("Select a one-column DataFrame", xExpr.Index.Range, "["+xExpr.Index.Text+"]", true))
			} else if X.Kind == facts.KindSeries {
				fixes = append(fixes, replaceFix("Reshape to one column", xExpr.Range, xExpr.Text+".to_numpy().reshape(-1, 1)", true))
			} else {
				fixes = append(fixes, replaceFix("Reshape to one column", xExpr.Range, xExpr.Text+".reshape(-1, 1)", true))
			}
			c.report(xExpr.Range, finding.SeverityError, finding.Input1D, "ValueError",
				fmt.Sprintf("%s is 1-D, but %s.%s expects a 2-D array of samples × features (Expected 2D array, got 1D array instead)", X.name, class, k.method),
				0.95, []string{describe(X)}, fixes)
			return true
		}
	}
	if known && !info.oneD {
		if nd, ok := X.ndim(); ok && nd > 2 && X.Kind == facts.KindNDArray {
			c.report(xExpr.Range, finding.SeverityError, finding.NdimMismatch, "ValueError",
				fmt.Sprintf("%s is %d-D, but %s expects a 2-D array of samples × features (Found array with dim %d); flatten it with .reshape(len(%s), -1)", X.name, nd, class, nd, xExpr.Text),
				0.95, []string{describe(X)}, []finding.Fix{replaceFix("Flatten to 2-D", xExpr.Range, xExpr.Text+".reshape(len("+xExpr.Text+"), -1)", false)})
			return true
		}
	}
	nanOK := info.nanOK
	if e.AllowsNaN != nil && *e.AllowsNaN {
		nanOK = true // the kernel's own tags say so (a subclass, a newer version)
	}
	if known && !nanOK && hasNaN(X) {
		what := "NaN"
		if cols := nanColumns(X); len(cols) > 0 {
			what = "NaN in " + strings.Join(cols, ", ")
		}
		c.report(xExpr.Range, finding.SeverityError, finding.NaNInput, "ValueError",
			fmt.Sprintf("%s contains %s, and %s does not accept missing values (Input X contains NaN); impute or drop them first", X.name, what, class),
			0.95, []string{describe(X)}, nil)
		return true
	}
	if !fitting && e.Fitted && e.NFeaturesIn != nil {
		if n, ok := X.ncols(); ok && n != *e.NFeaturesIn {
			c.report(xExpr.Range, finding.SeverityError, finding.FeatureCountMismatch, "ValueError",
				fmt.Sprintf("%s has %d features, but %s was fitted on %d (X has %d features, but %s is expecting %d features as input)",
					X.name, n, est.name, *e.NFeaturesIn, n, class, *e.NFeaturesIn),
				0.96, []string{describe(X), describe(est)}, nil)
			return true
		}
	}
	if fitting {
		if n, ok := X.rows(); ok && n == 0 {
			c.report(xExpr.Range, finding.SeverityError, finding.EmptyInput, "ValueError",
				fmt.Sprintf("%s has no rows, so %s.%s fails (Found array with 0 sample(s))", X.name, class, k.method),
				0.93, []string{describe(X)}, nil)
			return true
		}
	}
	return false
}

// checkFeatureNames compares a DataFrame's columns with feature_names_in_.
func checkFeatureNames(c *checker, k *callInfo, est *val, X *val, xExpr *analysis.Expr) bool {
	fit := est.Estimator.FeatureNamesIn
	if len(fit) == 0 || X.Kind != facts.KindDataFrame || !X.colsComplete {
		return false
	}
	names := columnNames(X)
	if len(names) != len(X.Columns) {
		return false
	}
	have := set(names...)
	want := set(fit...)
	var unseen, missing []string
	for _, n := range names {
		if !want[n] {
			unseen = append(unseen, n)
		}
	}
	for _, n := range fit {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	if len(unseen) == 0 && len(missing) == 0 {
		if strings.Join(names, "\x00") == strings.Join(fit, "\x00") {
			return false
		}
		c.report(xExpr.Range, finding.SeverityError, finding.FeatureNamesMismatch, "ValueError",
			fmt.Sprintf("%s has the fitted feature names in a different order (Feature names must be in the same order as they were in fit)", X.name),
			0.95, []string{describe(X), describe(est)},
			[]finding.Fix{replaceFix("Reorder the columns as in fit", xExpr.Range, xExpr.Text+"["+k.recvText()+".feature_names_in_]", true)})
		return true
	}
	msg := fmt.Sprintf("%s's columns differ from those %s was fitted on", X.name, est.name)
	var ev []string
	ev = append(ev, describe(X), describe(est))
	if len(unseen) > 0 {
		msg += fmt.Sprintf("; unseen at fit time: %s", strings.Join(quoteAllPy(unseen, 6), ", "))
	}
	if len(missing) > 0 {
		msg += fmt.Sprintf("; seen at fit time, now missing: %s", strings.Join(quoteAllPy(missing, 6), ", "))
	}
	msg += " (The feature names should match those that were passed during fit)"
	fix := replaceFix("Align the columns with those seen at fit (missing ones filled with 0)", xExpr.Range,
		xExpr.Text+".reindex(columns="+k.recvText()+".feature_names_in_, fill_value=0)", false)
	c.report(xExpr.Range, finding.SeverityError, finding.FeatureNamesMismatch, "ValueError", msg, 0.96, ev, []finding.Fix{fix})
	return true
}

// recvText is the receiver's source text.
func (k *callInfo) recvText() string {
	if r := k.recvExpr(); r != nil {
		return r.Text
	}
	return ""
}

// hasNaN reports whether v certainly contains NaN.
func hasNaN(v *val) bool {
	if v == nil {
		return false
	}
	if (v.Kind == facts.KindDataFrame || v.Kind == facts.KindSeries) && len(v.Columns) > 0 {
		// per-column counts survive drops and projections; a frame-level flag does not
		for _, col := range v.Columns {
			if col.Nulls != nil && *col.Nulls > 0 {
				return true
			}
		}
		return false
	}
	return v.HasNaN != nil && *v.HasNaN
}

// nanColumns names the columns holding NaN.
func nanColumns(v *val) []string {
	if v.Kind != facts.KindDataFrame {
		return nil
	}
	var out []string
	for _, col := range v.Columns {
		if col.Nulls != nil && *col.Nulls > 0 {
			out = append(out, fmt.Sprintf("%s (%d)", pyRepr(col.Name), *col.Nulls))
		}
	}
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("and %d more columns", len(out)-5))
	}
	return out
}

// checkLengths reports X and y with different numbers of samples.
func checkLengths(c *checker, k *callInfo, X, y *val, xExpr, yExpr *analysis.Expr) bool {
	nx, ok1 := X.rows()
	ny, ok2 := y.rows()
	if !ok1 || !ok2 || nx == ny || X.Kind == facts.KindDict || y.Kind == facts.KindDict {
		return false
	}
	c.report(k.e.Range, finding.SeverityError, finding.LengthMismatch, "ValueError",
		fmt.Sprintf("%s has %d samples but %s has %d (Found input variables with inconsistent numbers of samples: [%d, %d])", X.name, nx, y.name, ny, nx, ny),
		0.95, []string{describe(X), describe(y)}, nil)
	return true
}

// likelyText reports an object array of strings whose values the inspector did not sample
// (so no non-numeric example is known): most such arrays hold words.
func likelyText(v *val) bool {
	if v == nil || v.Kind != facts.KindNDArray || !isObjectDtype(v.Dtype) || len(v.Columns) > 0 {
		return false
	}
	return len(v.ElementTypes) == 1 && v.ElementTypes[0] == "str"
}

// classificationMetric are the metrics that need class labels on both sides.
var classificationMetric = set("accuracy_score", "f1_score", "precision_score", "recall_score",
	"confusion_matrix", "classification_report", "balanced_accuracy_score", "jaccard_score")

// continuousValue returns a known non-integer float of v (a sample value, a constant, or
// the min/max the inspector measured on the whole value).
func continuousValue(v *val) (float64, bool) {
	if v == nil {
		return 0, false
	}
	frac := func(x any) (float64, bool) {
		f, ok := x.(float64)
		return f, ok && f == f && f != float64(int64(f))
	}
	if v.hasConst {
		if l, ok := v.konst.([]any); ok {
			for _, x := range l {
				if f, ok := frac(x); ok {
					return f, true
				}
			}
		}
		return 0, false
	}
	if !strings.HasPrefix(v.Dtype, "float") && !strings.HasPrefix(v.Dtype, "torch.float") {
		return 0, false
	}
	for _, x := range v.Sample {
		if f, ok := frac(x); ok {
			return f, true
		}
	}
	for _, p := range []*float64{v.Min, v.Max} {
		if p != nil {
			if f, ok := frac(*p); ok {
				return f, true
			}
		}
	}
	return 0, false
}
