package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: scikit-learn. Estimators used before fit (NotFittedError), feature count or
// feature names differing from fit, NaN/inf or strings into estimators that reject them,
// predict_proba on models without it, X/y length mismatch, 1-D X, unseen labels in
// LabelEncoder.transform, empty inputs; and the propagation of fit/transform/
// train_test_split.

// estInfo says what an estimator class accepts (scikit-learn 1.2).
type estInfo struct {
	nanOK   bool // accepts NaN in X
	strOK   bool // accepts strings in X
	proba   bool // has predict_proba with default parameters
	oneD    bool // takes 1-D input (LabelEncoder, text vectorizers)
	kind    string
	shapeIn bool // transform keeps X's shape (scalers)
}

var estimators = map[string]estInfo{}

func init() {
	add := func(info estInfo, names ...string) {
		for _, n := range names {
			estimators[n] = info
		}
	}
	add(estInfo{proba: true, kind: "classifier"}, "LogisticRegression", "RandomForestClassifier",
		"ExtraTreesClassifier", "DecisionTreeClassifier", "GradientBoostingClassifier",
		"KNeighborsClassifier", "GaussianNB", "MultinomialNB", "BernoulliNB", "ComplementNB",
		"AdaBoostClassifier", "MLPClassifier", "BaggingClassifier", "LinearDiscriminantAnalysis",
		"QuadraticDiscriminantAnalysis", "GaussianProcessClassifier", "LogisticRegressionCV")
	add(estInfo{proba: true, nanOK: true, kind: "classifier"}, "HistGradientBoostingClassifier")
	add(estInfo{kind: "classifier"}, "LinearSVC", "RidgeClassifier", "RidgeClassifierCV", "Perceptron",
		"PassiveAggressiveClassifier", "NearestCentroid", "SGDClassifier", "SVC", "NuSVC")
	add(estInfo{kind: "regressor"}, "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SVR", "NuSVR",
		"LinearSVR", "RandomForestRegressor", "ExtraTreesRegressor", "DecisionTreeRegressor",
		"GradientBoostingRegressor", "KNeighborsRegressor", "AdaBoostRegressor", "MLPRegressor",
		"BayesianRidge", "SGDRegressor", "HuberRegressor", "Lars", "LassoCV", "RidgeCV", "ElasticNetCV",
		"BaggingRegressor", "PoissonRegressor", "KernelRidge", "GaussianProcessRegressor")
	add(estInfo{nanOK: true, kind: "regressor"}, "HistGradientBoostingRegressor")
	add(estInfo{kind: "cluster"}, "KMeans", "MiniBatchKMeans")
	add(estInfo{nanOK: true, kind: "transformer", shapeIn: true}, "StandardScaler", "MinMaxScaler",
		"RobustScaler", "MaxAbsScaler", "QuantileTransformer", "PowerTransformer")
	add(estInfo{kind: "transformer", shapeIn: true}, "Normalizer")
	add(estInfo{kind: "transformer"}, "PCA", "TruncatedSVD", "KBinsDiscretizer")
	add(estInfo{nanOK: true, strOK: true, kind: "transformer"}, "SimpleImputer", "OneHotEncoder", "OrdinalEncoder")
	add(estInfo{nanOK: true, strOK: true, oneD: true, kind: "label"}, "LabelEncoder", "LabelBinarizer",
		"CountVectorizer", "TfidfVectorizer", "HashingVectorizer")
	for n := range estimators {
		knownBareFunction[n] = "sklearn." + n
	}
	knownBareFunction["train_test_split"] = "sklearn.model_selection.train_test_split"
	for n := range classificationMetric {
		knownBareFunction[n] = "sklearn.metrics." + n
	}
	knownBareFunction["Pipeline"] = "sklearn.pipeline.Pipeline"
	knownBareFunction["make_pipeline"] = "sklearn.pipeline.make_pipeline"
}

// estClass returns the last component of a qualified class name when it is a known
// scikit-learn estimator.
func estClass(q string) (string, bool) {
	if !strings.HasPrefix(q, "sklearn.") {
		return "", false
	}
	name := q[strings.LastIndexByte(q, '.')+1:]
	if _, ok := estimators[name]; ok || name == "Pipeline" || name == "make_pipeline" {
		return name, true
	}
	return "", false
}

