package judge

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is fix verification: every crash finding of a cell gets candidate repairs (the
// repair library's, the rules' fixes, the LLM's fix), each candidate is applied to a copy
// of the cell text and shadow-run in a forked copy of the kernel against the same state,
// and only the candidates that make the cell run to its end are offered as verified.
//
// A fix that edits an earlier, already executed cell (the class that builds a Linear layer
// with the wrong in_features) cannot be proven by running the target alone: the kernel
// holds what the unedited cell built. Such a fix is verified by running, in one shadow
// child, the edited cell, then the executed cells that ran after it (in execution order),
// then the target: exactly what the user does after applying it (run the edited cell again
// and the cells after it). Only a clean run of all of it verifies the fix, so no line
// mapping is needed: a failing candidate is dropped whatever its line. When that would
// re-run more than maxReplayCells cells, or a cell magic that cannot be concatenated, the
// fix is offered unverified instead.

const (
	// maxVerifiedFixes is how many verified fixes a finding offers.
	maxVerifiedFixes = 3
	// maxUnverifiedFixes is how many fixes that could not be verified are offered below them.
	maxUnverifiedFixes = 2
	// maxCrashFindings bounds the findings of one cell that get candidates.
	maxCrashFindings = 2
	// maxReplayCells bounds the executed cells re-run to verify a fix to an earlier cell.
	maxReplayCells = 4
	// maxReplayAll bounds the history replayed from its first cell, when re-running from
	// the edited cell fails on the state the cells after it left.
	maxReplayAll = 8
	// maxChainSteps bounds the repairs composed into one fix (the first included): a cell
	// that crashes again past the repaired line gets the next failure repaired in turn.
	maxChainSteps = 3
	// maxChainRuns bounds the extra shadow runs chaining spends on one finding, and
	// maxChainNext the repairs tried for one new failure.
	maxChainRuns = 6
	maxChainNext = 2
)

// VerifyRequest is one cell's findings to repair.
type VerifyRequest struct {
	Notebook *notebook.Notebook
	Result   *analysis.Result
	CellID   string
	Findings []finding.Finding
	// Shadow is the cell's own shadow run (its exception message feeds the library), nil
	// when none ran.
	Shadow *facts.ShadowResult
	// Inspection holds facts already taken for the cell (may be nil); verification
	// inspects the further names the repair library asks for.
	Inspection *facts.Inspection
	// Known are outcomes of candidates already run for this cell text and kernel state (by
	// Outcome.Key), from a verification that was interrupted: they are not run again.
	Known map[string]Outcome
	// Gate, if set, is held around each candidate's shadow run: the kernel's inspector runs
	// one shadow child at a time (a newer one cancels the older), so an editor serializes
	// verification with its other shadow runs through it.
	Gate sync.Locker
	// OnOutcome, if set, is called after each candidate's run with the findings as they
	// stand (verified fixes so far), so an editor can show proven fixes at once.
	OnOutcome func(o Outcome, done, total int, findings []finding.Finding)
}

// Outcome is what one candidate's shadow run showed.
type Outcome struct {
	// Key identifies the candidate's edits (repair.Key).
	Key string
	// Status is the shadow status (facts.ShadowOK, ShadowError, ...), or "unverifiable".
	Status string
	// Verified is true only for a full run with no exception.
	Verified bool
	// Reason says why a candidate is not verified (skipped, timeout, too many cells).
	Reason string
	// Exception is the exception a failing candidate raised, Message its message and Line
	// the 1-based line of what ran (the edited cell, or the re-run cells then the target)
	// where it surfaced: a failure past the original crash is repaired in turn (chained).
	Exception string
	Message   string
	Line      int
	// CrashKeys are the keys the failing run saw on that line (facts.ShadowResult), for
	// the chained repair of that failure.
	CrashKeys []facts.CrashKeys
	// CrashFacts are the facts of that line's names as the failing run held them.
	CrashFacts map[string]facts.Value
	// Suggestions are the names (or valid values) near the missing one, as the failing run
	// saw them (facts.ShadowResult.Suggestions): a chained step repairs with them.
	Suggestions *facts.Suggestions
}

// statusUnverifiable marks a candidate verification cannot run (see maxReplayCells).
const statusUnverifiable = "unverifiable"

// candidate is a fix being verified, with what it takes to run it.
type candidate struct {
	fix      finding.Fix
	keeps    string
	size     int
	code     string // what the shadow child runs
	cf       *analysis.CellFacts
	replayed []int // notebook indexes of the earlier cells re-run (empty: the target alone)
	outcome  Outcome
	// What prepareFrom needs to replay from another cell, and where the target starts in
	// code (1-based line).
	target     string
	hist       []repair.Cell
	texts      map[string]string
	after      map[string]string
	first      int
	targetLine int
	// steps are the titles of the repairs composed into fix (one for a plain candidate),
	// failures the exceptions ("NameError: ...") each step was meant to get past, the
	// original crash first: a chained step that fails the same way again made no progress.
	steps    []string
	failures []string
	// watch is what the guard knows of the types before the fix (retype.go); nil: nothing.
	watch *typeWatch
	// told: the exception's own words gave the edit (repair.Candidate.Told).
	told bool
}

// VerifyFixes returns the request's findings with the fixes of every crash finding
// replaced by verified repairs (best first, at most three), followed by at most two that
// could not be verified, marked so, and with the inverse-reasoning evidence (what the call
// needed and what it got). Candidates that fail are dropped. Without a kernel or with the
// shadow layer off, the findings come back with only the evidence added. A busy kernel
// stops verification with an error wrapping kernelclient.ErrBusy; the findings returned
// then carry what was proven so far.
func (j *Judge) VerifyFixes(ctx context.Context, req VerifyRequest) ([]finding.Finding, error) {
	out := cloneFindings(req.Findings)
	nb := req.Notebook
	cell := nb.Cell(req.CellID)
	if cell == nil {
		return out, fmt.Errorf("verify: no cell %q", req.CellID)
	}
	var cf *analysis.CellFacts
	if req.Result != nil {
		cf = req.Result.Facts[req.CellID]
	}
	if cf == nil {
		cf = analysis.ParseCell(cell.Text)
	}
	crashes := crashFindings(out)
	if len(crashes) == 0 {
		return out, nil
	}
	hist := historyCells(nb, req.Result, req.CellID)
	unran := unranCells(nb, req.Result, req.CellID)
	unrun := unrunNames(unran)
	inputs := make([]repair.Input, len(crashes))
	for n, i := range crashes {
		inputs[n] = repair.Input{Finding: out[i], Message: shadowMessage(req.Shadow, out[i]), Text: cell.Text, Facts: cf, History: hist, Unrun: unrun, Unran: unran, CrashKeys: crashKeys(req.Shadow, out[i]), CrashFacts: crashFacts(req.Shadow, out[i]), Site: crashSite(req.Shadow, out[i], hist), Suggestions: crashSuggestions(req.Shadow, out[i]), SiteFacts: siteFacts(req.Shadow, out[i])}
	}
	active := j.Kernel != nil && j.Options.Shadow != ShadowOff && j.Options.Shadow != ""
	insp := req.Inspection
	if active {
		more, err := j.repairFacts(ctx, cf, inputs, hist)
		switch {
		case err == nil:
			insp = mergeInspections(insp, more)
		case errors.Is(err, kernelclient.ErrBusy) || ctx.Err() != nil:
			return out, err
		}
	}
	for n := range inputs {
		inputs[n].Inspection = insp
	}
	for n, i := range crashes {
		out[i].Evidence = appendNew(out[i].Evidence, repair.Needs(inputs[n])...)
	}
	if !active {
		return out, nil
	}

	texts := map[string]string{}
	for _, c := range nb.Cells {
		texts[c.ID] = c.Text
	}
	// Candidates per finding, the finding's own fixes (rules, LLM) first.
	cands := make([][]*candidate, len(crashes))
	guards := make([]*repair.Guard, len(crashes))
	total := 0
	for n, i := range crashes {
		guards[n] = repair.NewGuard(inputs[n])
		own := out[i].Fixes
		if m := nameErrRE.FindStringSubmatch(inputs[n].Message + " " + out[i].Message); m != nil && out[i].Exception == "NameError" && unrun[m[1]] {
			// A cell that has not run defines the name: renaming the use to another name
			// would change the data. The library's repair copies that cell's binding.
			own = nil
		}
		for _, rc := range repair.Candidates(inputs[n], guards[n], own...) {
			c := j.prepare(nb, req.CellID, hist, texts, rc.Fix)
			c.keeps, c.told = rc.Keeps, rc.Told
			if c.outcome.Key == "" {
				c.outcome.Key = repair.Key(rc.Fix)
			}
			cands[n] = append(cands[n], c)
		}
		total += len(cands[n])
	}
	// The types the edited cells' names hold now, for the guard's check of each clean run.
	var all []*candidate
	for _, cs := range cands {
		all = append(all, cs...)
	}
	tinsp := insp
	if more, err := j.typeFacts(ctx, historyNames(all, insp)); err == nil {
		tinsp = mergeInspections(insp, more)
	} else if errors.Is(err, kernelclient.ErrBusy) || ctx.Err() != nil {
		return out, err
	}
	for n := range crashes {
		w := &typeWatch{crash: inputs[n].CrashFacts, crashLine: inputs[n].Finding.Range.Start.Line, insp: tinsp}
		for _, c := range cands[n] {
			c.watch = w
		}
	}

	done := 0
	skippedCell := req.Shadow != nil && (req.Shadow.Status == facts.ShadowSkipped || req.Shadow.Status == facts.ShadowRefused)
	var stop error
	// Two findings of one cell often share candidates (the import both NameErrors need):
	// each distinct fix runs once.
	ran := map[string]*candidate{}
	for n, i := range crashes {
		origin := failureOf(out[i].Exception, inputs[n].Message)
		for _, c := range cands[n] {
			c.steps, c.failures = []string{c.fix.Title}, []string{origin}
		}
		chainRuns := maxChainRuns
		started, proven := time.Now(), 0
		for k := 0; k < len(cands[n]); k++ {
			c := cands[n][k]
			if stop != nil {
				break
			}
			// The search ends when enough one-step fixes are proven to fill the offer, or
			// when the budget is spent: the candidates not run are not offered.
			if proven >= maxVerifiedFixes || (k > 0 && time.Since(started) > j.Options.repairBudget()) {
				break
			}
			switch {
			case c.outcome.Status == statusUnverifiable:
			case req.Known[c.outcome.Key].Status != "":
				c.outcome = req.Known[c.outcome.Key]
			case ran[c.outcome.Key] != nil:
				p := ran[c.outcome.Key]
				c.outcome, c.replayed, c.first, c.targetLine = p.outcome, p.replayed, p.first, p.targetLine
			case skippedCell:
				// The cell itself could not be shadow-run; its edited copy cannot either.
				c.outcome = Outcome{Key: c.outcome.Key, Status: req.Shadow.Status, Reason: firstNonEmpty(req.Shadow.Reason, req.Shadow.Refused, "the cell cannot be shadow-run")}
			default:
				o, err := j.runCandidate(ctx, c, req.Shadow, req.Gate)
				if err != nil {
					stop = err
					break
				}
				c.outcome = o
				ran[o.Key] = c
			}
			if stop != nil {
				break
			}
			if chainRuns > 0 && c.outcome.Status == facts.ShadowError && len(c.steps) < maxChainSteps {
				more, err := j.chain(ctx, c, inputs[n], insp, nb, req.CellID, hist, texts, guards[n], min(chainRuns, maxChainNext))
				if err != nil {
					stop = err
					break
				}
				chainRuns -= len(more)
				cands[n] = append(cands[n], more...)
				total += len(more)
			}
			if c.outcome.Verified && len(c.steps) <= 1 {
				proven++
			}
			done++
			out[i].Fixes = offered(cands[n], texts, req.CellID, nb)
			if req.OnOutcome != nil {
				req.OnOutcome(c.outcome, done, total, cloneFindings(out))
			}
		}
		decided := false
		for _, c := range cands[n] {
			decided = decided || c.outcome.Status != ""
		}
		if stop == nil || decided {
			out[i].Fixes = offered(cands[n], texts, req.CellID, nb)
		}
	}
	return out, stop
}

// crashFindings returns the indexes of the findings that predict a crash, strongest first.
func crashFindings(fs []finding.Finding) []int {
	var out []int
	for i, f := range fs {
		if predictsCrash(f) && len(out) < maxCrashFindings {
			out = append(out, i)
		}
	}
	return out
}

// shadowMessage is the exception message of the cell's shadow run when it is the crash the
// finding is about.
func shadowMessage(r *facts.ShadowResult, f finding.Finding) string {
	if r == nil || r.Status != facts.ShadowError {
		return ""
	}
	if !sameException(r, f) {
		return ""
	}
	return r.Message
}

// historyCells returns the executed cells in execution order, without the target.
func historyCells(nb *notebook.Notebook, res *analysis.Result, target string) []repair.Cell {
	var out []repair.Cell
	for _, c := range nb.History() {
		if c.ID == target {
			continue
		}
		var cf *analysis.CellFacts
		if res != nil {
			cf = res.Facts[c.ID]
		}
		out = append(out, repair.Cell{ID: c.ID, Index: nb.Index(c.ID), Text: c.Text, Facts: cf})
	}
	return out
}

// unrunNames returns the names bound by the code cells that have not run (unranCells).
func unrunNames(unran []repair.Cell) map[string]bool {
	out := map[string]bool{}
	for _, c := range unran {
		for _, d := range c.Facts.Defs {
			out[d.Name] = true
		}
	}
	return out
}

// repairFacts inspects the names the cell and the repair library need, in one request.
func (j *Judge) repairFacts(ctx context.Context, cf *analysis.CellFacts, inputs []repair.Input, hist []repair.Cell) (*facts.Inspection, error) {
	seen := map[string]bool{}
	var names []string
	add := func(ns ...string) {
		for _, n := range ns {
			if n != "" && !seen[n] && len(names) < 120 {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	add(rules.Wanted(cf)...)
	for _, in := range inputs {
		add(repair.Wanted(in)...)
	}
	if j.Kernel.State() == kernelclient.StateBusy {
		return nil, fmt.Errorf("inspect for repairs: %w", kernelclient.ErrBusy)
	}
	insp, err := j.Kernel.Inspect(ctx, kernelclient.InspectRequest{Names: names, Budget: 3 * j.Options.inspectBudget(), Namespace: true})
	if err != nil {
		return nil, fmt.Errorf("inspect for repairs: %w", err)
	}
	return insp, nil
}

func mergeInspections(a, b *facts.Inspection) *facts.Inspection {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	m := *b
	m.Values = map[string]facts.Value{}
	for k, v := range a.Values {
		m.Values[k] = v
	}
	for k, v := range b.Values {
		m.Values[k] = v
	}
	if m.Namespace == nil {
		m.Namespace = a.Namespace
	}
	return &m
}

// prepare builds what the shadow child runs for a fix: the edited target alone, or the
// edited earlier cell, the executed cells after it and the target, concatenated.
func (j *Judge) prepare(nb *notebook.Notebook, target string, hist []repair.Cell, texts map[string]string, f finding.Fix) *candidate {
	c := &candidate{fix: f, size: repair.EditSize(texts, target, f)}
	after, err := repair.ApplyFix(texts, target, f)
	if err != nil {
		c.outcome = Outcome{Status: statusUnverifiable, Reason: "the fix does not apply to the cell: " + err.Error()}
		return c
	}
	first := -1
	for i, h := range hist {
		if _, ok := after[h.ID]; ok {
			first = i
			break
		}
	}
	return j.prepareFrom(c, target, hist, texts, after, first)
}

// prepareFrom builds the code of c replaying the history from index first (-1: the
// target alone).
func (j *Judge) prepareFrom(c *candidate, target string, hist []repair.Cell, texts, after map[string]string, first int) *candidate {
	c.target, c.hist, c.texts, c.after, c.first, c.replayed = target, hist, texts, after, first, nil
	for id := range after {
		if id != target && first < 0 {
			c.outcome = Outcome{Status: statusUnverifiable, Reason: "the fix edits a cell that has not run"}
			return c
		}
	}
	targetText := texts[target]
	if t, ok := after[target]; ok {
		targetText = t
	}
	if first < 0 {
		c.code = targetText
		c.cf = analysis.ParseCell(targetText)
		return c
	}
	replay := hist[first:]
	if limit := map[bool]int{true: maxReplayAll, false: maxReplayCells}[first == 0]; len(replay) > limit {
		c.outcome = Outcome{Status: statusUnverifiable, Reason: fmt.Sprintf("verifying it would re-run %d cells", len(replay)+1)}
		return c
	}
	var parts []string
	for _, h := range replay {
		t := h.Text
		if e, ok := after[h.ID]; ok {
			t = e
		}
		if strings.HasPrefix(strings.TrimSpace(t), "%%") {
			c.outcome = Outcome{Status: statusUnverifiable, Reason: fmt.Sprintf("cell %d starts with a cell magic", h.Index+1)}
			return c
		}
		parts = append(parts, t)
		c.replayed = append(c.replayed, h.Index)
	}
	// Python numbers the lines of the joined code, counting "\r\n" and a lone "\r" too.
	c.targetLine = len(analysis.SplitLines(strings.Join(parts, "\n"))) + 1
	parts = append(parts, targetText)
	c.code = strings.Join(parts, "\n")
	c.cf = analysis.ParseCell(c.code)
	return c
}

// runCandidate shadow-runs a prepared candidate. Only an error from the kernel (busy,
// dead, cancelled) is returned as an error; every shadow outcome is an Outcome.
func (j *Judge) runCandidate(ctx context.Context, c *candidate, orig *facts.ShadowResult, gate sync.Locker) (Outcome, error) {
	o := Outcome{Key: c.outcome.Key}
	if gate != nil {
		gate.Lock()
		defer gate.Unlock()
	}
	if j.Kernel.State() == kernelclient.StateBusy {
		return o, fmt.Errorf("verify fix: %w", kernelclient.ErrBusy)
	}
	vj := *j
	vj.Options.Trace = false
	vj.Options.ShadowTimeout = verifyTimeout(j.Options.shadowTimeout(), orig)
	if len(c.steps) > 1 {
		// A composed fix runs the cell past several crashes, through work no run has timed
		// yet: it gets the whole shadow budget.
		vj.Options.ShadowTimeout = j.Options.shadowTimeout()
	}
	// A candidate is proven by a full run only: no fast dev run beside it, and no
	// background run past the timeout.
	vj.Options.DevRunCap = 0
	var before map[string]string
	if c.watch != nil {
		before = c.watch.boundBefore(c)
	}
	types := make([]string, 0, len(before))
	for n := range before {
		types = append(types, n)
	}
	sort.Strings(types)
	r, err := vj.shadowRun(ctx, c.code, c.cf, nil, types)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, kernelclient.ErrBusy) || errors.Is(err, kernelclient.ErrDead) || errors.Is(err, kernelclient.ErrClosed) {
			return o, err
		}
		o.Status, o.Reason = statusUnverifiable, err.Error()
		return o, nil
	}
	if r == nil {
		o.Status, o.Reason = statusUnverifiable, "the shadow layer is off"
		return o, nil
	}
	o.Status = r.Status
	switch r.Status {
	case facts.ShadowOK:
		if runShortened(r) {
			o.Reason = "the run was shortened (fast dev run)"
			break
		}
		if r.Meta != nil {
			// Shapes, dtypes and devices were checked, values were not: a fix called
			// verified must work when applied, so a clean meta run proves none.
			o.Reason = "the run used shape-only tensors (meta): values were not checked"
			break
		}
		if why := repair.TypeChange(before, r.Types); why != "" {
			// It runs, by computing something else: refused, never offered.
			o.Status, o.Reason = statusRetyped, why
			break
		}
		o.Verified = true
	case facts.ShadowError:
		// A re-run cell failed against the current state (it mutates what it reads:
		// df = df.drop(...)), or the target still fails as it did because the state an
		// earlier cell built is gone (the edited cell renamed a variable that clobbered
		// it): replay the whole history instead, as a restart and run all would.
		rerunFailed := r.Line > 0 && r.Line < c.targetLine
		sameCrash := r.Line >= c.targetLine && orig != nil && orig.Status == facts.ShadowError && r.Exception == orig.Exception && r.Message == orig.Message
		if c.first > 0 && (rerunFailed || sameCrash) && len(c.hist) <= maxReplayAll {
			top := j.prepareFrom(&candidate{fix: c.fix, size: c.size, keeps: c.keeps, outcome: Outcome{Key: c.outcome.Key}, steps: c.steps, failures: c.failures, watch: c.watch}, c.target, c.hist, c.texts, c.after, 0)
			if top.outcome.Status == "" {
				*c = *top
				return j.runCandidate(ctx, c, orig, nil)
			}
		}
		o.Exception, o.Message, o.Line, o.CrashKeys, o.CrashFacts, o.Suggestions = r.Exception, r.Message, r.Line, r.CrashKeys, r.CrashFacts, r.Suggestions
		o.Reason = fmt.Sprintf("the edited cell raised %s: %s", r.Exception, oneLine(r.Message))
	default:
		o.Reason = firstNonEmpty(r.Reason, r.Refused, r.Status)
	}
	return o, nil
}

// runShortened reports whether a shadow run was cut short (a fast dev run with its loops
// capped): such a run proves nothing about the full cell, so it never verifies a fix.
// Verification asks for full runs only (DevRunCap 0); this is the second line.
func runShortened(r *facts.ShadowResult) bool {
	return r.DevRun != nil && r.DevRun.Shortened
}

// verifyTimeout bounds one candidate's run: a little more than the cell itself took when
// it crashed (an edited cell that runs to its end may run longer), never more than the
// configured shadow timeout.
func verifyTimeout(limit time.Duration, orig *facts.ShadowResult) time.Duration {
	if orig == nil || orig.ElapsedMS <= 0 {
		return limit
	}
	// The crash cut the cell short: what runs past it once repaired (an import of torch,
	// the rest of the cell) may take seconds more than the crash did.
	t := time.Duration(orig.ElapsedMS*float64(time.Millisecond))*4 + 10*time.Second
	if t > limit {
		return limit
	}
	return t
}

// offered ranks a finding's candidates: verified first by smallest edit (at most three),
// then at most two that could not be verified; candidates that failed are dropped.
func offered(cs []*candidate, texts map[string]string, target string, nb *notebook.Notebook) []finding.Fix {
	var ver, unver []*candidate
	for _, c := range cs {
		switch {
		case c.outcome.Verified:
			ver = append(ver, c)
		case c.outcome.Status == facts.ShadowError || c.outcome.Status == statusRetyped || c.outcome.Status == "" || len(c.steps) > 1:
			// failed or refused by the guard (dropped), not run yet, or a composed fix whose
			// run proved nothing
		default:
			unver = append(unver, c)
		}
	}
	// A fix of one step comes before a composed one (each step is a change the user must
	// accept); a fix that loses data (repair.Loss) comes after every one that keeps it; one
	// the exception's words gave comes before the guesses; then the smallest edit first.
	sort.SliceStable(ver, func(a, b int) bool {
		if sa, sb := max(len(ver[a].steps), 1), max(len(ver[b].steps), 1); sa != sb {
			return sa < sb
		}
		if la, lb := repair.Loss(ver[a].fix) != "", repair.Loss(ver[b].fix) != ""; la != lb {
			return lb
		}
		if ver[a].told != ver[b].told {
			return ver[a].told // what the library that raised says to write, before a guess
		}
		return ver[a].size < ver[b].size
	})
	sort.SliceStable(unver, func(a, b int) bool {
		if la, lb := repair.Loss(unver[a].fix) != "", repair.Loss(unver[b].fix) != ""; la != lb {
			return lb
		}
		return unver[a].size < unver[b].size
	})
	var out []finding.Fix
	for i, c := range ver {
		if i == maxVerifiedFixes {
			break
		}
		f := c.fix
		f.Verified = true
		f.Preferred = i == 0
		f.Title = repair.LossTitle(finding.Fix{Title: stripVerification(f.Title), Edits: f.Edits}) + " (verified: " + ranWhat(c, nb) + ")"
		out = append(out, withCells(f, target))
	}
	for i, c := range unver {
		if i == maxUnverifiedFixes {
			break
		}
		f := c.fix
		f.Verified, f.Preferred = false, false
		f.Title = repair.LossTitle(finding.Fix{Title: stripVerification(f.Title), Edits: f.Edits}) + " (not verified: " + shortReason(c.outcome) + ")"
		out = append(out, withCells(f, target))
	}
	return out
}

// shortReason says in a few words, for a title, why a fix is not verified (the outcome's
// Reason has the details).
func shortReason(o Outcome) string {
	switch o.Status {
	case facts.ShadowSkipped:
		return "the cell cannot be run in a copy of the kernel"
	case facts.ShadowRefused:
		return "running it needs a side effect the copy refuses"
	case facts.ShadowTimeout:
		return "too slow to run in a copy of the kernel"
	case facts.ShadowDied:
		return "the copy of the kernel died"
	case facts.ShadowOK:
		return "the run was cut short"
	}
	if o.Reason != "" {
		return o.Reason
	}
	return o.Status
}

// ranWhat says what the verifying run covered, for the title.
func ranWhat(c *candidate, nb *notebook.Notebook) string {
	if len(c.replayed) == 0 {
		return "the cell runs"
	}
	names := make([]string, len(c.replayed))
	for i, idx := range c.replayed {
		names[i] = fmt.Sprint(idx + 1)
	}
	word := "cell"
	if len(names) > 1 {
		word = "cells"
	}
	return fmt.Sprintf("%s %s re-run, then this cell, run clean", word, strings.Join(names, ", "))
}

// withCells leaves the target's edits without a cell key (the finding's cell) and keeps the
// key on edits of other cells.
func withCells(f finding.Fix, target string) finding.Fix {
	es := make([]finding.Edit, len(f.Edits))
	for i, e := range f.Edits {
		if e.Cell == target {
			e.Cell = ""
		}
		es[i] = e
	}
	f.Edits = es
	return f
}

// stripVerification removes a verification suffix a title already carries (a fix verified
// once and offered again).
func stripVerification(t string) string {
	for _, m := range []string{" (verified: ", " (not verified: "} {
		if i := strings.Index(t, m); i >= 0 && strings.HasSuffix(t, ")") {
			return t[:i]
		}
	}
	return t
}

func cloneFindings(fs []finding.Finding) []finding.Finding {
	out := make([]finding.Finding, len(fs))
	for i, f := range fs {
		f.Evidence = append([]string(nil), f.Evidence...)
		f.Fixes = append([]finding.Fix(nil), f.Fixes...)
		out[i] = f
	}
	return out
}
