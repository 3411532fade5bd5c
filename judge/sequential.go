package judge

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is the --sequential check: the targets met as a top-to-bottom run meets them.
//
// Each target runs for real in premortem's kernel anyway, so that the cells below see what it
// defines; a clean real run is the best proof there is, and judging a cell in a shadow run
// first costs a fork and a sandbox per cell, most of a short cell's time. So until a target
// raises, the check runs each one for real right after the static layer and the rules (which
// fork nothing): a cell the rules predict to crash gets the full judging first and does not
// run unless a shadow run clears it. When a real run raises (or kills the kernel), the check
// takes it back: a new kernel replays what ran before, in the order it ran, and the cell gets
// the full judging (shadow run, fixes verified) against the state before it, as if it had
// never run; from there on every target is judged in full before it runs, so a notebook
// whose cells keep raising replays once, not once a cell.

// seqRun is the state of one --sequential check.
type seqRun struct {
	j        *Judge
	sess     *Session
	nb       *notebook.Notebook
	opts     CheckOptions
	rep      *Report
	recorded map[int]string
	// launch starts a new kernel; k is the current one (CheckNotebook shuts it down).
	launch func() (*kernelclient.Launched, error)
	k      *kernelclient.Launched
	// ran are the cells the kernel ran, in the order it ran them: the replay, then the
	// targets run for real.
	ran []*notebook.Cell
	// speculate says targets still run before their full judging: until the first one raises.
	speculate bool
}

// newSeqRun starts a --sequential check after the replay of nb's history into k.
func newSeqRun(j *Judge, sess *Session, nb *notebook.Notebook, opts CheckOptions, rep *Report, recorded map[int]string,
	k *kernelclient.Launched, launch func() (*kernelclient.Launched, error)) *seqRun {
	return &seqRun{j: j, sess: sess, nb: nb, opts: opts, rep: rep, recorded: recorded, k: k, launch: launch,
		ran: nb.History(), speculate: rep.ReplayError == nil}
}

func (s *seqRun) timeout() time.Duration {
	if s.opts.ReplayTimeout <= 0 {
		return 10 * time.Minute
	}
	return s.opts.ReplayTimeout
}

func (s *seqRun) progressf(format string, args ...any) {
	if s.opts.Progress != nil {
		fmt.Fprintf(s.opts.Progress, "premortem: "+format+"\n", args...)
	}
}

// full is the judging with every layer of cell idx against the kernel's state.
func (s *seqRun) full(ctx context.Context, idx int) (*CellVerdict, error) {
	v, err := s.j.Cell(ctx, s.sess, s.nb, s.nb.Cells[idx].ID)
	return judgedCell(ctx, s.j, idx, v, err)
}

