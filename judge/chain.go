package judge

import (
	"context"
	"errors"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// Chained repair. Notebooks often crash several times in a row: the import a cell lacks is
// added, and the cell then stops at a name that no cell defined (plt, then numvars). When a
// candidate's shadow run fails with a new exception past the original crash (a later line,
// or another exception on the same line), the repair library is asked again, about that
// failure, on the edited text, with facts taken for it; each repair it proposes is composed
// with the candidate and the composite is verified like any candidate: only a clean run of
// the whole composite verifies it. A composite is offered as one fix whose title lists the
// steps. Every step passes the library's intent check on its own input, and the composite
// passes it against the original crash. Chaining is bounded: maxChainSteps repairs in one
// fix, maxChainRuns extra runs per finding.

// chain returns the composites of c with the repairs of the failure c's run ended in, at
// most limit, prepared to run; none when that failure is no progress past the original
// crash. Only an error from the kernel (busy, dead, cancelled) is returned as an error.
func (j *Judge) chain(ctx context.Context, c *candidate, base repair.Input, insp *facts.Inspection, nb *notebook.Notebook, target string, hist []repair.Cell, texts map[string]string, guard *repair.Guard, limit int) ([]*candidate, error) {
	o := c.outcome
	if o.Status != facts.ShadowError || o.Line <= 0 || limit <= 0 {
		return nil, nil
	}
	failure := failureOf(o.Exception, o.Message)
	for _, f := range c.failures {
		if f == failure {
			return nil, nil // the step did not get past what it was meant to repair
		}
	}
	edited := texts[target]
	if t, ok := c.after[target]; ok {
		edited = t
	}
	line := o.Line // 1-based in the edited target
	if len(c.replayed) > 0 {
		line = o.Line - c.targetLine + 1
	}
	if line < 1 {
		return nil, nil // a re-run earlier cell failed: not the target's next crash
	}
	crash := mapLine(base.Finding.Range.Start.Line, c.fix.Edits)
	if line-1 < crash || line-1 == crash && o.Exception == base.Finding.Exception && (base.Message == "" || o.Message == base.Message) {
		return nil, nil // before the original crash, or the same crash again
	}
	cf := analysis.ParseCell(edited)
	fs, _ := ShadowFindings(target, edited, cf, &facts.ShadowResult{Status: facts.ShadowError, Exception: o.Exception, Message: o.Message, Line: line})
	if len(fs) == 0 {
		return nil, nil
	}
	next := base
	next.Finding, next.Message, next.Text, next.Facts = fs[0], o.Message, edited, cf
	// The original crash's keys and facts describe other objects; the new failure's are its own.
	next.CrashKeys = o.CrashKeys
	next.CrashFacts = o.CrashFacts
	next.Suggestions = o.Suggestions
	next.Site = nil // the original crash's site; the outcome carries no frames of its own
	next.History = make([]repair.Cell, len(hist))
	for k, h := range hist {
		if t, ok := c.after[h.ID]; ok {
			h.Text, h.Facts = t, analysis.ParseCell(t)
		}
		next.History[k] = h
	}
	next.Inspection = insp
	more, err := j.repairFacts(ctx, cf, []repair.Input{next}, next.History)
	switch {
	case err == nil:
		next.Inspection = mergeInspections(insp, more)
	case errors.Is(err, kernelclient.ErrBusy) || ctx.Err() != nil:
		return nil, err
	}
	stepTexts := map[string]string{}
	for id, t := range texts {
		stepTexts[id] = t
	}
	for id, t := range c.after {
		stepTexts[id] = t
	}
	var out []*candidate
	for _, rc := range repair.Candidates(next, nil) {
		if len(out) == limit {
			break
		}
		after, err := repair.ApplyFix(stepTexts, target, rc.Fix)
		if err != nil {
			continue
		}
		fix := finding.Fix{Title: composeTitle(append(append([]string(nil), c.steps...), rc.Fix.Title))}
		final := map[string]string{}
		for id, t := range c.after {
			final[id] = t
		}
		for id, t := range after {
			final[id] = t
		}
		for _, id := range sortedKeys(final) {
			for _, e := range repair.Diff(texts[id], final[id]) {
				if id != target {
					e.Cell = id
				}
				fix.Edits = append(fix.Edits, e)
			}
		}
		if !guard.Admit(nil, fix) {
			continue
		}
		k := repair.Key(fix)
		nc := j.prepare(nb, target, hist, texts, fix)
		nc.keeps = strings.Trim(c.keeps+"; "+rc.Keeps, "; ")
		nc.watch = c.watch
		nc.steps = append(append([]string(nil), c.steps...), rc.Fix.Title)
		nc.failures = append(append([]string(nil), c.failures...), failure)
		if nc.outcome.Key == "" {
			nc.outcome.Key = k
		}
		out = append(out, nc)
	}
	return out, nil
}

// failureOf names a failure by its exception and message, to tell a new failure from one
// already seen.
func failureOf(exception, message string) string {
	return exception + ": " + strings.TrimSpace(message)
}

// mapLine returns where 0-based line l of a text lies after the edits (all of one cell,
// in its original coordinates) are applied: lines inserted or removed above it move it.
func mapLine(l int, edits []finding.Edit) int {
	out := l
	for _, e := range edits {
		if e.Cell != "" {
			continue
		}
		if e.Range.End.Line < l || e.Range.End.Line == l && e.Range.End.Character == 0 && strings.HasSuffix(e.NewText, "\n") {
			out += strings.Count(e.NewText, "\n") - (e.Range.End.Line - e.Range.Start.Line)
		}
	}
	return out
}

// composeTitle joins the titles of the steps of a composed fix: "Add `import torch`;
// define X_test as in cell 7: `...`".
func composeTitle(steps []string) string {
	parts := make([]string, 0, len(steps))
	for i, s := range steps {
		s = stripVerification(strings.TrimSpace(s))
		if i > 0 {
			r, n := utf8.DecodeRuneInString(s)
			// Lower the first letter of a step's verb, not of a name ("X_test ...").
			if n > 0 && unicode.IsUpper(r) && len(s) > n && unicode.IsLower(rune(s[n])) {
				s = string(unicode.ToLower(r)) + s[n:]
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unranCells returns the code cells that have not run, the target aside, in notebook
// order: where the repair library may copy a definition the target lacks.
func unranCells(nb *notebook.Notebook, res *analysis.Result, target string) []repair.Cell {
	var out []repair.Cell
	for _, c := range nb.Cells {
		if c.ID == target || c.Kind != notebook.Code || c.Executed() {
			continue
		}
		var cf *analysis.CellFacts
		if res != nil {
			cf = res.Facts[c.ID]
		}
		if cf == nil {
			cf = analysis.ParseCell(c.Text)
		}
		out = append(out, repair.Cell{ID: c.ID, Index: nb.Index(c.ID), Text: c.Text, Facts: cf})
	}
	return out
}