// hasProba says whether an estimator built in the cell has predict_proba.
func hasProba(class string, ctor *analysis.Expr) bool {
	info := estimators[class]
	switch class {
	case "SVC", "NuSVC":
		if p := ctor.Keyword("probability"); p != nil && p.Const == true {
			return true
		}
		return false
	case "SGDClassifier":
		if l := ctor.Keyword("loss"); l != nil {
			return l.Const == "log_loss" || l.Const == "log" || l.Const == "modified_huber"
		}
		return false
	}
	return info.proba
}

// sklearnCall handles estimator constructors, estimator methods, train_test_split and
// metrics.
func sklearnCall(c *checker, k *callInfo) (*val, bool) {
	if class, ok := estClass(k.qual); ok && k.method == "" || ok && k.recv != nil && k.recv.Kind == facts.KindPyModule {
		e := &facts.Estimator{Class: class}
		if class == "make_pipeline" {
			e.Class = "Pipeline"
		}
		info := estimators[class]
		if class != "Pipeline" && class != "make_pipeline" {
			nan := info.nanOK
			e.AllowsNaN = &nan
			e.Methods = []string{}
			switch info.kind {
			case "classifier":
				e.Methods = append(e.Methods, "predict", "decision_function", "score")
				if hasProba(class, k.e) {
					e.Methods = append(e.Methods, "predict_proba", "predict_log_proba")
				}
			case "regressor", "cluster":
				e.Methods = append(e.Methods, "predict", "score")
			default:
				e.Methods = nil
			}
			if class == "KNeighborsClassifier" || strings.HasPrefix(class, "GaussianProcess") || class == "GaussianNB" || strings.HasSuffix(class, "NB") {
				e.Methods = nil // no decision_function; keep silent on it
			}
		}
		v := &val{name: k.e.Text, origin: fmt.Sprintf("created on line %d", k.e.Range.Start.Line+1), ctor: k.e, ident: new(int)}
		v.Kind = facts.KindEstimator
		v.Estimator = e
		return v, true
	}
	switch {
	case strings.HasSuffix(k.qual, "train_test_split") && strings.HasPrefix(k.qual, "sklearn"):
		return trainTestSplit(c, k), true
	case strings.HasPrefix(k.qual, "sklearn.metrics.") && len(k.args) >= 2:
		if checkLengths(c, k, k.args[0], k.args[1], k.e.Args[0], k.e.Args[1]) {
			return nil, true
		}
		if classificationMetric[strings.TrimPrefix(k.qual, "sklearn.metrics.")] {
			for i := 0; i < 2; i++ {
				a, b := k.args[i], k.args[1-i]
				na, okA := a.ndim()
				nb, okB := b.ndim()
				if cols, ok := a.ncols(); okA && okB && na == 2 && nb == 1 && ok && cols > 1 {
					c.report(k.e.Args[i].Range, analysis.SeverityError, finding.TargetTypeMismatch, "ValueError",
						fmt.Sprintf("%s is 2-D with %d columns but %s is 1-D: a classification metric compares one label per sample (Classification metrics can't handle a mix of ... targets)", a.name, cols, b.name),
						0.93, []string{describe(a), describe(b)}, nil)
					return nil, true
				}
			}
			for i := 0; i < 2; i++ {
				if x, ok := continuousValue(k.args[i]); ok {
					c.report(k.e.Args[i].Range, analysis.SeverityError, finding.ContinuousTarget, "ValueError",
						fmt.Sprintf("%s holds continuous values such as %s, and classification metrics need class labels (Classification metrics can't handle ... continuous targets); round or threshold the predictions", k.args[i].name, pyRepr(x)),
						0.9, []string{describe(k.args[i])}, nil)
					break
				}
			}
		}
		return nil, true
	}
	if k.recv == nil || k.recv.Kind != facts.KindEstimator || k.recv.Estimator == nil {
		return nil, false
	}
	return estimatorMethod(c, k, k.recv)
}

