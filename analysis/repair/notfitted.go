package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Not fitted: an estimator used (transform, predict, score...) before fit gets fitted just
// before the use, on the data the notebook fitted similar estimators on, or on the
// variables that look like the training set (X_train, y_train). A transformer applied to
// the training data itself becomes fit_transform.

func init() {
	register(family{name: "not-fitted", gen: notFittedGen, wanted: notFittedWanted})
}

// trainingNames are the names notebooks give their training data, X first then y.
var trainingNames = [][2]string{
	{"X_train", "y_train"}, {"x_train", "y_train"}, {"X_tr", "y_tr"}, {"train_X", "train_y"},
	{"X_train_scaled", "y_train"}, {"X", "y"}, {"x", "y"}, {"features", "target"}, {"X_train", "Y_train"},
}

var (
	usesRE         = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\.(transform|predict|predict_proba|predict_log_proba|decision_function|score|inverse_transform|kneighbors|get_feature_names_out)\s*\(`)
	notFittedMsgRE = regexp.MustCompile(`This (\w+) instance is not fitted`)
)

func notFittedWanted(in *Input) []string {
	var out []string
	for _, p := range trainingNames {
		out = append(out, p[0], p[1])
	}
	for _, c := range historyFitCalls(in) {
		out = append(out, c.Value.Value.Name)
	}
	return out
}

// historyFit is one fit call seen in the history.
type historyFit struct {
	recv, class string
	args        []string
}

// historyFitCalls returns the history's calls est.fit(...), est.fit_transform(...) and
// est.fit_predict(...) on a named estimator, in execution order, on the syntax tree.
func historyFitCalls(in *Input) []*analysis.Expr {
	var out []*analysis.Expr
	for _, h := range in.History {
		f := h.Facts
		if f == nil {
			f = analysis.ParseCell(h.Text)
		}
		out = append(out, walkExprs(f.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && fitMethods[e.Value.Name] &&
				e.Value.Name != "partial_fit" && e.Value.Value != nil && e.Value.Value.Kind == analysis.ExprName
		})...)
	}
	return out
}

func historyFits(in *Input) []historyFit {
	var out []historyFit
	for _, c := range historyFitCalls(in) {
		recv := c.Value.Value.Name
		hf := historyFit{recv: recv}
		for _, a := range c.Args {
			hf.args = append(hf.args, a.Text)
		}
		if v, ok := in.value(recv); ok && v.Estimator != nil {
			hf.class = v.Estimator.Class
		}
		out = append(out, hf)
	}
	return out
}

// fitReturned repairs data that became an estimator: an argument on the crash line holds
// an estimator because an earlier cell assigned fit's return value to it (X = est.fit(...):
// fit returns the estimator, not the data); that cell calls fit_transform instead, which
// returns the transformed data.
func fitReturned(in *Input) []Candidate {
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		for _, a := range c.Expr.Args {
			v, ok := in.value(a.Text)
			if a.Kind != analysis.ExprName || !ok || v.Kind != facts.KindEstimator {
				continue
			}
			for i := len(in.History) - 1; i >= 0; i-- {
				h := in.History[i]
				f := h.Facts
				if f == nil {
					f = analysis.ParseCell(h.Text)
				}
				for _, st := range f.Statements {
					if st.Kind != analysis.StmtAssign || len(st.Targets) != 1 || st.Targets[0].Kind != analysis.ExprName || st.Targets[0].Name != a.Text {
						continue
					}
					v := st.Value
					if v == nil || v.Kind != analysis.ExprCall || v.Value == nil || v.Value.Kind != analysis.ExprAttribute || v.Value.Name != "fit" || v.Value.Value == nil || v.Value.Value.Kind != analysis.ExprName {
						continue
					}
					e := replaceAt(v.Value.NameRange, "fit_transform")
					e.Cell = h.ID
					return []Candidate{{
						Fix:   finding.Fix{Title: fmt.Sprintf("Assign the transformed data: fit_transform in cell %d (run it again)", h.Index+1), Edits: []finding.Edit{e}},
						Keeps: fmt.Sprintf("cell %d assigned fit's return value (the estimator itself) to %s; fit_transform fits the same way and returns the data", h.Index+1, a.Text),
					}}
				}
			}
		}
	}
	return nil
}

func notFittedGen(in *Input) []Candidate {
	if fr := fitReturned(in); len(fr) > 0 {
		return fr
	}
	exc := in.exception()
	msg := in.message()
	if exc != "NotFittedError" && !(exc == "AttributeError" && strings.Contains(msg, "not fitted")) && in.Finding.Code != finding.NotFitted {
		return nil
	}
	class := ""
	if m := notFittedMsgRE.FindStringSubmatch(msg); m != nil {
		class = m[1]
	}
	start := statementStart(in.Text, in.crashLine())
	stmt := strings.Join(lines(in.Text)[start:in.crashLine()+1], "\n")
	var out []Candidate
	for _, m := range usesRE.FindAllStringSubmatchIndex(stmt, -1) {
		est, method := stmt[m[2]:m[3]], stmt[m[4]:m[5]]
		v, ok := in.value(est)
		if ok && v.Estimator != nil && v.Estimator.Fitted {
			continue
		}
		if ok && v.Estimator != nil {
			class = v.Estimator.Class
		} else if !ok && class == "" {
			continue
		}
		supervised := method != "transform" && method != "inverse_transform" && method != "get_feature_names_out"
		if ok && v.Estimator != nil && !hasMethod(v.Estimator.Methods, "predict") {
			supervised = false
		}
		arg := firstArg(stmt[m[1]:])
		// The data to fit on: what similar estimators were fitted on, then names that look
		// like the training set.
		type data struct{ args, why string }
		var choices []data
		for _, hf := range historyFits(in) {
			if hf.recv == est || len(hf.args) == 0 || (hf.class != "" && class != "" && hf.class != class && !supervised) {
				continue
			}
			if supervised && len(hf.args) < 2 {
				continue
			}
			a := hf.args[0]
			if supervised {
				a = hf.args[0] + ", " + hf.args[1]
			}
			choices = append(choices, data{a, fmt.Sprintf("the notebook fitted %s on %s", hf.recv, a)})
		}
		for _, p := range trainingNames {
			if !in.inNamespace(p[0]) {
				continue
			}
			if supervised {
				if in.inNamespace(p[1]) {
					choices = append(choices, data{p[0] + ", " + p[1], p[0] + " and " + p[1] + " look like the training set"})
				}
				continue
			}
			choices = append(choices, data{p[0], p[0] + " looks like the training set"})
		}
		seen := map[string]bool{}
		for _, c := range choices {
			if seen[c.args] {
				continue
			}
			seen[c.args] = true
			if !supervised && arg != "" && strings.TrimSpace(c.args) == arg && method == "transform" {
				// Fitting on the very data being transformed: fit_transform says it in one call.
				r := findOnLine(in.Text, lineOf(in.Text, start, stmt, m[4]), "."+method+"(")
				if len(r) > 0 {
					r[0].Start.Character++
					r[0].End.Character--
					out = append(out, Candidate{
						Fix:   finding.Fix{Title: fmt.Sprintf("Fit %s on %s with fit_transform", est, arg), Edits: []finding.Edit{replaceAt(r[0], "fit_transform")}},
						Keeps: c.why + "; the cell transforms that same data",
					})
				}
				continue
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Fit %s on %s first", est, c.args), Edits: []finding.Edit{insertBefore(in.Text, start, fmt.Sprintf("%s.fit(%s)", est, c.args))}},
				Keeps: c.why + "; the cell's own call is unchanged",
			})
		}
		break
	}
	return out
}

// lineOf returns the cell line of byte offset off within stmt, which starts at line start.
func lineOf(text string, start int, stmt string, off int) int {
	return start + len(analysis.SplitLines(stmt[:off])) - 1
}

// firstArg returns the first positional argument's text of a call whose "(" was just
// consumed.
func firstArg(rest string) string {
	depth := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return strings.TrimSpace(rest[:i])
			}
			depth--
		case ',':
			if depth == 0 {
				return strings.TrimSpace(rest[:i])
			}
		}
	}
	return ""
}

func hasMethod(ms []string, m string) bool {
	if len(ms) == 0 {
		return true // unknown: assume it has
	}
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