// target judges target idx; last says it is the last one (judged, not run, once
// speculation is over: nothing below needs it).
func (s *seqRun) target(ctx context.Context, idx int, last bool) (*CellVerdict, error) {
	if !s.speculate {
		v, err := s.full(ctx, idx)
		if err != nil {
			return nil, err
		}
		if s.rep.ReplayError != nil {
			noteReplayError(ctx, s.sess, s.nb, v, s.rep.ReplayError)
		} else if v.Verdict != VerdictCrash && !last {
			if err := s.runAfter(ctx, idx, v); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	c := s.nb.Cells[idx]
	// The static layer and the rules, which fork nothing.
	rj := *s.j
	rj.Options.Shadow, rj.LLM, rj.OnProvisional = ShadowOff, nil, nil
	v, err := rj.Cell(ctx, s.sess, s.nb, c.ID)
	if v, err = judgedCell(ctx, s.j, idx, v, err); err != nil {
		return nil, err
	}
	if v.Verdict == VerdictCrash {
		// Predicted to crash: it does not run before the full judging, on the state before it.
		if v, err = s.full(ctx, idx); err != nil || v.Verdict == VerdictCrash {
			return v, err
		}
	}
	s.progressf("running cell %d for real (--sequential; judged in full only if it raises)", idx+1)
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	res, err := s.k.Execute(cctx, c.Text)
	timedOut := cctx.Err() == context.DeadlineExceeded
	cancel()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !timedOut:
		why := kernelLost(s.k, true)
		if why == "" {
			s.unproven(v, fmt.Sprintf("running the cell for real failed (%v)", err))
			return v, nil
		}
		// The cell took the kernel down (the out-of-memory killer, a crash in native code):
		// judged in full against the state before it, in a new kernel.
		return s.takeBack(ctx, idx, fmt.Sprintf("the kernel %s when premortem ran the cell for real", why), nil)
	case err != nil:
		// Execute interrupted the cell: the next request waits until the kernel is idle.
		if why := waitIdle(s.k, 10*time.Second); why != "" {
			return nil, fmt.Errorf("%w: cell %d ran longer than %s (--timeout) and the kernel %s: no verdict stands; raise --timeout, or check without a kernel with --static", ErrEnvironment, idx+1, s.timeout(), why)
		}
		s.unproven(v, fmt.Sprintf("the cell ran longer than %s (--timeout) when premortem ran it for real and was interrupted", s.timeout()))
		return v, nil
	case res.Status == "ok":
		s.ranOK(idx, res)
		v.Verdict, v.Confidence, v.Reason = VerdictOK, 1, ""
		v.Notes = append(v.Notes, "the cell ran without an exception when premortem ran it for real (--sequential)")
		return v, nil
	case res.Status == "error":
		return s.takeBack(ctx, idx, fmt.Sprintf("premortem ran the cell for real and it raised %s: %s", res.Ename, oneLine(res.Evalue)), res)
	}
	return v, nil
}

// unproven says why a target has no proof after its real run (it was interrupted, or the
// run failed): an unknown verdict gives that reason, not the rules' pass's ("shadow runs
// are off"); a shadow run's verdict stands. The cells below see what it did before it
// stopped.
func (s *seqRun) unproven(v *CellVerdict, why string) {
	if v.Verdict == VerdictUnknown {
		v.Reason = why
	}
	v.Notes = append(v.Notes, why+"; the cells below see what it did before it stopped")
}

// ranOK records that target idx ran clean for real: the notebook model says it ran, as the
// kernel does, so the static layer stops calling its definitions "not run" below.
func (s *seqRun) ranOK(idx int, res *kernelclient.ExecuteResult) {
	s.nb.Cells[idx].ExecutionOrder = res.ExecutionCount
	s.ran = append(s.ran, s.nb.Cells[idx])
}

// takeBack undoes a real run of target idx that raised (res) or killed the kernel (res
// nil): a new kernel replays the cells that ran before it, and the cell gets the full
// judging against that state. A crash the full judging does not predict is the real run's.
// Speculation ends here.
func (s *seqRun) takeBack(ctx context.Context, idx int, what string, res *kernelclient.ExecuteResult) (*CellVerdict, error) {
	s.speculate = false
	s.progressf("cell %d: %s; premortem starts a new kernel and replays the %s that ran before it, to judge it against the state before it", idx+1, what, plural(len(s.ran), "cell"))
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = s.k.Shutdown(sctx)
	cancel()
	k, err := s.launch()
	if err != nil {
		return nil, fmt.Errorf("%w: cell %d raised when premortem ran it (--sequential), and a new kernel to judge it against the state before it did not start: %v; check without --sequential", ErrEnvironment, idx+1, err)
	}
	s.k, s.j.Kernel = k, k
	s.sess.KernelChanged()
	scratch := &Report{}
	if err := replay(ctx, k, s.nb, s.ran, s.opts, scratch, s.recorded); err != nil {
		return nil, err
	}
	var v *CellVerdict
	if scratch.ReplayError != nil {
		// The cells before it did not run the same way twice: what the judging sees is not
		// the state the real run had.
		s.rep.ReplayError = scratch.ReplayError
		v, err = s.full(ctx, idx)
		if err != nil {
			return nil, err
		}
		v.Notes = append(v.Notes, scratch.ReplayError.Error()+" (the second replay, after the cell raised when premortem ran it); the kernel state may be incomplete")
	} else if v, err = s.full(ctx, idx); err != nil {
		return nil, err
	}
	v.Notes = append(v.Notes, what+"; the cells below are judged as if it had not run")
	if v.Verdict != VerdictCrash {
		f := realRunCrash(v.CellID, s.nb.Cells[idx].Text, res)
		if res == nil {
			// The kernel's death is the crash that costs the user most: every variable.
			f.Code, f.Message = "kernel-died", what+" (the out-of-memory killer, or a crash in native code, ends a kernel this way)"
			f.Evidence = []string{what}
		}
		v.Verdict, v.Confidence, v.Reason = VerdictCrash, 1, ""
		v.Findings = append([]finding.Finding{f}, v.Findings...)
	}
	return v, nil
}

// runAfter runs a target for real after its full judging found no crash (once speculation
// is over). A cell that raises although nothing predicted it becomes a crash on the
// evidence of the real run; what it did before raising stays in the kernel.
func (s *seqRun) runAfter(ctx context.Context, idx int, v *CellVerdict) error {
	s.progressf("running cell %d for the cells below it (--sequential)", idx+1)
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	res, err := s.k.Execute(cctx, s.nb.Cells[idx].Text)
	cancel()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		v.Notes = append(v.Notes, fmt.Sprintf("running the cell for the cells below failed: %v", err))
	case res.Status == "ok":
		s.ranOK(idx, res)
		if v.Verdict == VerdictUnknown {
			// The cell ran clean for real: the one proof better than a shadow run.
			v.Verdict, v.Confidence, v.Reason = VerdictOK, 1, ""
			v.Notes = append(v.Notes, "the cell ran without an exception when premortem ran it for real (--sequential)")
		}
	case res.Status == "error":
		s.ran = append(s.ran, s.nb.Cells[idx])
		v.Verdict, v.Confidence = VerdictCrash, 1
		v.Findings = append([]finding.Finding{realRunCrash(v.CellID, s.nb.Cells[idx].Text, res)}, v.Findings...)
	}
	return nil
}

