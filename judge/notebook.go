package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// CheckOptions configure CheckNotebook.
type CheckOptions struct {
	Options
	// KernelName overrides the notebook's kernelspec name.
	KernelName string
	// Targets are 0-based indexes in the notebook's cells array; nil means every code cell
	// without an execution count.
	Targets []int
	// ReplayTimeout bounds each replayed cell (default 10 minutes).
	ReplayTimeout time.Duration
	// NoKernel judges with the static layer only, without starting a kernel.
	NoKernel bool
	// LLM is the LLM client, nil when not configured.
	LLM *llm.Client
	// Progress receives one line per replayed cell (stderr in the CLI); nil for silence.
	Progress io.Writer
	// Sequential judges the targets as a top-to-bottom run would meet them: after each
	// target that is not predicted to crash, the target runs for real in premortem's kernel
	// (its side effects happen), so later targets see what it defines. For notebooks saved
	// with cleared outputs, where no cell carries an execution count.
	Sequential bool
}

// Report is the outcome of CheckNotebook, the `premortem check` JSON contract's content.
type Report struct {
	Notebook string
	Kernel   kernelclient.KernelInfo
	// KernelName is the kernelspec used.
	KernelName string
	// Replayed counts the executed cells replayed; ReplayError describes the cell that
	// stopped the replay, if one did.
	Replayed    int
	ReplayError *ReplayError
	Cells       []*CellVerdict
	// Source is the notebook as read, for printing the cells' lines.
	Source *notebook.Notebook
}

// ReplayError is a replayed cell that raised, or ran past the replay timeout and was
// interrupted. A kernel lost during the replay is not one: CheckNotebook returns an
// ErrEnvironment error then.
type ReplayError struct {
	// Index is the 0-based index of the cell in the notebook's cells array (messages name it
	// from 1, as every message does).
	Index          int
	ExecutionCount int
	Ename, Evalue  string
}

// Error says which cell stopped the replay and how.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("replay stopped at cell %d (run %d): %s: %s", e.Index+1, e.ExecutionCount, e.Ename, oneLine(e.Evalue))
}

// ErrEnvironment marks errors that are the machine's, not the notebook's: the notebook
// cannot be read, no kernel could start, the kernel died or stopped answering during the
// replay or the judging. No verdict stands then, and `premortem check` exits 2.
var ErrEnvironment = errors.New("environment error")

// kernelLostWait bounds how long a judged cell whose kernel requests failed waits for the
// kernel's death to become certain (its process reaped, or the client giving up on the
// heartbeat after HeartbeatMisses seconds) before the kernel is taken to be alive.
const kernelLostWait = 4 * time.Second