// estimatorMethod checks and models est.fit/predict/transform/...
func estimatorMethod(c *checker, k *callInfo, est *val) (*val, bool) {
	e := est.Estimator
	info, known := estimators[e.Class]
	X, xExpr := k.arg(0, "X"), k.argExpr(0, "X")
	switch k.method {
	case "predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score", "inverse_transform", "kneighbors":
		if !e.Fitted {
			reportNotFitted(c, k, est)
			return nil, true
		}
		if e.Class == "LabelEncoder" && k.method == "transform" {
			checkUnseenLabels(c, k, est, X, xExpr)
			return labelsOut(X, k), true
		}
		if checkInput(c, k, est, info, known, X, xExpr, false) {
			return nil, true
		}
		if k.method == "score" {
			if y := k.arg(1, "y"); y != nil && k.has(1, "y") {
				checkLengths(c, k, X, y, xExpr, k.argExpr(1, "y"))
			}
			return nil, true
		}
		return methodResult(k, est, info, X), true
	case "fit", "fit_transform", "fit_predict", "partial_fit":
		if checkParams(c, k, est) {
			return nil, true
		}
		y, yExpr := k.arg(1, "y"), k.argExpr(1, "y")
		if e.Class == "LabelEncoder" || e.Class == "LabelBinarizer" {
			y, yExpr = X, xExpr
		}
		bad := checkInput(c, k, est, info, known, X, xExpr, true)
		if !bad && yExpr != nil && e.Class != "LabelEncoder" && e.Class != "LabelBinarizer" {
			bad = checkLengths(c, k, X, y, xExpr, yExpr)
			if !bad && known && info.kind == "classifier" {
				if x, ok := continuousValue(y); ok {
					c.report(yExpr.Range, analysis.SeverityError, finding.ContinuousTarget, "ValueError",
						fmt.Sprintf("%s holds continuous values such as %s, but %s is a classifier (Unknown label type: 'continuous'); use a regressor or bin the target", y.name, pyRepr(x), e.Class),
						0.93, []string{describe(y)}, nil)
					bad = true
				}
			}
			if !bad && known && info.kind != "transformer" && info.kind != "label" && y != nil && hasNaN(y) {
				c.report(yExpr.Range, analysis.SeverityError, finding.NaNInput, "ValueError",
					fmt.Sprintf("%s contains NaN, and %s cannot learn from missing targets (Input y contains NaN)", y.name, e.Class),
					0.93, []string{describe(y)}, nil)
				bad = true
			}
		}
		fitted := est.clone()
		fitted.Estimator.Fitted = true
		fitted.Estimator.NFeaturesIn = nil
		fitted.Estimator.FeatureNamesIn = nil
		fitted.Estimator.Classes = nil
		if n, ok := X.ncols(); ok && X.Kind != facts.KindSeries {
			fitted.Estimator.NFeaturesIn = &n
		}
		if X != nil && X.Kind == facts.KindDataFrame && X.colsComplete {
			if names := columnNames(X); len(names) == len(X.Columns) {
				fitted.Estimator.FeatureNamesIn = names
			}
		}
		if e.Class == "LabelEncoder" {
			if vals, ok := completeValues(X); ok {
				fitted.Estimator.Classes = vals
			}
		}
		fitted.origin = fmt.Sprintf("fitted on line %d", k.e.Range.Start.Line+1)
		if name := k.recvName(); name != "" {
			fitted.name = name
			c.rebind(name, fitted)
		} else if r := rootName(k.recvExpr()); r != "" {
			c.forget(r)
		}
		if bad {
			return nil, true
		}
		switch k.method {
		case "fit", "partial_fit":
			return fitted, true
		case "fit_transform":
			if e.Class == "LabelEncoder" {
				return labelsOut(X, k), true
			}
			return methodResult(k, fitted, info, X), true
		}
		return nil, true
	}
	return nil, false
}

// methodResult models what predict/transform return.
func methodResult(k *callInfo, est *val, info estInfo, X *val) *val {
	if X == nil {
		return nil
	}
	out := &val{name: k.e.Text, origin: fmt.Sprintf("line %d", k.e.Range.Start.Line+1), ident: new(int)}
	out.Kind = facts.KindNDArray
	rows := -1
	if n, ok := X.rows(); ok {
		rows = n
	}
	switch k.method {
	case "predict":
		out.Shape = []int{rows}
	case "predict_proba", "predict_log_proba", "decision_function":
		// One column per class (decision_function: one value per sample for two classes).
		n := len(est.Estimator.Classes)
		if n == 0 || info.kind != "classifier" {
			return nil
		}
		out.Dtype = "float64"
		out.Shape = []int{rows, n}
		if k.method == "decision_function" && n == 2 {
			out.Shape = []int{rows}
		}
	case "transform", "fit_transform":
		if info.shapeIn {
			if n, ok := X.ncols(); ok {
				out.Shape = []int{rows, n}
			}
			out.Dtype = "float64"
			out.HasNaN = X.HasNaN
			if X != nil && X.Kind == facts.KindDataFrame && X.colsComplete {
				nan := false
				known := true
				for _, col := range X.Columns {
					if col.Nulls == nil {
						known = false
					} else if *col.Nulls > 0 {
						nan = true
					}
				}
				if known || nan {
					out.HasNaN = &nan
				}
			}
		} else if est.Estimator.Class == "SimpleImputer" {
			f := false
			out.HasNaN = &f
		} else if est.Estimator.Class == "PCA" && est.ctor != nil {
			if nc := est.ctor.Keyword("n_components"); nc != nil {
				if n, ok := nc.Const.(int64); ok {
					out.Shape = []int{rows, int(n)}
				}
			} else if len(est.ctor.Args) > 0 {
				if n, ok := est.ctor.Args[0].Const.(int64); ok {
					out.Shape = []int{rows, int(n)}
				}
			}
		} else {
			return nil
		}
	default:
		return nil
	}
	return out
}