// realRunCrash is the finding of a cell that raised when premortem ran it for real, on the
// cell's line the traceback names (the first line when it names none).
// A nil res is a run that killed the kernel: no traceback.
func realRunCrash(cellID, text string, res *kernelclient.ExecuteResult) finding.Finding {
	if res == nil {
		res = &kernelclient.ExecuteResult{}
	}
	lines := analysis.SplitLines(text)
	line, known := tracebackLine(res.Traceback, res.ExecutionCount)
	evidence := "the cell raised when run for real in premortem's kernel"
	if !known || line >= len(lines) {
		line, evidence = 0, evidence+"; the line is not known"
	}
	return finding.Finding{
		Cell: cellID, Source: finding.SourceShadow, Severity: finding.SeverityError, Code: shadowCode(res.Ename),
		Exception: res.Ename, Message: fmt.Sprintf("%s: %s (raised when premortem ran the cell, --sequential)", res.Ename, oneLine(res.Evalue)),
		Range: lineRange(lines, line), Confidence: 1,
		Evidence: []string{evidence},
	}
}

var (
	ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// IPython 8 names a cell's frame "Cell In [5], line 3" (In[5] from 8.x on); older ones
	// "<ipython-input-5-...> in <module>" followed by "----> 3".
	cellFrameRE  = regexp.MustCompile(`Cell In ?\[(\d+)\], line (\d+)`)
	inputFrameRE = regexp.MustCompile(`(?s)<ipython-input-(\d+)-[0-9a-f]+>.*?-+> (\d+)`)
)

// tracebackLine is the 0-based line of the cell run as execution count n that the
// traceback's outermost frame in that cell names: the line of the cell itself that raised,
// even when the exception came from a function another cell defined.
func tracebackLine(tb []string, n int) (int, bool) {
	for _, frame := range tb {
		frame = ansiRE.ReplaceAllString(frame, "")
		for _, re := range []*regexp.Regexp{cellFrameRE, inputFrameRE} {
			if m := re.FindStringSubmatch(frame); m != nil {
				count, _ := strconv.Atoi(m[1])
				line, _ := strconv.Atoi(m[2])
				if count == n && line >= 1 {
					return line - 1, true
				}
			}
		}
	}
	return 0, false
}
