package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Text or NaN into an estimator: text columns one-hot encoded (pd.get_dummies) or left
// out (select_dtypes('number')), missing values imputed with the training medians or the
// incomplete rows dropped from X and y together. The estimator call stays; only the data
// passed to it is prepared the way the estimator needs.

func init() {
	register(family{name: "estimator-input", gen: estimatorGen})
}

var (
	textIntoRE = regexp.MustCompile(`could not convert string to float|Cannot use median strategy with non-numeric data|dtype='numeric' is not compatible with arrays of bytes/strings`)
	nanXRE     = regexp.MustCompile(`Input X contains NaN|Input contains NaN|Input X contains infinity|contains NaN, infinity or a value too large`)
	nanYRE     = regexp.MustCompile(`Input y contains NaN`)
)

var (
	unknownLabelRE = regexp.MustCompile(`Unknown label type: 'unknown'`)
	probaRE        = regexp.MustCompile(`predict_proba is not available when\s+probability=False`)
	metricRE       = regexp.MustCompile(`Classification metrics can't handle a mix of`)
)

func estimatorGen(in *Input) []Candidate {
	msg := in.message()
	if probaRE.MatchString(msg) {
		return probability(in)
	}
	if metricRE.MatchString(msg) {
		return labelsFromScores(in)
	}
	call, args := callArgs(in)
	if call == nil || len(args) == 0 || call.Value == nil || call.Value.Kind != analysis.ExprAttribute {
		return nil
	}
	method := call.Value.Name
	if unknownLabelRE.MatchString(msg) {
		return numericLabels(in, method, args)
	}
	x := args[0]
	xv, known := in.value(x.Text)
	frame := known && xv.Kind == facts.KindDataFrame
	if !known && assignedIn(in, x.Text) {
		// Built by this very cell: verification shows whether it is a frame.
		frame = true
	}
	if !known && x.Kind == analysis.ExprSubscript && x.Index != nil && (x.Index.Kind == analysis.ExprList || in.exprKind(x.Index) == facts.KindList) {
		// df[["a", "b"]] or df[feature_cols]: columns of a frame are a frame.
		if r, ok := in.value(x.Root()); ok && r.Kind == facts.KindDataFrame {
			frame = true
		}
	}
	var out []Candidate
	switch {
	case textIntoRE.MatchString(msg):
		if known && !frame {
			return textArray(in, method, args, xv)
		}
		var text []string
		for _, c := range xv.Columns {
			if c.Dtype == "object" || c.Dtype == "category" || c.Dtype == "string" {
				text = append(text, fmt.Sprint(c.Name))
			}
		}
		what := "its text columns"
		if len(text) > 0 {
			what = "the text columns " + strings.Join(text, ", ")
		}
		if (method == "fit" || method == "fit_transform" || method == "fit_predict") && !anyIdentifierLike(xv) {
			enc := replaceAt(x.Range, "pd.get_dummies("+x.Text+")")
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("One-hot encode %s (pd.get_dummies)", what), Edits: []finding.Edit{enc}},
				Keeps: fmt.Sprintf("every feature of %s reaches the estimator; %s become indicator columns", x.Text, what),
			})
			if c, ok := withTextLabels(in, args, enc); ok {
				out = append(out, c)
			}
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Pass only the numeric columns of %s", x.Text), Edits: []finding.Edit{replaceAt(x.Range, x.Text+".select_dtypes('number')")}},
			Keeps: fmt.Sprintf("the numeric features of %s reach the estimator unchanged; %s are left out", x.Text, what),
		})
	case nanXRE.MatchString(msg):
		if !frame {
			return nil
		}
		stats := x.Text
		if method != "fit" && method != "fit_transform" {
			// Impute the data to predict on with what the training data says.
			for _, p := range trainingNames {
				if in.inNamespace(p[0]) && p[0] != x.Text {
					stats = p[0]
					break
				}
			}
		}
		if d, ok := lastDef(in, x.Text); ok && x.Kind == analysis.ExprName {
			// The cell builds X and uses it again after the call (score, predict): impute
			// where it is built, so every use gets the complete data.
			at := d.Range.Start.Line + 1
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Fill the missing values of %s with its medians where it is built", x.Text), Edits: []finding.Edit{insertBefore(in.Text, min(at, in.crashLine()), fmt.Sprintf("%s = %s.fillna(%s.median(numeric_only=True))", x.Text, x.Text, x.Text))}},
				Keeps: fmt.Sprintf("every row of %s is kept; missing values become the column's median", x.Text),
			})
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Fill the missing values of %s with the medians of %s", x.Text, stats), Edits: []finding.Edit{replaceAt(x.Range, x.Text+".fillna("+stats+".median(numeric_only=True))")}},
			Keeps: fmt.Sprintf("every row of %s is kept; missing values become the column's median (%s)", x.Text, stats),
		})
		if len(args) >= 2 && (method == "fit") {
			y := args[1]
			mask := x.Text + ".notna().all(axis=1)"
			out = append(out, Candidate{
				Fix: finding.Fix{Title: fmt.Sprintf("Drop the rows with missing values from %s and %s", x.Text, y.Text), Edits: []finding.Edit{
					replaceAt(x.Range, x.Text+"["+mask+"]"), replaceAt(y.Range, y.Text+"["+mask+"]")}},
				Keeps: "the complete rows are fitted on, features and labels kept together",
			})
		}
	case nanYRE.MatchString(msg):
		if len(args) < 2 {
			return nil
		}
		y := args[1]
		mask := y.Text + ".notna()"
		out = append(out, Candidate{
			Fix: finding.Fix{Title: fmt.Sprintf("Fit on the rows whose label %s is known", y.Text), Edits: []finding.Edit{
				replaceAt(x.Range, x.Text+"["+mask+"]"), replaceAt(y.Range, y.Text+"["+mask+"]")}},
			Keeps: "the rows with a label are fitted on, features and labels kept together",
		})
	}
	return out
}

