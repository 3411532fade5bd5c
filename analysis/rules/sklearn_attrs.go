package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Estimator attributes: fitted attributes (coef_) before fit, and methods the estimator
// lacks (predict_proba).

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
		var fixes []finding.Fix
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
		c.report(e.NameRange, finding.SeverityError, code, "AttributeError", why+", so "+e.Text+" raises AttributeError",
			0.95, []string{describe(base), "methods: " + strings.Join(est.Methods, ", ")}, fixes)
		return
	}
	if !est.Fitted && !est.FittedUnknown && strings.HasSuffix(e.Name, "_") && !strings.HasPrefix(e.Name, "_") && est.Class != "Pipeline" {
		c.report(e.NameRange, finding.SeverityError, finding.NotFitted, "AttributeError",
			fmt.Sprintf("%s is not fitted, so it has no %s yet ('%s' object has no attribute '%s')", base.name, e.Name, est.Class, e.Name),
			0.93, []string{describe(base)}, nil)
	}
}