// labelsOut is LabelEncoder's transform result: integer codes, one per sample.
func labelsOut(X *val, k *callInfo) *val {
	out := &val{name: k.e.Text, ident: new(int)}
	out.Kind = facts.KindNDArray
	out.Dtype = "int64"
	if n, ok := X.rows(); ok {
		out.Shape = []int{n}
	}
	return out
}

// reportNotFitted reports a prediction method on an unfitted estimator, with a fix that
// fits it first when the notebook holds an obvious training set.
func reportNotFitted(c *checker, k *callInfo, est *val) {
	class := est.Estimator.Class
	msg := fmt.Sprintf("%s (%s) is not fitted yet, so .%s() raises NotFittedError; call %s.fit(...) first", est.name, class, k.method, est.name)
	var fixes []analysis.Fix
	if name := k.recvName(); name != "" {
		if args := trainingArgs(c, k, class); args != "" {
			at := c.stmt.Range.Start
			fixes = append(fixes, analysis.Fix{Title: fmt.Sprintf("Fit %s on %s first", name, args),
				Edits: []analysis.Edit{{Range: analysis.Range{Start: at, End: at},
					NewText: name + ".fit(" + args + ")\n" + strings.Repeat(" ", at.Character)}}})
		}
	}
	c.report(k.e.Value.NameRange, analysis.SeverityError, finding.NotFitted, "NotFittedError", msg, 0.97,
		[]string{describe(est)}, fixes)
}

// trainingPairs are the conventional names of a training set, most specific first.
var trainingPairs = [][2]string{{"X_train", "y_train"}, {"x_train", "y_train"}, {"X", "y"}}

// trainingArgs returns the arguments of the fit call an unfitted estimator obviously needs
// ("X_train, y_train"; "X_train" for transformers and clusterers), or "" when no training
// set is certain: both names must be bound, with known and equal lengths, and the features
// must match the columns of the data the call passes.
func trainingArgs(c *checker, k *callInfo, class string) string {
	info, ok := estimators[class]
	if !ok {
		return ""
	}
	supervised := info.kind == "classifier" || info.kind == "regressor"
	if !supervised && info.kind != "transformer" && info.kind != "cluster" {
		return ""
	}
	passed := k.arg(0, "X")
	for _, p := range trainingPairs {
		X := c.lookup(p[0])
		n, ok := X.rows()
		if !ok || n == 0 || !(X.Kind == facts.KindDataFrame || X.Kind == facts.KindNDArray) {
			continue
		}
		if want, ok := passed.ncols(); ok {
			if have, ok := X.ncols(); !ok || have != want {
				continue
			}
		}
		if !supervised {
			return p[0]
		}
		y := c.lookup(p[1])
		if m, ok := y.rows(); !ok || m != n {
			continue
		}
		return p[0] + ", " + p[1]
	}
	return ""
}

