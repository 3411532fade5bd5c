package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Estimator parameter combinations: a penalty the chosen solver does not support
// (LogisticRegression(solver='liblinear', penalty='elasticnet')). The penalty is what the
// user chose the model for, so it stays; the solver becomes one that supports it, where the
// estimator is built (this cell or the latest executed one). The elastic-net penalty also
// needs its mixing parameter: when the constructor has none, l1_ratio=0.5 (an even mix) is
// added and the title says so.

func init() {
	register(family{name: "estimator-params", gen: paramsGen})
}

var (
	onlySolverRE   = regexp.MustCompile(`Only '(\w+)' solver supports (\w+) penalty`)
	solverOnlyRE   = regexp.MustCompile(`Solver (\w+) supports only .* penalties, got (\w+) penalty`)
	penaltiesInRE  = regexp.MustCompile(`supports only penalties in \[[^\]]*\], got (\w+)`)
	solverKwRE     = regexp.MustCompile(`\bsolver\s*=\s*(['"])(\w+)['"]`)
	penaltySolvers = map[string]string{"l1": "liblinear", "elasticnet": "saga"}
)

func paramsGen(in *Input) []Candidate {
	if in.exception() != "ValueError" {
		return nil
	}
	msg := in.message()
	var solver, penalty string
	if m := onlySolverRE.FindStringSubmatch(msg); m != nil {
		solver, penalty = m[1], m[2]
	} else if m := solverOnlyRE.FindStringSubmatch(msg); m != nil {
		penalty = m[2]
		solver = penaltySolvers[penalty]
	} else if m := penaltiesInRE.FindStringSubmatch(msg); m != nil {
		penalty = m[1]
		solver = penaltySolvers[penalty]
	}
	if solver == "" {
		return nil
	}
	call, _ := callArgs(in)
	if call == nil || call.Value == nil || call.Value.Value == nil {
		return nil
	}
	site, ok := constructorOf(in, call.Value.Value.Text)
	if !ok {
		return nil
	}
	line := lineAt(site.text, site.line)
	args := line[site.open:site.close]
	q := quoteOf(line)
	var edits []finding.Edit
	pos := func(off int) finding.Position {
		return finding.Position{Line: site.line, Character: analysis.UTF16Len(line[:off])}
	}
	if m := solverKwRE.FindStringSubmatchIndex(args); m != nil {
		r := finding.Range{Start: pos(site.open + m[2]), End: pos(site.open + m[1])}
		edits = append(edits, finding.Edit{Cell: site.cell, Range: r, NewText: q + solver + q})
	}
	var extra []string
	if len(edits) == 0 {
		extra = append(extra, "solver="+q+solver+q)
	}
	title := fmt.Sprintf("Use solver=%s%s%s, which supports the %s penalty", q, solver, q, penalty)
	if penalty == "elasticnet" && !strings.Contains(args, "l1_ratio") {
		extra = append(extra, "l1_ratio=0.5")
		title += " (with l1_ratio=0.5, an even L1/L2 mix: tune it)"
	}
	if len(extra) > 0 {
		sep := ", "
		if strings.TrimSpace(args) == "" {
			sep = ""
		}
		at := finding.Range{Start: pos(site.close), End: pos(site.close)}
		edits = append(edits, finding.Edit{Cell: site.cell, Range: at, NewText: sep + strings.Join(extra, ", ")})
	}
	if site.cell != "" {
		title += fmt.Sprintf(" in cell %d (run it again)", site.index+1)
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: title, Edits: edits},
		Keeps: fmt.Sprintf("the same model with the %s penalty the cell asks for; only the optimizer changes", penalty),
	}}
}

// ctorSite is where an estimator is built: the cell (ID, "" for the target), the line and
// the byte offsets of the constructor's argument list on it.
type ctorSite struct {
	cell        string
	index       int
	text        string
	line        int
	open, close int
}

// constructorOf finds the latest `name = Callee(...)` written on one line, before the crash
// line in the target or in the executed cells, latest first.
func constructorOf(in *Input, name string) (ctorSite, bool) {
	re := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(name) + `\s*=\s*[A-Za-z_][\w.]*\s*\(`)
	type src struct {
		cell  string
		index int
		text  string
		upto  int
	}
	srcs := []src{{"", -1, in.Text, in.crashLine() + 1}}
	for i := len(in.History) - 1; i >= 0; i-- {
		srcs = append(srcs, src{in.History[i].ID, in.History[i].Index, in.History[i].Text, -1})
	}
	for _, s := range srcs {
		ls := lines(s.text)
		for l := len(ls) - 1; l >= 0; l-- {
			if s.upto >= 0 && l >= s.upto {
				continue
			}
			code := stripComment(ls[l])
			loc := re.FindStringIndex(code)
			if loc == nil {
				continue
			}
			end := matchingClose(code, loc[1])
			if end < 0 {
				return ctorSite{}, false // spans lines: left to the user
			}
			return ctorSite{cell: s.cell, index: s.index, text: s.text, line: l, open: loc[1], close: end}, true
		}
	}
	return ctorSite{}, false
}