// lastDef returns the cell's last top-level binding of name before the crash line.
func lastDef(in *Input, name string) (analysis.Def, bool) {
	var d analysis.Def
	found := false
	if in.Facts == nil {
		return d, false
	}
	for _, x := range in.Facts.Defs {
		if x.Name == name && !x.Conditional && x.Range.Start.Line < in.crashLine() {
			d, found = x, true
		}
	}
	return d, found
}

// assignedIn reports whether the cell itself binds name.
func assignedIn(in *Input, name string) bool {
	if in.Facts == nil {
		return false
	}
	for _, d := range in.Facts.Defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// probability builds the SVC with probability=True where it is constructed (this cell or
// the latest earlier one), so predict_proba exists after the fit that follows.
func probability(in *Input) []Candidate {
	for _, s := range in.editSites() {
		for _, c := range walkExprs(s.Facts.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && (calleeText(e) == "SVC" || strings.HasSuffix(calleeText(e), ".SVC"))
		}) {
			if s.upto >= 0 && c.Range.Start.Line > s.upto {
				continue
			}
			text := ", probability=True"
			if len(c.Args) == 0 && len(c.Keywords) == 0 {
				text = "probability=True"
			}
			for _, k := range c.Keywords {
				if k.Name == "probability" {
					text = "" // probability=False written out: another repair's
				}
			}
			if text == "" {
				continue
			}
			// Before the closing parenthesis: the call's last character.
			p := finding.Position{Line: c.Range.End.Line, Character: c.Range.End.Character - 1}
			e := finding.Edit{Cell: s.ID, Range: finding.Range{Start: p, End: p}, NewText: text}
			title := "Build the SVC with probability=True"
			if s.ID != "" {
				title += fmt.Sprintf(" in cell %d (run it again)", s.Index+1)
			}
			return []Candidate{{Fix: finding.Fix{Title: title, Edits: []finding.Edit{e}}, Keeps: "the same model, fitted with the probability estimates predict_proba needs"}}
		}
	}
	return nil
}

// labelsFromScores passes class labels to a classification metric that got scores: the
// most probable class of each row.
func labelsFromScores(in *Input) []Candidate {
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || !strings.HasSuffix(c.Callee, "_score") && !strings.HasSuffix(c.Callee, "confusion_matrix") && !strings.HasSuffix(c.Callee, "classification_report") {
			continue
		}
		for i, a := range c.Expr.Args {
			if i == 0 || a.Kind != analysis.ExprName {
				continue // the first argument holds the true labels
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Pass the predicted classes: %s.argmax(axis=1)", a.Text), Edits: []finding.Edit{replaceAt(a.Range, a.Text+".argmax(axis=1)")}},
				Keeps: fmt.Sprintf("%s holds one score per class; the metric compares the most likely class with the labels", a.Text),
			})
		}
	}
	return out
}