// nameExists reports whether name is bound in the kernel or earlier in the cell.
func (c *checker) nameExists(name string) bool {
	if v, ok := c.state[name]; ok {
		return v != nil || ok
	}
	if c.env.Namespace != nil {
		return c.env.Namespace[name]
	}
	f, ok := c.env.value(name)
	return ok && f.Exists
}

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
			c.report(xExpr.Range, analysis.SeverityError, finding.StringInput, "ValueError",
				fmt.Sprintf("%s holds text (%s, e.g. %q), and %s needs numbers (could not convert string to float: %q); encode it first (get_dummies, OneHotEncoder, LabelEncoder)",
					X.name, strings.Join(cols, ", "), sample, class, sample),
				0.95, []string{describe(X)}, nil)
			return true
		}
	}
	if known && !info.strOK && likelyText(X) {
		c.report(xExpr.Range, analysis.SeverityWarning, finding.StringInput, "ValueError",
			fmt.Sprintf("%s holds Python strings (dtype object), and %s needs numbers: unless every string is a number, fit/predict raises (could not convert string to float)", X.name, class),
			0.75, []string{describe(X) + ", element types: str"}, nil)
		return true
	}
	if known && !info.oneD {
		if nd, ok := X.ndim(); ok && nd == 1 && (X.Kind == facts.KindSeries || X.Kind == facts.KindNDArray) {
			var fixes []analysis.Fix
			if xExpr.Kind == analysis.ExprSubscript && xExpr.Index != nil && xExpr.Index.Kind == analysis.ExprConst {
				fixes = append(fixes, replaceFix("Select a one-column DataFrame", xExpr.Index.Range, "["+xExpr.Index.Text+"]", true))
			} else if X.Kind == facts.KindSeries {
				fixes = append(fixes, replaceFix("Reshape to one column", xExpr.Range, xExpr.Text+".to_numpy().reshape(-1, 1)", true))
			} else {
				fixes = append(fixes, replaceFix("Reshape to one column", xExpr.Range, xExpr.Text+".reshape(-1, 1)", true))
			}
			c.report(xExpr.Range, analysis.SeverityError, finding.Input1D, "ValueError",
				fmt.Sprintf("%s is 1-D, but %s.%s expects a 2-D array of samples × features (Expected 2D array, got 1D array instead)", X.name, class, k.method),
				0.95, []string{describe(X)}, fixes)
			return true
		}
	}
	if known && !info.oneD {
		if nd, ok := X.ndim(); ok && nd > 2 && X.Kind == facts.KindNDArray {
			c.report(xExpr.Range, analysis.SeverityError, finding.NdimMismatch, "ValueError",
				fmt.Sprintf("%s is %d-D, but %s expects a 2-D array of samples × features (Found array with dim %d); flatten it with .reshape(len(%s), -1)", X.name, nd, class, nd, xExpr.Text),
				0.95, []string{describe(X)}, []analysis.Fix{replaceFix("Flatten to 2-D", xExpr.Range, xExpr.Text+".reshape(len("+xExpr.Text+"), -1)", false)})
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
		c.report(xExpr.Range, analysis.SeverityError, finding.NaNInput, "ValueError",
			fmt.Sprintf("%s contains %s, and %s does not accept missing values (Input X contains NaN); impute or drop them first", X.name, what, class),
			0.95, []string{describe(X)}, nil)
		return true
	}
	if !fitting && e.Fitted && e.NFeaturesIn != nil {
		if n, ok := X.ncols(); ok && n != *e.NFeaturesIn {
			c.report(xExpr.Range, analysis.SeverityError, finding.FeatureCountMismatch, "ValueError",
				fmt.Sprintf("%s has %d features, but %s was fitted on %d (X has %d features, but %s is expecting %d features as input)",
					X.name, n, est.name, *e.NFeaturesIn, n, class, *e.NFeaturesIn),
				0.96, []string{describe(X), describe(est)}, nil)
			return true
		}
	}
	if fitting {
		if n, ok := X.rows(); ok && n == 0 {
			c.report(xExpr.Range, analysis.SeverityError, finding.EmptyInput, "ValueError",
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
		c.report(xExpr.Range, analysis.SeverityError, finding.FeatureNamesMismatch, "ValueError",
			fmt.Sprintf("%s has the fitted feature names in a different order (Feature names must be in the same order as they were in fit)", X.name),
			0.95, []string{describe(X), describe(est)},
			[]analysis.Fix{replaceFix("Reorder the columns as in fit", xExpr.Range, xExpr.Text+"["+k.recvText()+".feature_names_in_]", true)})
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
	c.report(xExpr.Range, analysis.SeverityError, finding.FeatureNamesMismatch, "ValueError", msg, 0.96, ev, []analysis.Fix{fix})
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
	c.report(k.e.Range, analysis.SeverityError, finding.LengthMismatch, "ValueError",
		fmt.Sprintf("%s has %d samples but %s has %d (Found input variables with inconsistent numbers of samples: [%d, %d])", X.name, nx, y.name, ny, nx, ny),
		0.95, []string{describe(X), describe(y)}, nil)
	return true
}

// trainTestSplit checks the arrays and models the split: columns are kept, rows follow
// scikit-learn's rounding (test = ceil(n*test_size)).
func trainTestSplit(c *checker, k *callInfo) *val {
	var arrays []*val
	for i, a := range k.args {
		if k.e.Args[i].Starred {
			return nil
		}
		arrays = append(arrays, a)
	}
	for i := 1; i < len(arrays); i++ {
		if checkLengths(c, k, arrays[0], arrays[i], k.e.Args[0], k.e.Args[i]) {
			return nil
		}
	}
	if len(arrays) > 0 {
		if n, ok := arrays[0].rows(); ok && n == 0 {
			c.report(k.e.Range, analysis.SeverityError, finding.EmptyInput, "ValueError",
				fmt.Sprintf("%s has no rows, so train_test_split cannot make a non-empty train set (With n_samples=0 ... the resulting train set will be empty)", arrays[0].name),
				0.95, []string{describe(arrays[0])}, nil)
			return nil
		}
	}
	nTrain, nTest := -1, -1
	if len(arrays) > 0 {
		if n, ok := arrays[0].rows(); ok {
			nTrain, nTest = splitSizes(n, k.kw["test_size"], k.kw["train_size"])
		}
	}
	out := &val{name: k.e.Text}
	out.Kind = facts.KindTuple
	for _, a := range arrays {
		for j, rows := range []int{nTrain, nTest} {
			if a == nil {
				out.elems = append(out.elems, nil)
				continue
			}
			part := a.clone()
			part.ident = new(int)
			part.fromKernel = false
			part.origin = fmt.Sprintf("split from %s on line %d", a.name, k.e.Range.Start.Line+1)
			part.name = a.name + []string{"[train]", "[test]"}[j]
			part.hasConst, part.konst, part.elems = false, nil, nil
			part.Index = nil
			part.Sample, part.Min, part.Max, part.NUnique = nil, nil, nil, nil
			if len(part.Shape) > 0 {
				part.Shape[0] = rows
			}
			if part.Len != nil {
				if rows >= 0 {
					r := rows
					part.Len = &r
				} else {
					part.Len = nil
				}
			}
			// NaN may or may not land in each part: only "no NaN" survives a split.
			if part.HasNaN != nil && *part.HasNaN {
				part.HasNaN = nil
			}
			for ci := range part.Columns {
				if part.Columns[ci].Nulls != nil && *part.Columns[ci].Nulls > 0 {
					part.Columns[ci].Nulls = nil
				}
				part.Columns[ci].NonNumericSample = nil
				part.Columns[ci].Min, part.Columns[ci].Max = nil, nil
			}
			out.elems = append(out.elems, part)
		}
	}
	return out
}

// splitSizes follows sklearn's _validate_shuffle_split for float and int sizes.
func splitSizes(n int, test, train *val) (int, int) {
	size := func(v *val) (float64, bool, bool) { // value, isFloat, known
		if v == nil || !v.hasConst {
			return 0, false, v == nil
		}
		switch x := v.konst.(type) {
		case float64:
			return x, true, true
		case int64:
			return float64(x), false, true
		}
		return 0, false, false
	}
	tv, tf, tk := size(test)
	rv, rf, rk := size(train)
	if !tk || !rk {
		return -1, -1
	}
	if test == nil && train == nil {
		tv, tf, tk = 0.25, true, true
	}
	nTest, nTrain := -1, -1
	if test != nil || train == nil {
		if tf {
			nTest = int(math.Ceil(tv * float64(n)))
		} else {
			nTest = int(tv)
		}
	}
	if train != nil {
		if rf {
			nTrain = int(math.Floor(rv * float64(n)))
		} else {
			nTrain = int(rv)
		}
	}
	switch {
	case nTrain < 0 && nTest >= 0:
		nTrain = n - nTest
	case nTest < 0 && nTrain >= 0:
		nTest = n - nTrain
	}
	if nTrain < 0 || nTest < 0 || nTrain+nTest > n {
		return -1, -1
	}
	return nTrain, nTest
}

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
	c.report(xExpr.Range, analysis.SeverityError, finding.UnseenLabel, "ValueError",
		fmt.Sprintf("%s contains labels %s was not fitted on: %s (y contains previously unseen labels)", X.name, est.name, strings.Join(unseen, ", ")),
		0.95, []string{describe(X), fmt.Sprintf("%s.classes_: %s", est.name, strings.Join(cls, ", "))}, nil)
}

// sklearnAttr handles attribute access on estimators.
func sklearnAttr(c *checker, e *analysis.Expr, base *val) *val {
	return &val{bound: base, name: e.Text}
}

// sklearnAttrRule reports prediction methods the estimator lacks and fitted attributes of
// unfitted estimators.
func sklearnAttrRule(c *checker, e *analysis.Expr, base *val) {
	est := base.Estimator
	if est == nil {
		return
	}
	switch e.Name {
	case "predict_proba", "predict_log_proba", "decision_function":
		if est.Methods == nil || contains(est.Methods, e.Name) {
			return
		}
		why := fmt.Sprintf("%s has no %s", est.Class, e.Name)
		var fixes []analysis.Fix
		if (est.Class == "SVC" || est.Class == "NuSVC") && e.Name != "decision_function" {
			why = fmt.Sprintf("%s only has %s when built with probability=True", est.Class, e.Name)
		}
		code := finding.NoPredictProba
		if e.Name == "decision_function" {
			code = finding.MissingAttribute
		}
		if e.Name == "predict_proba" {
			fixes = append(fixes, replaceFix("Use predict", e.NameRange, "predict", false))
		}
		c.report(e.NameRange, analysis.SeverityError, code, "AttributeError", why+", so "+e.Text+" raises AttributeError",
			0.95, []string{describe(base), "methods: " + strings.Join(est.Methods, ", ")}, fixes)
		return
	}
	if !est.Fitted && strings.HasSuffix(e.Name, "_") && !strings.HasPrefix(e.Name, "_") && est.Class != "Pipeline" {
		c.report(e.NameRange, analysis.SeverityError, finding.NotFitted, "AttributeError",
			fmt.Sprintf("%s is not fitted, so it has no %s yet ('%s' object has no attribute '%s')", base.name, e.Name, est.Class, e.Name),
			0.93, []string{describe(base)}, nil)
	}
}

// param returns a constructor parameter: the keyword of a constructor call in this cell, or
// the kernel's get_params() value. def is used when neither says otherwise.
func param(est *val, name string, def any) (any, bool) {
	if est.ctor != nil {
		if x := est.ctor.Keyword(name); x != nil {
			if x.Kind == analysis.ExprConst {
				return x.Const, true
			}
			return nil, false
		}
		return def, true
	}
	if est.Estimator != nil && est.Estimator.Params != nil {
		v, ok := est.Estimator.Params[name]
		return v, ok
	}
	return nil, false
}

// checkParams reports parameter combinations fit rejects: LogisticRegression's penalty must
// suit its solver (scikit-learn 1.2).
func checkParams(c *checker, k *callInfo, est *val) bool {
	if est.Estimator.Class != "LogisticRegression" {
		return false
	}
	pv, ok1 := param(est, "penalty", "l2")
	sv, ok2 := param(est, "solver", "lbfgs")
	if !ok1 || !ok2 {
		return false
	}
	penalty, okp := pv.(string)
	if pv == nil {
		penalty, okp = "none", true // penalty=None means no penalty
	}
	solver, oks := sv.(string)
	if !okp || !oks {
		return false
	}
	why := ""
	switch solver {
	case "lbfgs", "newton-cg", "newton-cholesky", "sag":
		if penalty != "l2" && penalty != "none" {
			why = fmt.Sprintf("solver %s supports only 'l2' or 'none' penalties, got %s", solver, penalty)
		}
	case "liblinear":
		if penalty == "elasticnet" {
			why = "only the 'saga' solver supports the elasticnet penalty, got solver=liblinear"
		} else if penalty == "none" {
			why = "penalty='none' is not supported by the liblinear solver"
		}
	}
	if why == "" {
		return false
	}
	fix := "liblinear"
	if penalty == "elasticnet" || penalty == "none" {
		fix = "saga"
	}
	c.report(k.e.Value.NameRange, analysis.SeverityError, finding.InvalidParam, "ValueError",
		fmt.Sprintf("%s: %s, so fit raises ValueError; use solver='%s'", est.name, why, fix),
		0.95, []string{describe(est) + fmt.Sprintf(", penalty=%s, solver=%s", pyRepr(penalty), pyRepr(solver))}, nil)
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
