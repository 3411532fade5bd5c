package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// The scikit-learn family: estimators used before fit (NotFittedError), feature count or
// feature names differing from fit, NaN/inf or strings into estimators that reject them,
// predict_proba on models without it, X/y length mismatch, 1-D X, unseen labels in
// LabelEncoder.transform, empty inputs; and the propagation of fit/transform/
// train_test_split. This file: the estimator classes, calls and methods, and not-fitted;
// the input checks are in sklearn_input.go, train_test_split in sklearn_split.go,
// LabelEncoder in sklearn_labels.go, attributes in sklearn_attrs.go, constructor
// parameters in sklearn_params.go.

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
					c.report(k.e.Args[i].Range, finding.SeverityError, finding.TargetTypeMismatch, "ValueError",
						fmt.Sprintf("%s is 2-D with %d columns but %s is 1-D: a classification metric compares one label per sample (Classification metrics can't handle a mix of ... targets)", a.name, cols, b.name),
						0.93, []string{describe(a), describe(b)}, nil)
					return nil, true
				}
			}
			for i := 0; i < 2; i++ {
				if x, ok := continuousValue(k.args[i]); ok {
					c.report(k.e.Args[i].Range, finding.SeverityError, finding.ContinuousTarget, "ValueError",
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
		if !e.Fitted && !e.FittedUnknown {
			n := len(c.findings)
			reportNotFitted(c, k, est)
			if sklearnClass(est) && k.e.Value != nil && c.asInspected(k.e.Value.Value) && c.pristine(k.e.Range.Start) {
				// scikit-learn's own check_is_fitted said no, and its prediction methods call it.
				c.certainSince(n)
			}
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
					c.report(yExpr.Range, finding.SeverityError, finding.ContinuousTarget, "ValueError",
						fmt.Sprintf("%s holds continuous values such as %s, but %s is a classifier (Unknown label type: 'continuous'); use a regressor or bin the target", y.name, pyRepr(x), e.Class),
						0.93, []string{describe(y)}, nil)
					bad = true
				}
			}
			if !bad && known && info.kind != "transformer" && info.kind != "label" && y != nil && hasNaN(y) {
				c.report(yExpr.Range, finding.SeverityError, finding.NaNInput, "ValueError",
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
		} else if r := k.recvExpr().Root(); r != "" {
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
	var fixes []finding.Fix
	if name := k.recvName(); name != "" {
		if args := trainingArgs(c, k, class); args != "" {
			at := c.stmt.Range.Start
			fixes = append(fixes, finding.Fix{Title: fmt.Sprintf("Fit %s on %s first", name, args),
				Edits: []finding.Edit{{Range: finding.Range{Start: at, End: at},
					NewText: name + ".fit(" + args + ")\n" + strings.Repeat(" ", at.Character)}}})
		}
	}
	c.report(k.e.Value.NameRange, finding.SeverityError, finding.NotFitted, "NotFittedError", msg, 0.97,
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
