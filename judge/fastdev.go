package judge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// This file orchestrates a shadow run with a fast dev run (PyTorch Lightning's
// fast_dev_run idea). When the cell has loops, the inspector forks two children from the
// same kernel state: the full run, with the long budget (Options.ShadowFullTimeout), and the
// cell with every loop capped at Options.DevRunCap iterations, with the editor's budget
// (Options.ShadowTimeout). A capped answer that settles the cell (a crash that does not
// depend on what the cap cut, or a run in which no loop reached the cap) ends both; any
// other capped answer is provisional: it is published at the budget (unless the full run
// answered by then, which wins) while the full run goes on, and the full run's answer
// replaces it when it comes.

// DevRunLikelyConfidence is the confidence of a crash the fast dev run found on a line that
// reads what a shortened loop produced: probably real, but the shortening may have caused it.
const DevRunLikelyConfidence = 0.6

// ShadowRunStaged runs code in forked copies of the kernel, with a fast dev run beside the
// full run when the cell has loops, and returns the final answer. early, when not nil, is
// called at most once with a provisional answer (the fast dev run's, or "still running")
// when the final one is not known within the shadow budget; the full run then goes on, up
// to the full timeout, before ShadowRunStaged returns. Cancelling ctx kills every child.
func (j *Judge) ShadowRunStaged(ctx context.Context, code string, cf *analysis.CellFacts, early func(*facts.ShadowResult)) (*facts.ShadowResult, error) {
	return j.shadowRun(ctx, code, cf, early, nil)
}

// shadowRun is ShadowRunStaged whose clean full run also reports the types of names
// (kernelclient.ShadowOptions.Types), for fix verification's guard.
func (j *Judge) shadowRun(ctx context.Context, code string, cf *analysis.CellFacts, early func(*facts.ShadowResult), types []string) (*facts.ShadowResult, error) {
	if j.Kernel == nil || j.Options.Shadow == ShadowOff || j.Options.Shadow == "" {
		return nil, nil
	}
	capN := j.Options.devRunCap()
	// A training loop may run long; capped, it answers within the budget, so safe mode need
	// not skip it (calls such as fit(epochs=100) are not capped and still count).
	longOK := j.Options.ShadowLongRuns || (capN > 0 && onlyLoopLongRuns(cf))
	sandbox := j.sandboxKind(ctx)
	if why := screen(cf, code, j.Options.Shadow, longOK, sandbox, j.Options.shadowTensors()); why != "" {
		return &facts.ShadowResult{Status: facts.ShadowSkipped, Reason: why, Sandbox: sandbox.Sandbox, SandboxReason: sandbox.Reason}, nil
	}
	budget := j.Options.shadowTimeout()
	full := budget
	if capN > 0 {
		full = max(budget, j.Options.shadowFullTimeout())
	}
	start := time.Now()
	r, err := j.Kernel.Shadow(ctx, code, kernelclient.ShadowOptions{Timeout: budget, Trace: j.Options.Trace, DevRunCap: capN, FullTimeout: full,
		Sandbox: j.Options.ShadowSandbox, Tensors: j.Options.shadowTensors(), Types: types})
	if err != nil {
		return nil, fmt.Errorf("start shadow run: %w", err)
	}
	if r.Status != facts.ShadowRunning {
		return r, nil
	}
	st := &staged{j: j, fullTok: r.Token, devTok: r.DevRunToken, budget: budget, full: full, start: start}
	return st.wait(ctx, early)
}

// staged is one shadow run group being collected.
type staged struct {
	j               *Judge
	fullTok, devTok string
	budget, full    time.Duration
	start           time.Time

	fullRes, devRes *facts.ShadowResult
}