// textDtypes are the dtypes of text data.
var textDtypes = map[string]bool{"object": true, "str": true, "string": true, "category": true}

// isText reports whether the inspection says v holds text (an object, string or
// categorical array or Series, or a NumPy unicode array).
func isText(v facts.Value) bool {
	return (v.Kind == facts.KindNDArray || v.Kind == facts.KindSeries) && (textDtypes[v.Dtype] || strings.HasPrefix(v.Dtype, "<U"))
}

// textArray encodes a text array passed as X to a fit: its categories become indicator
// columns (pd.get_dummies of the array as a frame), and, for an estimator that needs
// numbers for y as well (a regressor, a scaler), text labels in y become their codes.
func textArray(in *Input, method string, args []*analysis.Expr, xv facts.Value) []Candidate {
	if !isText(xv) || !in.inNamespace("pd") || method != "fit" && method != "fit_transform" && method != "fit_predict" {
		return nil
	}
	x := args[0]
	frame := "pd.DataFrame(" + x.Text + ")"
	if xv.Kind == facts.KindSeries || len(xv.Shape) == 1 {
		frame = x.Text
	}
	enc := replaceAt(x.Range, "pd.get_dummies("+frame+")")
	out := []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("One-hot encode the text categories of %s (pd.get_dummies)", x.Text), Edits: []finding.Edit{enc}},
		Keeps: fmt.Sprintf("%s holds text categories; each becomes an indicator column the estimator can fit on", x.Text),
	}}
	if c, ok := withTextLabels(in, args, enc); ok {
		out = append(out, c)
	}
	return out
}

// withTextLabels adds to the edit of X one that turns text labels in y (the second
// argument) into integer codes, in sorted order as LabelEncoder numbers them.
func withTextLabels(in *Input, args []*analysis.Expr, xEdit finding.Edit) (Candidate, bool) {
	if len(args) < 2 || !in.inNamespace("pd") {
		return Candidate{}, false
	}
	y := args[1]
	yv, ok := in.value(y.Text)
	if !ok || !isText(yv) {
		return Candidate{}, false
	}
	if m := textNumberRE.FindStringSubmatch(in.message()); m != nil && symbolClass(m[1]) != "" {
		return Candidate{}, false // numbers written with symbols: codes would lose them (see buildsite.go)
	}
	flat := y.Text
	if yv.Kind == facts.KindNDArray && len(yv.Shape) == 2 {
		flat = y.Text + ".ravel()"
	}
	return Candidate{
		Fix: finding.Fix{Title: fmt.Sprintf("Encode the text of %s and the text labels of %s as codes", args[0].Text, y.Text), Edits: []finding.Edit{
			xEdit, replaceAt(y.Range, "pd.factorize("+flat+", sort=True)[0]")}},
		Keeps: fmt.Sprintf("%s holds text labels; each label becomes its code (sorted, as LabelEncoder numbers them), so an estimator that needs numbers for y gets them", y.Text),
	}, true
}

// numericLabels casts labels held in an object array (numbers stored as Python objects,
// which sklearn cannot type) to floats: the same labels, as numbers. Labels that are no
// numbers fail the cast, and verification drops the repair.
func numericLabels(in *Input, method string, args []*analysis.Expr) []Candidate {
	if method != "fit" && method != "partial_fit" && method != "score" || len(args) < 2 {
		return nil
	}
	y := args[1]
	v, ok := in.value(y.Text)
	if !ok || v.Dtype != "object" || v.Kind != facts.KindNDArray && v.Kind != facts.KindSeries {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Give the labels %s a numeric dtype (.astype(float))", y.Text), Edits: []finding.Edit{replaceAt(y.Range, y.Text+".astype(float)")}},
		Keeps: fmt.Sprintf("%s holds numbers as Python objects (dtype object), whose label type sklearn cannot tell; as floats they are the same labels", y.Text),
	}}
}
