package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// This file: notebook order. A cell that drops or renames a column of a kernel DataFrame it
// also rebinds (df = df.drop(...), inplace=True) crashes when it runs a second time: the
// column is already gone. The rule turns a missing-column finding into stale-state with the
// run that changed the frame.

// staleColumn explains a missing label as the effect of an earlier run, or returns "".
func staleColumn(c *checker, df *val, label any) string {
	if df == nil || !df.fromKernel || df.name == "" || !c.cellRebinds(df.name) {
		return ""
	}
	s := fmt.Sprintf("column %s was already removed: %s has no %s%s, and this cell rebinds %s, so it has probably run before",
		pyRepr(label), df.name, pyRepr(label), spaced(c.env.asOf()), df.name)
	if d := c.definedBy(df.name); d != "" {
		s += "; " + d
	}
	return s
}

// cellRebinds reports whether the cell assigns name at top level or changes it in place
// (inplace=True, item assignment, del).
func (c *checker) cellRebinds(name string) bool {
	for _, d := range c.cf.Defs {
		if d.Name == name {
			return true
		}
	}
	for _, call := range c.cf.Calls {
		if strings.HasPrefix(call.Callee, name+".") && call.Expr != nil {
			if v := call.Expr.Keyword("inplace"); v != nil && v.Const == true {
				return true
			}
		}
	}
	return false
}

// definedBy says which cell and run last bound name, when the caller told us.
func (c *checker) definedBy(name string) string {
	if c.env.LastDefiner == nil {
		return ""
	}
	cell, run, ok := c.env.LastDefiner(name)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s was last set by cell %d (run %d)", name, cell+1, run)
}

// addDefinerEvidence appends "x was last set by cell N (run M)" to findings whose evidence
// names a kernel value, so the user can see which run produced the state.
func addDefinerEvidence(c *checker, f *finding.Finding) {
	if c.env.LastDefiner == nil {
		return
	}
	seen := map[string]bool{}
	for _, e := range f.Evidence {
		name, _, ok := strings.Cut(e, ":")
		if !ok || seen[name] || strings.ContainsAny(name, " ([.") || !c.fromKernelName(name) || hasOverwritten(f, name) {
			continue
		}
		seen[name] = true
		if d := c.definedBy(name); d != "" && !strings.Contains(strings.Join(f.Evidence, "\n"), d) {
			f.Evidence = append(f.Evidence, d)
		}
	}
}

// checkDropInLoop reports a loop body that drops constant columns of the same frame on every
// iteration (inplace=True or df = df.drop(...)): the second iteration finds them gone.
func checkDropInLoop(c *checker, loop *analysis.Statement, iter *val) {
	n, known := iter.rows()
	if iter != nil && iter.hasConst {
		if l, ok := iter.konst.([]any); ok {
			n, known = len(l), true
		}
	}
	if known && n < 2 {
		return
	}
	for _, s := range loop.Body {
		call, name := dropCallOn(s)
		if call == nil {
			continue
		}
		if v := call.Keyword("errors"); v != nil && v.Const == "ignore" {
			continue
		}
		labels := call.Keyword("columns")
		if labels == nil && len(call.Args) > 0 {
			labels = call.Args[0]
		}
		if labels == nil || !constExpr(labels) || rebindsElsewhere(loop.Body, s, name) {
			continue
		}
		sev, conf := finding.SeverityWarning, 0.75
		ev := []string{fmt.Sprintf("the loop body drops %s from %s on every iteration", labels.Text, name)}
		if known {
			sev, conf = finding.SeverityError, 0.93
			ev = append(ev, fmt.Sprintf("the loop runs %d times (%s)", n, describe(iter)))
		}
		save := c.cond
		c.cond = 0
		c.report(labels.Range, sev, finding.DropInLoop, "KeyError",
			fmt.Sprintf("%s is dropped from %s inside the loop: the first iteration removes it, so the second raises KeyError (not found in axis); move the drop out of the loop", labels.Text, name),
			conf, ev, nil)
		c.cond = save
		c.stmtFailed = false
	}
}