// CheckNotebook reads a notebook, starts a kernel for it in the notebook's folder, replays
// the cells that carry an execution count in execution-count order, and judges the target
// cells against the state the replay left.
func CheckNotebook(ctx context.Context, path string, opts CheckOptions) (*Report, error) {
	raw, err := notebook.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read notebook %s: %v (give the path of an .ipynb file)", ErrEnvironment, path, err)
	}
	nb, err := notebook.Parse(raw, path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrEnvironment, path, err)
	}
	targets, err := targetCells(nb, opts.Targets)
	if err != nil {
		return nil, err
	}
	rep := &Report{Notebook: path, KernelName: firstNonEmpty(opts.KernelName, nb.KernelName(), "python3"), Source: nb}
	sess := NewSession(nil)
	defer sess.Close()
	j := &Judge{Options: opts.Options, LLM: opts.LLM}
	var seq *seqRun // the --sequential check, when one runs with a kernel
	if opts.Progress != nil {
		j.OnProvisional = func(cellID string, r *facts.ShadowResult) {
			what := r.Status
			switch {
			case r.Status == facts.ShadowError:
				what = fmt.Sprintf("%s at line %d (likely: the loops were shortened)", r.Exception, r.Line)
			case r.DevRun.LibraryOnly() && r.Status == facts.ShadowOK:
				what = "clean with the library's work shortened"
			case r.DevRun.Stands() && r.Status == facts.ShadowOK:
				what = "clean with the loops shortened, standing for the full run"
			case r.DevRun != nil && r.DevRun.Shortened && r.Status == facts.ShadowOK:
				what = "clean with the loops shortened"
			case r.Status == facts.ShadowRunning:
				what = "still running"
			}
			fmt.Fprintf(opts.Progress, "premortem: cell %d: %s after %s; waiting for the full shadow run (up to %s, --shadow-full-timeout)\n",
				nb.Index(cellID)+1, what, fmtDur(opts.shadowTimeout()), fmtDur(max(opts.shadowTimeout(), opts.shadowFullTimeout())))
		}
	}

	if !opts.NoKernel {
		abs, _ := filepath.Abs(path)
		launch := func(name string) (*kernelclient.Launched, error) {
			return kernelclient.Launch(ctx, kernelclient.LaunchOptions{
				KernelName: name,
				Cwd:        filepath.Dir(abs),
				// Plots must not try to open windows in a kernel nobody looks at.
				Env: append(os.Environ(), "MPLBACKEND=Agg"),
			})
		}
		k, err := launch(rep.KernelName)
		if err != nil && opts.KernelName == "" && rep.KernelName != "python3" && ctx.Err() == nil && isPython(nb) {
			// Notebooks carry the kernelspec name of the machine they were saved on
			// ("conda-env-ml-py"); unless the user chose one, any Python 3 kernel will do.
			if k2, err2 := launch("python3"); err2 == nil {
				if opts.Progress != nil {
					fmt.Fprintf(opts.Progress, "premortem: no kernelspec %q here (%v); using python3 (choose one with --kernel)\n", rep.KernelName, err)
				}
				rep.KernelName, k, err = "python3", k2, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: start kernel %q: %v (choose another kernelspec with --kernel NAME, or check without a kernel with --static)", ErrEnvironment, rep.KernelName, err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if ctx.Err() != nil {
				// Interrupted (a signal, a deadline): the kernel is killed at once rather
				// than asked to finish the cell it runs.
				cancel()
			}
			defer cancel()
			if seq != nil {
				k = seq.k // a --sequential check may have replaced it
			}
			_ = k.Shutdown(sctx)
		}()
		rep.Kernel = k.Info()
		j.Kernel = k
		recorded := recordedErrors(raw)
		if err := replay(ctx, k, nb, nb.History(), opts, rep, recorded); err != nil {
			return nil, err
		}
		if opts.Sequential {
			seq = newSeqRun(j, sess, nb, opts, rep, recorded, k, func() (*kernelclient.Launched, error) { return launch(rep.KernelName) })
		}
	}

	for n, idx := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if opts.Progress != nil && j.Kernel != nil {
			fmt.Fprintf(opts.Progress, "premortem: judging cell %d [%d/%d]\n", idx+1, n+1, len(targets))
		}
		if seq != nil {
			v, err := seq.target(ctx, idx, n == len(targets)-1)
			if err != nil {
				return nil, err
			}
			rep.Cells = append(rep.Cells, v)
			continue
		}
		v, err := j.Cell(ctx, sess, nb, nb.Cells[idx].ID)
		if v, err = judgedCell(ctx, j, idx, v, err); err != nil {
			return nil, err
		}
		if rep.ReplayError != nil {
			noteReplayError(ctx, sess, nb, v, rep.ReplayError)
		}
		rep.Cells = append(rep.Cells, v)
	}
	return rep, nil
}

