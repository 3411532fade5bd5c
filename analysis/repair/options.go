package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A value the library does not take, where the exception lists the ones it does. A
// parameter validated against a set of names says so in its message, whatever the library:
// scikit-learn's "The 'solver' parameter of LogisticRegression must be a str among
// {'saga', 'liblinear', ...}. Got 'libliner' instead.", seaborn's "The `stat` parameter
// for `Hist` must be one of 'count', 'density', ...; not 'counts'.". The string literal of
// the crash line (or of the binding site, where the estimator was built with it) that the
// message quotes is the wrong value; the quoted names beside it are the valid ones, and
// the nearest of them by spelling (a typo, a plural, a case) is the repair. No option near
// the wrong value (criterion='mse' for a classifier, whose criteria are entropy, gini and
// log_loss) is a change of meaning, not a typo: nothing is proposed.

func init() {
	register(family{name: "listed-option", gen: listedOptionGen, told: true})
}

// maxOptionGuesses bounds the listed values tried for one wrong value.
const maxOptionGuesses = 2

func listedOptionGen(in *Input) []Candidate {
	switch in.exception() {
	case "ValueError", "KeyError", "TypeError", "InvalidParameterError":
	default:
		return nil
	}
	msg := in.message()
	quoted := quotedWords(msg)
	if len(quoted) < 3 { // the wrong value and at least two it could have been
		return nil
	}
	var out []Candidate
	for _, lit := range in.exprsOnLine(in.crashLine(), isPlainString) {
		wrong, _ := lit.Const.(string)
		if wrong == "" || !containsStr(quoted, wrong) {
			continue
		}
		kw := keywordOf(in, lit)
		var pool []string
		for _, q := range quoted {
			if q != wrong && q != kw {
				pool = append(pool, q)
			}
		}
		if len(pool) < 2 {
			continue
		}
		quote := lit.Text[:1]
		for _, opt := range nearest(wrong, pool, maxOptionGuesses) {
			if strings.Contains(opt, quote) || strings.Contains(opt, "\\") {
				continue
			}
			what := fmt.Sprintf("'%s'", opt)
			if kw != "" {
				what = kw + "=" + what
			}
			out = append(out, Candidate{
				Fix: finding.Fix{Title: fmt.Sprintf("Use %s, a value the error lists, for '%s'", what, wrong),
					Edits: []finding.Edit{replaceAt(lit.Range, quote+opt+quote)}},
				Keeps: fmt.Sprintf("the same call, with the listed value '%s' spelled as the library has it", opt),
			})
		}
	}
	return out
}

// isPlainString is a string literal without prefix (no f-string, bytes or raw string),
// quoted with one quote character: its text is the quote, the value, the quote.
func isPlainString(e *analysis.Expr) bool {
	if e.Kind != analysis.ExprConst || len(e.Text) < 2 {
		return false
	}
	s, ok := e.Const.(string)
	q := e.Text[:1]
	return ok && (q == "'" || q == `"`) && e.Text == q+s+q
}

// keywordOf returns the name of the keyword argument whose value is lit on the crash
// line's calls, "" when it is positional or no argument.
func keywordOf(in *Input, lit *analysis.Expr) string {
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		for _, k := range c.Expr.Keywords {
			if k.Value != nil && k.Value.Range == lit.Range {
				return k.Name
			}
		}
	}
	return ""
}

// quotedWords returns the distinct texts a message puts in single or double quotes, in
// order: the names it lists, the value it got and the parameter it names. A quote that
// starts inside a word (an apostrophe: "doesn't") opens nothing.
func quotedWords(msg string) []string {
	var out []string
	for i := 0; i < len(msg); i++ {
		q := msg[i]
		if q != '\'' && q != '"' || (i > 0 && isIdentByte(msg[i-1])) {
			continue
		}
		j := strings.IndexByte(msg[i+1:], q)
		if j < 0 {
			break
		}
		w := msg[i+1 : i+1+j]
		if w != "" && len(w) <= 40 && !strings.ContainsAny(w, "\n'\"") && !containsStr(out, w) {
			out = append(out, w)
		}
		i += j + 1
	}
	return out
}
