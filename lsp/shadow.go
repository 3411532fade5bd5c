package lsp

import (
	"context"
	"fmt"
	"sync"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// This file is the editor's side of a shadow run: judge.ShadowRunStaged answers within the
// budget (the fast dev run's answer, or "still running") while the full run goes on; the
// provisional answer is published at once, a $/progress shows the background run, and its
// final answer replaces the provisional one when it comes. A new pass (an edit, a run)
// cancels the pass's context, which kills both children.

// shadow runs the focus cell in forked kernels, unless its cached final result is current,
// and returns the answer it published first, or why there is none (the shadowRun command
// tells the user: a busy kernel, a dead one). Unless wait is set it returns at that first
// answer, while the full run may still go on in a goroutine bound to ctx (the pass's).
// finished, when set, is called once everything has ended (the shadow gate's release).
// Answers forked from a kernel that has since restarted are not kept (the epoch check).
func (rt *runtimeLayer) shadow(ctx context.Context, p *pass, a *attachment, res *analysis.Result, c *notebook.Cell, mode string, wait bool, finished func()) (*facts.ShadowResult, error) {
	count := a.executionCount()
	epoch := p.d.kernelEpoch()
	if l := p.d.layersFor(c); l != nil && l.shadow != nil && l.shadowRun >= count && !l.shadowProvisional && !p.force {
		if finished != nil {
			finished()
		}
		return l.shadow, nil
	}
	j := rt.judgeFor(a, p.settings, mode)
	cf := res.Facts[c.ID]
	first, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var (
		mu       sync.Mutex
		firstRes *facts.ShadowResult
		runErr   error
	)
	answered := func(r *facts.ShadowResult) {
		once.Do(func() {
			mu.Lock()
			firstRes = r
			mu.Unlock()
			close(first)
		})
	}
	var endProgress func()
	store := func(r *facts.ShadowResult, provisional bool) {
		rt.noteSandbox(a, r)
		fs, notes := judge.ShadowFindings(c.ID, c.Text, cf, r)
		if !p.d.updateLayersAt(c, epoch, func(l *cellLayers) {
			l.shadow, l.shadowFind, l.shadowRun, l.shadowProvisional = r, fs, count, provisional
			l.notes = append(l.notes, notes...)
		}) {
			return // forked from the kernel before its restart: nothing to keep
		}
		rt.s.publish(ctx, p.d, p.gen)
		if len(r.Trace) > 0 {
			rt.s.refreshInlayHints()
		}
	}
	early := func(r *facts.ShadowResult) {
		// The progress begins before the provisional answer shows, so a client never sees a
		// provisional answer without knowing that a better one is coming.
		endProgress = rt.llm.beginProgress(ctx, fmt.Sprintf("premortem: full shadow run of cell %d goes on (up to %s)", p.snap.Index(c.ID)+1, fullLimit(p.settings)))
		store(r, true)
		answered(r)
	}
	go func() {
		defer rt.recoverTo("collecting a shadow run")
		defer close(done)
		defer answered(nil)
		if finished != nil {
			defer finished()
		}
		r, err := j.ShadowRunStaged(ctx, c.Text, cf, early)
		if endProgress != nil {
			endProgress()
		}
		if err != nil {
			if ctx.Err() == nil {
				rt.s.tracef("shadow run of %s: %v", c.ID, err)
			}
			mu.Lock()
			runErr = err
			mu.Unlock()
			return
		}
		if r == nil {
			return
		}
		if !cancelledByNewer(r) { // not an answer about the cell: the newer run's is
			store(r, false)
		}
		answered(r)
	}()
	if wait {
		<-done
	} else {
		<-first
	}
	mu.Lock()
	defer mu.Unlock()
	if wait && runErr == nil && firstRes != nil && firstRes.Status == facts.ShadowRunning {
		return firstRes, nil
	}
	return firstRes, runErr
}

// fullLimit is the background full run's limit as the user set it.
func fullLimit(st Settings) string {
	d := max(st.Shadow.FullTimeout.D(), st.Shadow.Timeout.D())
	return d.String()
}

// unknownDiagnostic is the information-level finding shown on a cell's first line when the
// shadow layer ran but no layer could tell whether the cell crashes: the editor says
// "unknown" and why, rather than nothing (which reads as "no crash").
func unknownDiagnostic(cellID, text string, v *judge.CellVerdict) analysis.Finding {
	line := text
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			line = text[:i]
			break
		}
	}
	return analysis.Finding{
		Cell:     cellID,
		Source:   analysis.SourceShadow,
		Severity: analysis.SeverityInfo,
		Code:     "outcome-unknown",
		Message:  "outcome unknown: " + v.Reason,
		Range:    analysis.Range{End: analysis.Position{Character: analysis.UTF16Len(line)}},
	}
}