// judgedCell checks that judging cell idx (v, err) left premortem's kernel alive: a judging
// that met a dead kernel leaves no verdict standing. It wraps err.
func judgedCell(ctx context.Context, j *Judge, idx int, v *CellVerdict, err error) (*CellVerdict, error) {
	if k, ok := j.Kernel.(*kernelclient.Launched); ok && ctx.Err() == nil {
		if why := kernelLost(k, err != nil || kernelFailed(v)); why != "" {
			return nil, fmt.Errorf("%w: the kernel %s while premortem judged cell %d (index %d): no verdict stands; run premortem check again, or check without a kernel with --static", ErrEnvironment, why, idx+1, idx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("judge cell %d (index %d): %w", idx+1, idx, err)
	}
	return v, nil
}

// noteReplayError says on v that the replay stopped early, and takes back what only that
// gap predicts.
func noteReplayError(ctx context.Context, sess *Session, nb *notebook.Notebook, v *CellVerdict, re *ReplayError) {
	v.Notes = append(v.Notes, re.Error()+"; the kernel state may be incomplete")
	discountReplayGaps(ctx, sess, nb, v, re)
}

func targetCells(nb *notebook.Notebook, want []int) ([]int, error) {
	if want == nil {
		var out []int
		for i, c := range nb.Cells {
			if c.Kind == notebook.Code && !c.Executed() {
				out = append(out, i)
			}
		}
		return out, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, i := range want {
		if seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, i)
		if i < 0 || i >= len(nb.Cells) {
			return nil, fmt.Errorf("--cell %d: the notebook has %d cells (0-based indexes 0..%d)", i, len(nb.Cells), len(nb.Cells)-1)
		}
		if nb.Cells[i].Kind != notebook.Code {
			return nil, fmt.Errorf("--cell %d: that cell is not a code cell", i)
		}
	}
	sort.Ints(out)
	return out, nil
}

// replay runs the executed cells in execution-count order, as the user ran them. A cell
// that raises, or runs past the timeout and is interrupted, stops the replay: that is the
// notebook's doing, and judging goes on against what ran before. A kernel that dies or stops
// answering is the machine's: an ErrEnvironment error, and no verdict.
func replay(ctx context.Context, k *kernelclient.Launched, nb *notebook.Notebook, hist []*notebook.Cell, opts CheckOptions, rep *Report, recorded map[int]string) error {
	timeout := opts.ReplayTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	for n, c := range hist {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "premortem: replaying cell %d (run %d) [%d/%d]\n", nb.Index(c.ID)+1, c.ExecutionOrder, n+1, len(hist))
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		res, err := k.Execute(cctx, c.Text)
		timedOut := cctx.Err() == context.DeadlineExceeded
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			where := fmt.Sprintf("cell %d (run %d)", nb.Index(c.ID)+1, c.ExecutionOrder)
			if !timedOut {
				if why := kernelLost(k, true); why != "" {
					return fmt.Errorf("%w: the kernel %s while premortem replayed %s: no verdict stands (a kernel killed from outside or by the out-of-memory killer ends this way); run premortem check again, or check without a kernel with --static", ErrEnvironment, why, where)
				}
				return fmt.Errorf("%w: premortem lost contact with its kernel while it replayed %s (%v): no verdict stands; run premortem check again, or check without a kernel with --static", ErrEnvironment, where, err)
			}
			// Execute interrupted the kernel; judging goes on against what ran before, once
			// the kernel is idle again.
			if why := waitIdle(k, 10*time.Second); why != "" {
				return fmt.Errorf("%w: %s ran longer than %s (--timeout) and the kernel %s: no verdict stands; raise --timeout, or check without a kernel with --static", ErrEnvironment, where, timeout, why)
			}
			rep.ReplayError = &ReplayError{Index: nb.Index(c.ID), ExecutionCount: c.ExecutionOrder, Ename: "Timeout",
				Evalue: fmt.Sprintf("the cell ran longer than %s (--timeout) and was interrupted", timeout)}
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "premortem: %s\n", rep.ReplayError)
			}
			return nil
		}
		rep.Replayed++
		if res.Status == "error" && recorded[nb.Index(c.ID)] != "" && recorded[nb.Index(c.ID)] == res.Ename {
			// It failed the same way when the user ran it, and they went on from there:
			// so does the replay.
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "premortem: cell %d raised %s, as its saved output shows it did when you ran it; replay goes on\n", nb.Index(c.ID)+1, res.Ename)
			}
			continue
		}
		if res.Status == "error" {
			rep.ReplayError = &ReplayError{Index: nb.Index(c.ID), ExecutionCount: c.ExecutionOrder, Ename: res.Ename, Evalue: res.Evalue}
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "premortem: %s\n", rep.ReplayError)
			}
			return nil
		}
	}
	return nil
}