func (s *staged) wait(ctx context.Context, early func(*facts.ShadowResult)) (*facts.ShadowResult, error) {
	// The children kill themselves at their limits; collection may take a little longer.
	fullDeadline := s.start.Add(s.full + 2*time.Second)
	budgetAt := s.start.Add(s.budget)
	sent := false
	wait := 10 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			s.cancel(s.fullTok, s.devTok)
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		// Polls are short silent requests (a millisecond of kernel time): often at first,
		// when most cells answer, then every 80 ms.
		if limit := pollCeiling(time.Since(s.start)); wait < limit {
			wait = min(limit, wait+wait/2)
		}
		res, err := s.poll(ctx, s.fullTok)
		if err != nil {
			s.cancel(s.fullTok, s.devTok)
			return nil, err
		}
		if res != nil {
			s.fullRes = res
			if res.Status == facts.ShadowTimeout && s.devRes != nil {
				return s.fullTimedOut(), nil // the fast dev run's answer is the better one
			}
			if s.devTok != "" && s.devRes == nil {
				s.cancel(s.devTok)
			}
			return s.finalFull(sent), nil
		}
		if s.devTok != "" && s.devRes == nil {
			res, err := s.poll(ctx, s.devTok)
			if err != nil {
				s.cancel(s.fullTok, s.devTok)
				return nil, err
			}
			if res != nil {
				s.devRes = trimTrace(res)
				if decisive(res) {
					s.cancel(s.fullTok)
					return s.finalDev(), nil
				}
			}
		}
		now := time.Now()
		// At the budget, the provisional answer: the capped run's once it is in (it has the
		// same limit, so it comes at most a moment later), "still running" otherwise.
		if !sent && !now.Before(budgetAt) && (s.devTok == "" || s.devRes != nil || now.After(budgetAt.Add(time.Second))) {
			sent = true
			if early != nil {
				early(s.provisional())
			}
		}
		if now.After(fullDeadline) {
			s.cancel(s.fullTok, s.devTok)
			return s.fullTimedOut(), nil
		}
	}
}

// pollCeiling is the longest pause between two polls after elapsed.
func pollCeiling(elapsed time.Duration) time.Duration {
	if elapsed < time.Second {
		return 20 * time.Millisecond
	}
	return 80 * time.Millisecond
}