// dropCallOn returns the drop call of `df.drop(..., inplace=True)` or `df = df.drop(...)`
// and the frame's name.
func dropCallOn(s *analysis.Statement) (*analysis.Expr, string) {
	v := s.Value
	if v == nil || v.Kind != analysis.ExprCall || v.Value == nil || v.Value.Kind != analysis.ExprAttribute || v.Value.Name != "drop" {
		return nil, ""
	}
	recv := v.Value.Value
	if recv == nil || recv.Kind != analysis.ExprName {
		return nil, ""
	}
	switch s.Kind {
	case analysis.StmtExpr:
		if x := v.Keyword("inplace"); x != nil && x.Const == true {
			return v, recv.Name
		}
	case analysis.StmtAssign:
		if len(s.Targets) == 1 && s.Targets[0].Kind == analysis.ExprName && s.Targets[0].Name == recv.Name {
			return v, recv.Name
		}
	}
	return nil, ""
}

// constExpr reports a constant or a list/tuple of constants.
func constExpr(e *analysis.Expr) bool {
	switch e.Kind {
	case analysis.ExprConst:
		return e.Const != nil
	case analysis.ExprList, analysis.ExprTuple:
		for _, a := range e.Args {
			if a.Kind != analysis.ExprConst {
				return false
			}
		}
		return len(e.Args) > 0
	}
	return false
}

// rebindsElsewhere reports whether a loop body binds name in a statement other than skip
// (which could restore the dropped columns).
func rebindsElsewhere(body []*analysis.Statement, skip *analysis.Statement, name string) bool {
	for _, s := range body {
		if s == skip {
			continue
		}
		touched := map[string]bool{}
		for _, t := range s.Targets {
			namesIn(t, touched)
		}
		touchedBy(s.Body, touched)
		if touched[name] {
			return true
		}
	}
	return false
}

// addOverwritten explains crash findings about a kernel value that a cell BELOW the checked
// one bound last (the notebook ran out of page order, so the name no longer holds what this
// cell was written against): the finding gets the evidence, and the name's first read in the
// cell gets an overwritten-name warning. The warning predicts no crash of its own (the
// finding it accompanies does), so it carries no exception.
func addOverwritten(c *checker) {
	if c.env.LastDefiner == nil || !c.env.HasCell || c.env.Cell < 0 {
		return
	}
	warned := map[string]bool{}
	n := len(c.findings)
	for i := 0; i < n; i++ {
		f := &c.findings[i]
		if f.Exception == "" || f.Code == finding.OverwrittenName {
			continue
		}
		for _, e := range f.Evidence {
			name, _, ok := strings.Cut(e, ":")
			if !ok || strings.ContainsAny(name, " ([.") || !c.fromKernelName(name) || hasOverwritten(f, name) {
				continue
			}
			cell, run, ok := c.env.LastDefiner(name)
			if !ok || cell <= c.env.Cell {
				continue
			}
			line := fmt.Sprintf("%s was overwritten by cell %d (run %d), which is below this cell", name, cell+1, run)
			f.Evidence = append(f.Evidence, line)
			if warned[name] {
				continue
			}
			warned[name] = true
			if r, ok := firstRead(c.cf, name); ok {
				c.findings = append(c.findings, finding.Finding{
					Cell: c.cellID, Source: finding.SourceRules, Severity: finding.SeverityWarning, Code: finding.OverwrittenName,
					Message: fmt.Sprintf("%s now holds what cell %d (below this one) gave it in run %d, not the value this cell expects; re-run the cell that should define %s, or rename one of the two", name, cell+1, run, name),
					Range:   r, Evidence: []string{e, line}, Confidence: 0.8,
				})
			}
		}
	}
}

// hasOverwritten reports whether f already says name was overwritten.
func hasOverwritten(f *finding.Finding, name string) bool {
	for _, e := range f.Evidence {
		if strings.HasPrefix(e, name+" was overwritten by ") {
			return true
		}
	}
	return false
}

// firstRead returns the range of the cell's first read of name.
func firstRead(cf *analysis.CellFacts, name string) (finding.Range, bool) {
	for _, u := range cf.Uses {
		if u.Name == name {
			return u.Range, true
		}
	}
	return finding.Range{}, false
}
