package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Constructor parameters: the values a call or the kernel gives them, and combinations
// fit rejects (a penalty the solver does not support).

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
	c.report(k.e.Value.NameRange, finding.SeverityError, finding.InvalidParam, "ValueError",
		fmt.Sprintf("%s: %s, so fit raises ValueError; use solver='%s'", est.name, why, fix),
		0.95, []string{describe(est) + fmt.Sprintf(", penalty=%s, solver=%s", pyRepr(penalty), pyRepr(solver))}, nil)
	return true
}
