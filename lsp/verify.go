package lsp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is fix verification in the editor: after the squiggle of a predicted crash is
// published (static, rules, shadow, LLM), the focus cell's candidate repairs are shadow-run
// one at a time (judge.VerifyFixes). Each candidate proven to make the cell run is
// published at once: the finding's fixes are replaced by the verified ones, so the
// diagnostic's data and the code actions change and the client asks for them again.
// Verification belongs to the pass: the next edit or run cancels it; a busy kernel stops
// it (kernelclient.ErrBusy) and the next idle event resumes it from the outcomes already
// collected, which are kept per cell text and kernel execution count.

// verifyStore holds the verification state of a document's cells (document.verify).
type verifyStore struct {
	mu    sync.Mutex
	cells map[string]*cellVerify // by cell ID
	// version counts records and resets (changes).
	version int
}

// cellVerify is what verification learned about one cell text at one kernel state.
type cellVerify struct {
	text string
	run  int
	// known are the outcomes of the candidates run so far.
	known map[string]judge.Outcome
	// findings are the findings with verified fixes, as of the last outcome; matched to
	// the published findings by digest.
	findings []analysis.Finding
	done     bool
}

var verifyProgressSeq atomic.Int64

// state returns the cell's verification state for its current text and kernel count,
// starting a fresh one when either changed.
// reset forgets every cell's verification: after a kernel restart the proofs were about
// another kernel's state, and execution counts start again (a count could match).
func (vs *verifyStore) reset() {
	vs.mu.Lock()
	vs.cells = nil
	vs.version++
	vs.mu.Unlock()
}

func (vs *verifyStore) state(c *notebook.Cell, run int) *cellVerify {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.cells == nil {
		vs.cells = map[string]*cellVerify{}
	}
	cv := vs.cells[c.ID]
	if cv == nil || cv.text != c.Text || cv.run != run {
		cv = &cellVerify{text: c.Text, run: run, known: map[string]judge.Outcome{}}
		vs.cells[c.ID] = cv
	}
	return cv
}

// record stores an outcome and the findings as they stand after it.
func (vs *verifyStore) record(cv *cellVerify, o judge.Outcome, fs []analysis.Finding) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if o.Key != "" {
		cv.known[o.Key] = o
	}
	if fs != nil {
		cv.findings = fs
	}
	vs.version++
}

// changes counts what verification recorded: publish rebuilds a cell's diagnostics when
// it moved (publish_cache.go), so a proven fix shows.
func (vs *verifyStore) changes() int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.version
}

// withVerified replaces the fixes (and evidence) of the findings verification has
// answered for, when its answer is about the cell's current text. Callers hold d.rmu;
// vs.mu is taken inside (never the other way round).
func (vs *verifyStore) withVerified(c *notebook.Cell, fs []analysis.Finding) []analysis.Finding {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	cv := vs.cells[c.ID]
	if cv == nil || cv.text != c.Text || len(cv.findings) == 0 {
		return fs
	}
	by := map[string]analysis.Finding{}
	for _, f := range cv.findings {
		by[findingDigest(f)] = f
	}
	out := make([]analysis.Finding, len(fs))
	for i, f := range fs {
		if v, ok := by[findingDigest(f)]; ok && v.Exception == f.Exception {
			f.Fixes = v.Fixes
			f.Evidence = v.Evidence
			if len(f.Fixes) > 0 && f.Fixes[0].Verified {
				// Said in the diagnostic too: its message changes, so the client re-reads
				// the code actions (and the user sees a proven fix exists).
				f.Evidence = append(append([]string(nil), f.Evidence...), "quick fix proven in a copy of the kernel: "+f.Fixes[0].Title)
			}
		}
		out[i] = f
	}
	return out
}

// verify runs fix verification for the focus cell of a pass, after every other layer has
// published. It returns at once when the cell has no crash finding, verification for this
// cell text and kernel state is complete, or the shadow layer is off.
func (rt *runtimeLayer) verify(ctx context.Context, p *pass, a *attachment, res *analysis.Result, c *notebook.Cell) {
	if a == nil || p.settings.Shadow.Mode == ShadowOff || ctx.Err() != nil {
		return
	}
	d := p.d
	count := a.executionCount()
	cv := d.verify.state(c, count)
	d.verify.mu.Lock()
	done := cv.done && !p.force
	d.verify.mu.Unlock()
	if done {
		return
	}
	idx := p.snap.Index(c.ID)
	fs := d.merged(res, c, idx, p.settings)
	crash := false
	for _, f := range fs {
		crash = crash || (f.Exception != "" && (f.Severity == analysis.SeverityError || f.Severity == analysis.SeverityWarning))
	}
	if !crash {
		return
	}
	if a.k.State() == kernelclient.StateBusy {
		rt.waitIdle(a)
		return
	}
	// Verification forks shadow children too, and a new shadow run kills the running ones:
	// it goes through the attachment's gate as an automatic run, after the pass's shadow
	// run (its background full run included) has ended, and an explicit shadowRun cancels
	// it (the next pass resumes from the outcomes kept in cv).
	vctx, release, ok := a.shadow.beginAuto(ctx)
	if !ok {
		return
	}
	defer release()
	ctx = vctx
	req := judge.VerifyRequest{Notebook: p.snap, Result: res, CellID: c.ID, Findings: fs}
	if l := d.layersFor(c); l != nil {
		req.Shadow, req.Inspection = l.shadow, l.inspection
	}
	d.verify.mu.Lock()
	req.Known = make(map[string]judge.Outcome, len(cv.known))
	for k, o := range cv.known {
		req.Known[k] = o
	}
	d.verify.mu.Unlock()
	report := rt.verifyProgress(ctx)
	defer report("", true)
	req.OnOutcome = func(o judge.Outcome, n, total int, now []analysis.Finding) {
		d.verify.record(cv, o, now)
		report(fmt.Sprintf("%d of %d candidate fixes tried", n, total), false)
		if o.Verified {
			// A proven fix appears at once.
			rt.s.publish(ctx, d, p.gen)
		}
	}
	j := rt.judgeFor(a, p.settings, p.settings.Shadow.Mode)
	out, err := j.VerifyFixes(ctx, req)
	switch {
	case err == nil:
		d.verify.record(cv, judge.Outcome{}, out)
		d.verify.mu.Lock()
		cv.done = true
		d.verify.mu.Unlock()
	case ctx.Err() != nil:
		return
	case errors.Is(err, kernelclient.ErrBusy):
		rt.waitIdle(a) // resumes from cv.known on the next idle event
		return
	default:
		rt.s.tracef("fix verification for %s: %v", c.ID, err)
		d.verify.record(cv, judge.Outcome{}, out)
	}
	rt.s.publish(ctx, d, p.gen)
}

// verifyProgress starts a $/progress report for verification when the client supports it;
// the returned function reports a message, or ends the progress.
func (rt *runtimeLayer) verifyProgress(ctx context.Context) func(msg string, end bool) {
	s := rt.s
	s.mu.Lock()
	supported := s.client.workDoneProgress
	s.mu.Unlock()
	if !supported || s.conn == nil {
		return func(string, bool) {}
	}
	token := fmt.Sprintf("premortem-verify-%d", verifyProgressSeq.Add(1))
	if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.tracef("workDoneProgress/create: %v", err)
		return func(string, bool) {}
	}
	s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "begin", Title: "premortem: verifying fixes in a copy of the kernel"}})
	var once sync.Once
	return func(msg string, end bool) {
		if end {
			once.Do(func() {
				s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "end"}})
			})
			return
		}
		s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "report", Message: msg}})
	}
}
