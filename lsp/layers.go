package lsp

import (
	"context"
	"errors"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file runs the kernel-backed layers of a pass through judge's pipeline (judge.Run,
// the one the command line runs too): it decides what is stale (answers are cached per
// cell text, kernel epoch and kernel execution count), hands the pipeline what the editor
// needs (the shadow gate, the busy kernel, progress, the namespace for the static layer),
// and stores and publishes each answer as it arrives.

// errStaleEpoch stops a pass whose kernel restarted under it.
var errStaleEpoch = errors.New("the kernel restarted during the pass")

// check runs the kernel-backed layers for a pass: rules for every code cell that has not
// run and whose cached answer is stale (the focus cell first), then the shadow run, the
// LLM and fix verification for the focus cell. Each layer publishes as soon as it answers.
func (rt *runtimeLayer) check(ctx context.Context, p *pass, res *analysis.Result) {
	if rt.checked != nil {
		passCtx := ctx
		defer func() {
			if passCtx.Err() == nil {
				rt.checked(p)
			}
		}()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, snap, settings := p.d, p.snap, p.settings
	a := rt.attachmentFor(d)
	execCount := 0
	if a != nil {
		execCount = a.latestExecCount()
	}
	epoch := d.kernelEpoch()
	j := rt.judgeFor(a, settings, settings.Shadow.Mode)
	if rt.llm.active(settings) {
		if c, err := rt.llm.clientFor(settings); err == nil {
			j.LLM = c
		}
	}
	jp := judge.Pass{Notebook: snap, Static: res, Progress: rt.s.progress(ctx)}
	if a != nil && settings.Rules.Enabled {
		jp.Rules = staleCells(p, res, execCount)
	}
	sink := &layerSink{rt: rt, ctx: ctx, stop: cancel, p: p, a: a, epoch: epoch, execCount: execCount, start: time.Now()}
	if focus := snap.Cell(p.focus); focus != nil && focus.Kind == notebook.Code && !focus.Executed() {
		jp.Focus = focus.ID
		jp.Known = func() judge.Known {
			// The count as the focus cell's layers begin (the rules' inspection may have
			// raised it), as their answers will be stored.
			if a != nil {
				sink.execCount = max(sink.execCount, a.latestExecCount())
			}
			k, cv := known(p, focus, sink.execCount)
			sink.verify = cv
			return k
		}
	}
	if jp.Focus == "" && len(jp.Rules) == 0 {
		return
	}
	if a != nil {
		jp.Busy = a.k.RunningOthers
		// An explicit shadow run (the shadowRun command) takes precedence over this pass's
		// automatic runs: they are not started while one runs, and are cancelled when one
		// starts (shadowGate). The gate is held until the background full run ends too.
		jp.Gate = a.shadow.beginAuto
	}
	jp.Reanalyze = func(ctx context.Context, namespace []string) (*analysis.Result, error) {
		if d.kernelEpoch() != epoch {
			return nil, errStaleEpoch // these facts are the old kernel's
		}
		if !rt.s.setNamespace(ctx, p, namespace) {
			return nil, nil
		}
		// The static layer now knows which names the kernel holds: re-analyze so its
		// NameErrors are certain (and the disproved ones go).
		return rt.s.reanalyze(ctx, p)
	}
	jp.Publish = sink.publish
	_, err := j.Run(ctx, jp)
	switch {
	case err == nil, ctx.Err() != nil:
	case errors.Is(err, kernelclient.ErrBusy):
		rt.waitIdle(a) // the next idle event resumes the pass (verification from its kept outcomes)
	case errors.Is(err, kernelclient.ErrClosed), errors.Is(err, kernelclient.ErrRestarted):
		// Detached, or the kernel restarted under the request: follow handles both.
	case errors.Is(err, kernelclient.ErrDead):
		// markDead shows the one visible message of this death, whether the heartbeat or
		// this request noticed first.
		rt.markDead(a, "it died during an inspection: "+err.Error())
	default:
		rt.s.tracef("kernel layers for %s: %v", d.uri, err)
	}
}

// staleCells are the code cells that have not run whose rules answer is missing or older
// than the kernel's execution count, the focus cell first.
func staleCells(p *pass, res *analysis.Result, execCount int) []string {
	stale := func(c *notebook.Cell) bool {
		if c.Kind != notebook.Code || c.Executed() || res.Facts[c.ID] == nil {
			return false
		}
		l := p.d.layersFor(c)
		return l == nil || !l.checked || l.rulesExecCount < execCount || p.force
	}
	var out []string
	if c := p.snap.Cell(p.focus); c != nil && stale(c) {
		out = append(out, c.ID)
	}
	for _, c := range p.snap.Cells {
		if c.ID != p.focus && stale(c) {
			out = append(out, c.ID)
		}
	}
	return out
}

// known is what the document's caches hold about the focus cell that is still current
// (unless the pass forces a re-run), and the cell's verification state.
func known(p *pass, c *notebook.Cell, execCount int) (judge.Known, *cellVerify) {
	var k judge.Known
	if l := p.d.layersFor(c); l != nil {
		// The facts and rules are the LLM's evidence even when stale (the stale ones are
		// checked again first); rules turned off in the settings count for nothing.
		if p.settings.Rules.Enabled {
			k.Inspection, k.Rules = l.inspection, l.rules
			k.Checked = l.checked && l.rulesExecCount >= execCount && !p.force
		}
		if l.shadow != nil && l.shadowExecCount >= execCount && !l.shadowProvisional && !p.force {
			k.Shadow, k.ShadowFindings = l.shadow, l.shadowFind
		}
		if l.llmDone && l.llmExecCount >= execCount && !p.force {
			k.LLMDone, k.LLM = true, l.llm
		}
	}
	cv := p.d.verify.state(c, execCount)
	p.d.verify.mu.Lock()
	k.Verified = cv.done && !p.force
	k.Outcomes = make(map[string]judge.Outcome, len(cv.known))
	for key, o := range cv.known {
		k.Outcomes[key] = o
	}
	p.d.verify.mu.Unlock()
	return k, cv
}

// layerSink stores the pipeline's answers for one pass in the document's caches and
// publishes them.
type layerSink struct {
	rt   *runtimeLayer
	ctx  context.Context
	stop context.CancelFunc
	p    *pass
	a    *attachment
	// epoch is the kernel's as the pass began: an answer is kept only while the kernel has
	// not restarted since. execCount is the kernel's execution count the answers are
	// stored at: as the pass began for the rules, as the focus cell's layers began for the
	// others (judge.Pass.Known).
	epoch, execCount int
	// verify is the focus cell's verification state.
	verify *cellVerify
	// start times a batch of rules (its inspection included), for the trace.
	start time.Time
	total int
}

func (s *layerSink) publish(ans judge.Answer) {
	d, srv := s.p.d, s.rt.s
	c := s.p.snap.Cell(ans.Cell)
	if c == nil {
		return
	}
	switch ans.Layer {
	case judge.LayerRules:
		s.rules(c, ans)
	case judge.LayerShadow:
		if ans.Err != nil {
			if s.ctx.Err() == nil && !errors.Is(ans.Err, judge.ErrSuperseded) {
				srv.tracef("shadow run of %s: %v", c.ID, ans.Err)
			}
			if s.ctx.Err() == nil {
				srv.endHold(s.p) // no answer will come: what waited for it shows
			}
			return
		}
		if s.a != nil {
			s.rt.noteSandbox(s.a, ans.Shadow)
		}
		if !d.updateLayersAt(c, s.epoch, func(l *cellLayers) {
			l.shadow, l.shadowFind, l.shadowExecCount, l.shadowProvisional = ans.Shadow, ans.Findings, s.execCount, ans.Provisional
			l.notes = append(l.notes, ans.Notes...)
		}) {
			return // forked from the kernel before its restart: nothing to keep
		}
		if !ans.Provisional {
			// The final answer is in: the merge decides about what waited for it.
			d.releaseHold(s.p)
		}
		srv.publish(s.ctx, d, s.p.gen)
		if len(ans.Shadow.Trace) > 0 {
			srv.refreshInlayHints()
		}
	case judge.LayerLLM:
		if ans.Err != nil {
			srv.logf(protocol.MessageTypeWarning, "LLM prediction failed: %v", ans.Err)
		}
		if !ans.Final {
			return // asked again next pass
		}
		for _, n := range ans.Notes {
			srv.tracef("LLM for %s: %s", c.ID, n)
		}
		d.updateLayers(c, func(l *cellLayers) {
			l.llm, l.llmDone, l.llmExecCount = ans.Findings, true, s.execCount
		})
		srv.publish(s.ctx, d, s.p.gen)
	case judge.LayerVerify:
		if s.verify == nil {
			return
		}
		switch {
		case !ans.Final && ans.Err == nil:
			// One candidate ran: a proven fix appears at once.
			d.verify.record(s.verify, ans.Outcome, ans.Findings)
			if ans.Outcome.Verified {
				srv.publish(s.ctx, d, s.p.gen)
			}
			return
		case ans.Final:
			d.verify.record(s.verify, judge.Outcome{}, ans.Findings)
			d.verify.mu.Lock()
			s.verify.done = true
			d.verify.mu.Unlock()
		default:
			srv.tracef("fix verification for %s: %v", c.ID, ans.Err)
			d.verify.record(s.verify, judge.Outcome{}, ans.Findings)
		}
		srv.publish(s.ctx, d, s.p.gen)
	}
}

// rules stores one cell's rules answer; the last of a batch publishes.
func (s *layerSink) rules(c *notebook.Cell, ans judge.Answer) {
	d, srv := s.p.d, s.rt.s
	if ans.Err != nil {
		if !d.updateLayersAt(c, s.epoch, func(l *cellLayers) {
			l.checked, l.rulesExecCount, l.notes = true, s.execCount, ans.Notes
		}) {
			s.stop()
			return
		}
		if !ans.Pending {
			srv.logf(protocol.MessageTypeWarning, "runtime facts unavailable: %v", ans.Err)
		}
	} else {
		insp := ans.Inspection
		if s.a != nil {
			s.a.sawExecCount(insp.ExecutionCount)
		}
		s.total += len(ans.Findings)
		if !d.updateLayersAt(c, s.epoch, func(l *cellLayers) {
			l.inspection, l.rules, l.checked = insp, ans.Findings, true
			l.rulesExecCount = max(s.execCount, insp.ExecutionCount)
		}) {
			s.stop() // the kernel restarted: these facts are the old kernel's
			return
		}
	}
	if ans.Pending {
		return
	}
	if ans.Inspection != nil {
		srv.tracef("rules of %s: %d finding(s) so far, facts as of run %d, %v", d.uri, s.total, ans.Inspection.ExecutionCount, time.Since(s.start).Round(time.Microsecond))
	}
	s.start, s.total = time.Now(), 0
	srv.publish(s.ctx, d, s.p.gen)
}
