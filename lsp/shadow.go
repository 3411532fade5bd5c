package lsp

import (
	"context"
	"errors"
	"sync"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// This file is the editor's explicit shadow run (the shadowRun command): judge's pipeline
// with its shadow layer alone, waiting for the full run's answer (the automatic runs of a
// pass go through layers.go), and the outcome-unknown diagnostic. The provisional answer
// is published at once and a $/progress shows the background full run, as in a pass.

// shadowNow shadow-runs c in mode and waits for the final answer, which it returns (the
// first one when no final came), or why there is none (the command tells the user: a busy
// kernel, a dead one, a newer run that cancelled it: then the result is the cancelled
// child's). Answers forked from a kernel that has since restarted are not kept.
func (rt *runtimeLayer) shadowNow(ctx context.Context, p *pass, a *attachment, res *analysis.Result, c *notebook.Cell, mode string) (*facts.ShadowResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	j := rt.judgeFor(a, p.settings, mode)
	sink := &layerSink{rt: rt, ctx: ctx, p: p, a: a}
	var mu sync.Mutex
	var first, final *facts.ShadowResult
	var runErr error
	epoch, ok := rt.epochOf(p.d, a)
	if !ok {
		return nil, judge.ErrStaleEpoch
	}
	jp := judge.Pass{Notebook: p.snap, Static: res, Session: p.d.sess, Epoch: epoch, ExecCount: a.latestExecCount(), Force: true,
		Focus: c.ID, Only: judge.LayerShadow, Progress: rt.s.progress(ctx),
		Publish: func(ans judge.Answer) {
			sink.publish(ans)
			if ans.Layer != judge.LayerShadow {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(ans.Err, judge.ErrSuperseded):
				final = ans.Shadow
			case ans.Err != nil:
				runErr = ans.Err
			case first == nil:
				first = ans.Shadow
			}
			if ans.Err == nil && !ans.Provisional {
				final = ans.Shadow
			}
		}}
	_, err := j.Run(ctx, jp)
	mu.Lock()
	defer mu.Unlock()
	if final == nil {
		final = first
	}
	if runErr == nil && final == nil {
		runErr = err
	}
	return final, runErr
}

// unknownDiagnostic is the information-level finding shown on a cell's first line when the
// shadow layer ran but no layer could tell whether the cell crashes: the editor says
// "unknown" and why, rather than nothing (which reads as "no crash").
func unknownDiagnostic(cellID, text string, v *judge.CellVerdict) finding.Finding {
	line := text
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			line = text[:i]
			break
		}
	}
	return finding.Finding{
		Cell:     cellID,
		Source:   finding.SourceShadow,
		Severity: finding.SeverityInfo,
		Code:     finding.OutcomeUnknown,
		Message:  "outcome unknown: " + v.Reason,
		Range:    finding.Range{End: finding.Position{Character: analysis.UTF16Len(line)}},
	}
}
