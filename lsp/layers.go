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
// the one the command line runs too) over the document's judge.Session, which keeps each
// answer with what it depends on and decides what is stale. The editor hands the pipeline
// what only it knows (the shadow gate, the busy kernel, progress, the kernel's execution
// count) and publishes as each answer arrives.

// check runs the kernel-backed layers for a pass: rules for every code cell that has not
// run and whose answer is stale (the focus cell first), then the shadow run, the LLM and
// fix verification for the focus cell. Each layer publishes as soon as it answers.
func (rt *runtimeLayer) check(ctx context.Context, p *pass, res *analysis.Result) {
	if rt.checked != nil {
		passCtx := ctx
		defer func() {
			if passCtx.Err() == nil {
				rt.checked(p)
			}
		}()
	}
	d, snap, settings := p.d, p.snap, p.settings
	a, epoch := rt.attachmentAt(d)
	execCount := 0
	if a != nil {
		execCount = a.latestExecCount()
	}
	j := rt.judgeFor(a, settings, settings.Shadow.Mode)
	if rt.llm.active(settings) {
		if c, err := rt.llm.clientFor(settings); err == nil {
			j.LLM = c
		}
	}
	jp := judge.Pass{Notebook: snap, Static: res, Session: d.sess, Epoch: epoch, ExecCount: execCount, Force: p.force, Progress: rt.s.progress(ctx)}
	if a != nil && settings.Rules.Enabled {
		jp.Rules = d.sess.StaleRules(snap, res, p.focus, execCount, p.force)
	}
	if focus := snap.Cell(p.focus); focus != nil && focus.Kind == notebook.Code && !focus.Executed() {
		jp.Focus = focus.ID
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
	sink := &layerSink{rt: rt, ctx: ctx, p: p, a: a, start: time.Now()}
	jp.Publish = sink.publish
	_, err := j.Run(ctx, jp)
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, judge.ErrStaleEpoch):
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

// layerSink publishes a pass's answers as they arrive; the Session already holds them.
// What it does beyond publishing is the editor's: tell the attachment the execution counts
// the kernel reported, show the sandbox in force, end the hold when the shadow run's final
// answer is in, refresh inlay hints when a trace came, and log what failed.
type layerSink struct {
	rt  *runtimeLayer
	ctx context.Context
	p   *pass
	a   *attachment
	// start times a batch of rules (its inspection included), for the trace; total counts
	// its findings.
	start time.Time
	total int
}

func (s *layerSink) publish(ans judge.Answer) {
	d, srv := s.p.d, s.rt.s
	if ans.Static != nil {
		// The static layer again, now that the kernel's namespace is known: its NameErrors
		// are certain (and the disproved ones go).
		srv.recordStatic(d, s.p.gen, s.p.snap, ans.Static)
	}
	if ans.Inspection != nil && s.a != nil {
		s.a.sawExecCount(ans.Inspection.ExecutionCount)
	}
	if ans.Shadow != nil && s.a != nil && ans.Err == nil {
		s.rt.noteSandbox(s.a, ans.Shadow)
	}
	switch {
	case ans.Err == nil:
	case ans.Layer == judge.LayerShadow && (s.ctx.Err() != nil || errors.Is(ans.Err, judge.ErrSuperseded)):
	case ans.Layer == judge.LayerRules && ans.Pending:
	case ans.Layer == judge.LayerRules:
		srv.logf(protocol.MessageTypeWarning, "runtime facts unavailable: %v", ans.Err)
	case ans.Layer == judge.LayerLLM:
		srv.logf(protocol.MessageTypeWarning, "LLM prediction failed: %v", ans.Err)
	default:
		srv.tracef("%s layer for %s: %v", ans.Layer, ans.Cell, ans.Err)
	}
	switch ans.Layer {
	case judge.LayerRules:
		s.total += len(ans.Findings)
		if ans.Pending {
			return // the batch's last answer publishes
		}
		if ans.Inspection != nil {
			srv.tracef("rules of %s: %d finding(s) so far, facts as of run %d, %v", d.uri, s.total, ans.Inspection.ExecutionCount, time.Since(s.start).Round(time.Microsecond))
		}
		s.start, s.total = time.Now(), 0
	case judge.LayerShadow:
		if ans.Err != nil {
			if s.ctx.Err() == nil {
				srv.endHold(s.p) // no answer will come: what waited for it shows
			}
			return
		}
		if !ans.Provisional {
			// The final answer is in: the merge decides about what waited for it.
			d.releaseHold(s.p)
		}
	case judge.LayerLLM:
		if !ans.Final {
			return // asked again next pass
		}
		for _, n := range ans.Notes {
			srv.tracef("LLM for %s: %s", ans.Cell, n)
		}
	case judge.LayerVerify:
		if !ans.Final && ans.Err == nil && ans.Outcome.Key != "" && !ans.Outcome.Verified {
			return // a candidate that failed changes nothing the user sees
		}
	}
	srv.publish(s.ctx, d, s.p.gen)
	if ans.Shadow != nil && len(ans.Shadow.Trace) > 0 {
		srv.refreshInlayHints()
	}
}