// poll asks once for a run's outcome: nil while it runs (or the kernel is busy for a moment).
func (s *staged) poll(ctx context.Context, token string) (*facts.ShadowResult, error) {
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	res, err := s.j.Kernel.ShadowResult(pctx, token)
	// Under load a poll may outlast its own 500 ms (the kernel answers late): that is no
	// answer yet, not a failure; the wait loop's deadline still bounds the whole run.
	pollLate := errors.Is(err, kernelclient.ErrNoAnswer) && pctx.Err() != nil
	cancel()
	switch {
	case err == nil && res.Status != facts.ShadowRunning:
		return res, nil
	case err == nil, errors.Is(err, kernelclient.ErrBusy), (errors.Is(err, context.DeadlineExceeded) || pollLate) && ctx.Err() == nil:
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("collect shadow run: %w", err)
}

func (s *staged) cancel(tokens ...string) {
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, t := range tokens {
		if t != "" {
			_ = s.j.Kernel.ShadowCancel(cctx, t)
		}
	}
}

// decisive reports whether a fast dev run's outcome settles the cell: a crash on a line
// that reads nothing the shortened loops produced (or with no loop shortened before it),
// or a clean run in which no loop reached the cap (it ran exactly what the full run runs).
func decisive(r *facts.ShadowResult) bool {
	if r.DevRun == nil || r.DevRun.Error != "" {
		return false
	}
	switch r.Status {
	case facts.ShadowError:
		return !r.DevRun.Likely
	case facts.ShadowOK:
		return !r.DevRun.Shortened
	}
	return false
}

// finalDev is the decisive fast dev run's answer, with a note saying what it was.
func (s *staged) finalDev() *facts.ShadowResult {
	r := *s.devRes
	switch {
	case r.Status == facts.ShadowOK:
		r.Notes = append(r.Notes, fmt.Sprintf("fast dev run: no loop reached the cap of %d iterations, so it ran the whole cell; the full run was stopped", r.DevRun.Cap))
	case r.DevRun.Shortened:
		r.Notes = append(r.Notes, "fast dev run: the crash does not depend on what the shortened loops produced (see the evidence), so the full run was stopped")
	default:
		r.Notes = append(r.Notes, "fast dev run: the crash came before any loop reached the cap, so the full run was stopped")
	}
	return &r
}

// finalFull is the full run's answer; past the budget it says how long it took and what
// the fast dev run had found.
func (s *staged) finalFull(afterBudget bool) *facts.ShadowResult {
	r := *s.fullRes
	if !afterBudget {
		return &r
	}
	took := time.Since(s.start).Seconds()
	what := "no exception"
	switch r.Status {
	case facts.ShadowError:
		what = r.Exception + fmt.Sprintf(" at line %d", r.Line)
	case facts.ShadowOK:
	default:
		what = "outcome " + r.Status
	}
	r.Notes = append(r.Notes, fmt.Sprintf("the full shadow run went on in the background past the %s budget and ended after %.1f s: %s", fmtDur(s.budget), took, what))
	if d := s.devRes; d != nil && d.DevRun != nil {
		switch {
		case d.Status == facts.ShadowError && r.Status == facts.ShadowOK:
			r.Notes = append(r.Notes, fmt.Sprintf("the fast dev run's %s at line %d came from shortening the loops (%s): withdrawn", d.Exception, d.Line, loopSummary(d.DevRun)))
		case d.Status == facts.ShadowError && r.Status == facts.ShadowError && d.Line == r.Line && d.Exception == r.Exception:
			r.Notes = append(r.Notes, fmt.Sprintf("the full run confirms the fast dev run's %s at line %d", d.Exception, d.Line))
		case d.Status == facts.ShadowOK:
			r.Notes = append(r.Notes, fmt.Sprintf("the fast dev run had run clean with its loops shortened (%s)", loopSummary(d.DevRun)))
		}
	}
	return &r
}

// provisional is what is published at the budget while the full run goes on.
func (s *staged) provisional() *facts.ShadowResult {
	bg := fmt.Sprintf("the full shadow run goes on in the background (up to %s)", fmtDur(s.full))
	if s.devRes != nil {
		if why := unprovenLikely(s.devRes); why != "" {
			return &facts.ShadowResult{Token: s.fullTok, Status: facts.ShadowRunning, DevRun: s.devRes.DevRun,
				Reason: fmt.Sprintf("the cell is still running after %s in the shadow run; %s; %s", fmtDur(s.budget), why, bg)}
		}
		r := *s.devRes
		r.Notes = append(append([]string(nil), r.Notes...), bg)
		return &r
	}
	return &facts.ShadowResult{Token: s.fullTok, Status: facts.ShadowRunning,
		Reason: fmt.Sprintf("the cell is still running after %s in the shadow run; %s", fmtDur(s.budget), bg)}
}

// fullTimedOut is the final answer when the full run did not end within the full timeout:
// the fast dev run's, if it answered, with a note; a timeout otherwise.
func (s *staged) fullTimedOut() *facts.ShadowResult {
	note := fmt.Sprintf("the full shadow run did not finish within %s and was stopped", fmtDur(s.full))
	if why := unprovenLikely(s.devRes); why != "" {
		return &facts.ShadowResult{Token: s.fullTok, Status: facts.ShadowTimeout, DevRun: s.devRes.DevRun,
			Reason: fmt.Sprintf("the cell ran longer than %s in the shadow run and was stopped; %s", fmtDur(s.full), why)}
	}
	if d := s.devRes; d != nil && (d.Status == facts.ShadowError || d.Status == facts.ShadowOK) {
		r := *d
		r.Notes = append(append([]string(nil), r.Notes...), note)
		return &r
	}
	reason := fmt.Sprintf("the cell ran longer than %s in the shadow run and was stopped", fmtDur(s.full))
	if d := s.devRes; d != nil && d.Status == facts.ShadowTimeout {
		reason += fmt.Sprintf("; with its loops capped at %d iterations it still ran longer than %s", s.j.Options.devRunCap(), fmtDur(s.budget))
	}
	return &facts.ShadowResult{Token: s.fullTok, Status: facts.ShadowTimeout, Reason: reason}
}

// unprovenLikely says why a fast dev run's likely crash may not be published as a crash:
// it reads what the shortened work produced and did not happen again with those products at
// the full run's sizes (or nothing could be extrapolated). "" for any other outcome.
func unprovenLikely(r *facts.ShadowResult) string {
	if r == nil || r.Status != facts.ShadowError || r.DevRun == nil || !r.DevRun.Likely {
		return ""
	}
	fs := r.DevRun.FullSize
	if fs != nil && fs.Verdict == facts.FullSizeCrash {
		return ""
	}
	what := fmt.Sprintf("the fast dev run's %s at line %d reads what the shortened work produced (%s)", r.Exception, r.Line, loopSummary(r.DevRun))
	switch {
	case fs == nil && r.DevRun.Error != "":
		return what + "; " + r.DevRun.Error + ": not counted as a crash"
	case fs == nil:
		return what + "; it was not tested at the full run's sizes: not counted as a crash"
	case fs.Verdict == facts.FullSizeClean:
		sizes := ""
		if len(fs.Sizes) > 0 {
			sizes = " (" + strings.Join(fs.Sizes, "; ") + ")"
		}
		return what + "; at the full run's sizes" + sizes + " the line runs clean, so the crash came from the shortening: withdrawn"
	}
	return what + "; whether it happens at the full run's sizes is not known (" + fs.Reason + "): not counted as a crash"
}

// trimTrace drops the traced state from the first shortened loop on: what a capped loop
// built (a list of 3 losses) is not what the cell builds, and inlay hints must not say it is.
func trimTrace(r *facts.ShadowResult) *facts.ShadowResult {
	if r.DevRun == nil || !r.DevRun.Shortened || len(r.Trace) == 0 {
		return r
	}
	first := 0
	for _, l := range r.DevRun.Loops {
		if l.Shortened && l.Func != "" {
			// a function of an earlier cell: which line of this cell called it is not known,
			// so no traced state is kept
			first = 1
			break
		}
		if l.Shortened && (first == 0 || l.Line < first) {
			first = l.Line
		}
	}
	c := *r
	c.Trace = nil
	for _, st := range r.Trace {
		if st.Line < first {
			c.Trace = append(c.Trace, st)
		}
	}
	c.TraceTruncated = r.TraceTruncated || len(c.Trace) < len(r.Trace)
	return &c
}

// loopSummary says what the fast dev run shortened: "line 4: for xb, yb in loader ran 3 of
// 31250 iterations; line 2: for epoch in range(100) ran 3 of 100".
func loopSummary(d *facts.DevRun) string {
	var parts []string
	for _, l := range d.Loops {
		if !l.Shortened {
			continue
		}
		p := fmt.Sprintf("line %d: %s %s ran %d", l.Line, l.Kind, l.Header, l.Ran)
		if l.Func != "" {
			p = fmt.Sprintf("%s() of an earlier cell, its line %d: %s %s ran %d", l.Func, l.Line, l.Kind, l.Header, l.Ran)
		}
		if l.Total > 0 {
			p += fmt.Sprintf(" of %d", l.Total)
		}
		p += " iterations"
		if l.Last {
			p += " and the last"
		}
		if l.Entries > 1 {
			p += fmt.Sprintf(" per entry (%d entries)", l.Entries)
		}
		parts = append(parts, p)
		if len(parts) == 4 {
			break
		}
	}
	lib := ""
	if len(d.Library) > 0 {
		lib = "library work shortened: " + strings.Join(d.Library, "; ")
	}
	if len(parts) == 0 {
		if lib != "" {
			return lib
		}
		return fmt.Sprintf("loops capped at %d iterations, none reached the cap", d.Cap)
	}
	if lib != "" {
		parts = append(parts, lib)
	}
	capped := fmt.Sprintf("loops capped at %d iterations", d.Cap)
	if d.Cap > 2 {
		capped += fmt.Sprintf(", loops around loops at %d", max(2, d.Cap-1))
	}
	return capped + "; " + strings.Join(parts, "; ")
}

// shortenedWhat names what a fast dev run shortened: "loops were shortened", "library work
// was shortened" or both.
func shortenedWhat(d *facts.DevRun) string {
	loops := false
	for _, l := range d.Loops {
		loops = loops || l.Shortened
	}
	switch {
	case loops && len(d.Library) > 0:
		return "loops and library work were shortened"
	case len(d.Library) > 0:
		return "library work was shortened"
	}
	return "loops were shortened"
}

// onlyLoopLongRuns reports whether every long-run marker of the cell is a loop the fast dev
// run caps.
func onlyLoopLongRuns(cf *analysis.CellFacts) bool {
	if cf == nil {
		return true
	}
	for _, e := range cf.SideEffects {
		if e.Kind == analysis.EffectLongRun && !strings.HasPrefix(e.Call, "for ") && !strings.HasPrefix(e.Call, "while ") {
			return false
		}
	}
	return true
}

// fmtDur prints a budget the way users write it: "3s", "1m0s" stays Go's, "2.5s".
func fmtDur(d time.Duration) string {
	if d%time.Second == 0 && d < time.Minute {
		return fmt.Sprintf("%d s", int(d/time.Second))
	}
	return d.Round(100 * time.Millisecond).String()
}