// discountReplayGaps takes back NameErrors about names that cells the replay never reached
// define: in the user's kernel those cells ran, so the crash is the replay's, not the
// cell's. The finding stays, as information, and the verdict falls to unknown when nothing
// else predicts a crash.
func discountReplayGaps(ctx context.Context, s *Session, nb *notebook.Notebook, v *CellVerdict, re *ReplayError) {
	res, err := s.Analyze(ctx, nb)
	if err != nil || res.Flow == nil {
		return
	}
	cell := nb.Cell(v.CellID)
	if cell == nil {
		return
	}
	lines := analysis.SplitLines(cell.Text)
	changed := false
	for i := range v.Findings {
		f := &v.Findings[i]
		if f.Exception != "NameError" || !predictsCrash(*f) || f.Range.Start.Line != f.Range.End.Line || f.Range.Start.Line >= len(lines) {
			continue
		}
		name := notebook.SliceUTF16(lines[f.Range.Start.Line], f.Range.Start.Character, f.Range.End.Character)
		for _, d := range res.Flow.Definitions(name) {
			if d.ExecutionOrder >= re.ExecutionCount {
				f.Severity = finding.SeverityInfo
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s is defined by cell %d (run %d), which the replay did not get to run", name, d.Index+1, d.ExecutionOrder))
				changed = true
				break
			}
		}
	}
	if !changed {
		return
	}
	sortFindings(v.Findings)
	for _, f := range v.Findings {
		if predictsCrash(f) {
			return
		}
	}
	if v.Verdict == VerdictCrash {
		v.Verdict, v.Confidence = VerdictUnknown, 0.5
		v.Reason = "the only crash predicted is a NameError that comes from the stopped replay, not from the cell"
	}
}

// recordedErrors returns, by cell index, the exception name of the error output a cell
// saved from the user's own run ("" for none). Files that are not nbformat JSON give an
// empty map: the replay then stops at any error, as it would without this knowledge.
func recordedErrors(raw []byte) map[int]string {
	var doc struct {
		Cells []struct {
			Outputs []struct {
				OutputType string `json:"output_type"`
				Ename      string `json:"ename"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	out := map[int]string{}
	for i, c := range doc.Cells {
		for _, o := range c.Outputs {
			if o.OutputType == "error" && o.Ename != "" {
				out[i] = o.Ename
			}
		}
	}
	return out
}

// isPython reports whether the notebook's language is Python (or unknown, which for .ipynb
// almost always means Python).
func isPython(nb *notebook.Notebook) bool {
	l := strings.ToLower(nb.Language())
	return l == "" || l == "python"
}

// kernelLost says how premortem's kernel was lost ("died (signal: killed)", "stopped
// answering"), "" while it is alive. suspect (a request to it just failed) waits up to
// kernelLostWait for a death to become certain: the failed request can come before the
// process is reaped or the heartbeat given up.
func kernelLost(k *kernelclient.Launched, suspect bool) string {
	deadline := time.Now()
	if suspect {
		deadline = deadline.Add(kernelLostWait)
	}
	for {
		select {
		case <-k.Exited():
			return "died (" + k.ExitState() + ")"
		default:
		}
		if k.State() == kernelclient.StateDead {
			// The heartbeat went unanswered; the process may follow it out.
			select {
			case <-k.Exited():
				return "died (" + k.ExitState() + ")"
			case <-time.After(200 * time.Millisecond):
			}
			return "stopped answering (its heartbeat is lost)"
		}
		if !time.Now().Before(deadline) {
			return ""
		}
		select {
		case <-k.Exited():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitIdle waits for the kernel to finish what it runs after an interrupt; it says what went
// wrong ("was still busy 10s after the interrupt", "died (...)"), "" once the kernel answers.
// The client's state cannot tell: it forgets the busy status of an execute it abandoned, so
// a silent request stands in line behind whatever still runs.
func waitIdle(k *kernelclient.Launched, max time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), max)
	defer cancel()
	_, err := k.WhoAmI(ctx)
	if why := kernelLost(k, err != nil && ctx.Err() == nil); why != "" {
		return why
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Sprintf("was still busy %s after the interrupt", max)
	}
	return ""
}

// kernelFailed reports whether judging the cell met a failed kernel request.
func kernelFailed(v *CellVerdict) bool { return v != nil && v.KernelErr != nil }
