package judge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is the pipeline: the one place where the layers run, for `premortem check` (one
// target cell at a time, Judge.Cell) and for the editor (one pass per edit or run, package
// lsp). Cheapest first: the static analysis; one batched inspection of the names the cells
// need, and the runtime rules over it; the shadow run of the focus cell (the staged fast dev
// run, fastdev.go); the LLM; then fix verification of the focus cell's predicted crashes
// (verify.go), last because it runs the LLM's fixes too and costs one shadow run per
// candidate. Each layer's answer is kept in the pass's Session (session.go), which also says
// what earlier passes answered that still holds, and then goes to Pass.Publish; the caller
// decides what to show (an editor holds back what Awaits says while the focus cell's
// shadow run is coming, so a clean run never withdraws a squiggle the user already saw).
// What only an editor has (the shadow gate, a busy kernel, progress) comes in through Pass,
// so the two callers cannot drift apart.
//
// When the LLM is asked. Only when no shadow run already answered: a run that crashed, or
// one that finished without an exception and without shortened loops, is the real outcome
// in a copy of the kernel, and an LLM call (slow, and possibly paid) cannot improve on it.
// The answer looked at is the one at hand when the LLM's turn comes: the final one, or the
// provisional one the fast dev run gave within the budget while the full run goes on (the
// LLM then works beside the full run instead of after it).

// Layer names the layer a pipeline answer comes from.
type Layer string

// The layers, in the order the pipeline runs them.
const (
	LayerStatic Layer = "static"
	LayerRules  Layer = "rules"
	LayerShadow Layer = "shadow"
	LayerLLM    Layer = "llm"
	LayerVerify Layer = "verify"
)

// Pass is one run of the pipeline over a notebook snapshot.
type Pass struct {
	// Notebook is the snapshot; it must not change while the pass runs.
	Notebook *notebook.Notebook
	// Static is the snapshot's static result; nil makes the pipeline analyse it (and publish
	// it as a LayerStatic answer).
	Static *analysis.Result
	// Rules are the cells whose runtime rules run. When the first one is Focus it is
	// inspected alone first (the user is looking at it), and the others together in one
	// batched inspection: a run in a long notebook costs two kernel round trips, not one per
	// cell. Cells without static facts are left out.
	Rules []string
	// Focus is the cell that gets the shadow run, the LLM and fix verification; "" for none.
	Focus string
	// Session holds what earlier passes answered; the pass reads the answers about Focus
	// that are still current from it (a layer whose answer is there is not asked again) and
	// stores its own there. Nil gives the pass a Session of its own.
	Session *Session
	// ExecCount is the kernel's execution count as the pass begins (the rules' inspection
	// may tell a newer one): answers are stored at it, and older ones are stale.
	ExecCount int
	// Force asks every layer again, even where the Session holds a current answer.
	Force bool
	// Epoch is the Session's kernel epoch the pass's kernel belongs to, read by the caller
	// together with the kernel (Session.Epoch under the lock that swaps kernels), so a pass
	// that took the old kernel just before a swap cannot store its answers in the new
	// epoch; 0 takes the epoch as the pass begins.
	Epoch int
	// epoch is the epoch the pass stores its answers in (set by Run).
	epoch int
	// Only, when set, runs that layer alone for Focus (the editor's shadowRun command runs
	// LayerShadow alone).
	Only Layer
	// Publish, when set, receives each answer as it arrives, from the goroutine that ran the
	// layer (the shadow run's answers come from their own goroutine).
	Publish func(Answer)
	// Busy, when set, is asked before each kernel request group (inspection, verification):
	// true stops the pass with kernelclient.ErrBusy, sending nothing (an editor resumes on
	// the kernel's next idle event).
	Busy func() bool
	// Gate, when set, is taken around every shadow child the pass forks (the shadow run,
	// its background full run, fix verification): an editor orders its automatic runs after
	// the user's explicit ones with it. ok false skips the layer for this pass.
	Gate func(ctx context.Context) (gctx context.Context, release func(), ok bool)
	// Progress, when set, is told that slow work begins (the background full shadow run,
	// the LLM call, fix verification); the returned function reports a step (msg) or the
	// end (end true), and is called with end true exactly once.
	Progress func(title string) func(msg string, end bool)
}

// Answer is one layer's answer about one cell.
type Answer struct {
	Layer Layer
	Cell  string
	// Findings are the layer's findings on the cell (LayerVerify: every finding of the
	// cell, with the fixes proven so far).
	Findings []finding.Finding
	// Notes are messages for the user that are not findings.
	Notes []string
	// Err is why the layer could not answer; Findings may still hold a partial answer.
	Err error
	// Pending marks an answer that more answers of the same batch follow at once (the
	// rules of a batched inspection): a caller may show them at the last one.
	Pending bool
	// Static is the static result: LayerStatic's, and on LayerRules the re-analysis made
	// with the kernel's namespace (nil when it did not change).
	Static *analysis.Result
	// Inspection is the kernel facts the rules ran on (LayerRules).
	Inspection *facts.Inspection
	// Shadow is the shadow run's outcome (LayerShadow); Provisional marks the fast answer
	// published at the budget while the full run goes on.
	Shadow      *facts.ShadowResult
	Provisional bool
	// Outcome, Tried and Total describe one candidate fix's run (LayerVerify, not Final).
	Outcome      Outcome
	Tried, Total int
	// Final marks the layer's complete answer for this cell text and kernel state (LayerLLM:
	// the model answered; LayerVerify: every candidate ran). A caller may cache it.
	Final bool
}

// focusState is what the pass knows about its focus cell: its own answers, and the
// Session's current ones (Session.seed). The shadow goroutine writes it too, hence the
// mutex.
type focusState struct {
	mu    sync.Mutex
	cell  *notebook.Cell
	index int
	// l is what the layers said so far, as Merge reads it; l.Shadow is this pass's latest
	// shadow answer (a provisional one too), and shadowFinal says it is the final one.
	l           Layers
	inspection  *facts.Inspection
	shadowFinal bool
	llmDone     bool
	kernelErr   error
	// verified means fix verification ran to its end for this text and kernel state;
	// outcomes are the candidates an interrupted verification already ran (by Outcome.Key).
	verified bool
	outcomes map[string]Outcome
}

// Run runs the pass's layers and returns the merged verdict of its focus cell (nil without
// one), its fixes verified. It stops at the first error that leaves no layer to ask: the
// context's, ErrStaleEpoch, or a kernel that is busy, dead, closed or restarted (an error
// wrapping the kernelclient error); other failures are Answer.Err and notes, and the pass
// goes on.
func (j *Judge) Run(ctx context.Context, p Pass) (*CellVerdict, error) {
	if p.Session == nil {
		p.Session = NewSession(nil)
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	v, err := j.run(ctx, p, stop)
	if errors.Is(context.Cause(ctx), ErrStaleEpoch) {
		return nil, ErrStaleEpoch
	}
	return v, err
}

func (j *Judge) run(ctx context.Context, p Pass, stop context.CancelCauseFunc) (*CellVerdict, error) {
	nb, sess := p.Notebook, p.Session
	p.epoch = p.Epoch
	if p.epoch == 0 {
		p.epoch = sess.Epoch()
	}
	epoch := p.epoch
	// Rules answers are stored at the count the pass began with (the inspection raises a
	// cell's own); the focus cell's other layers at the newest count its inspections told.
	var mu sync.Mutex
	focusExec := p.ExecCount
	publish := func(a Answer) {
		if c := nb.Cell(a.Cell); c != nil {
			mu.Lock()
			at := focusExec
			if a.Layer == LayerRules {
				at = p.ExecCount
				if a.Inspection != nil {
					focusExec = max(focusExec, a.Inspection.ExecutionCount)
				}
			}
			mu.Unlock()
			if !sess.keep(c, epoch, at, a) {
				stop(ErrStaleEpoch) // these answers are the old kernel's
				return
			}
		}
		if p.Publish != nil {
			p.Publish(a)
		}
	}
	res := p.Static
	if res == nil {
		var err error
		if perr := safely("static analysis", func() { res, err = sess.Analyze(ctx, nb) }); perr != nil {
			return nil, perr
		}
		if err != nil {
			return nil, err
		}
		publish(Answer{Layer: LayerStatic, Static: res})
	}
	var st *focusState
	if p.Focus != "" {
		idx := nb.Index(p.Focus)
		if idx < 0 {
			return nil, fmt.Errorf("judge: no cell %q in %s", p.Focus, nb.URI)
		}
		st = &focusState{cell: nb.Cells[idx], index: idx}
	}
	runs := func(l Layer) bool { return p.Only == "" || p.Only == l }

	if runs(LayerRules) && j.Kernel != nil && j.Options.Rules {
		var err error
		if res, err = j.rulesStage(ctx, p, res, st, publish); err != nil {
			return nil, err
		}
	}
	if st == nil {
		return nil, ctx.Err()
	}
	mu.Lock()
	at := focusExec
	mu.Unlock()
	sess.seed(st, at, p.Force, j.Options.Rules)

	wait := func() {}
	if runs(LayerShadow) {
		wait = j.shadowStage(ctx, p, res, st, publish)
	}
	if runs(LayerLLM) && j.LLM != nil {
		if err := j.llmStage(ctx, p, res, st, publish); err != nil {
			wait()
			return nil, err
		}
	}
	// Verification runs the cell's candidate fixes against the shadow run's final answer,
	// so it waits for the background full run.
	wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st.mu.Lock()
	l := st.l
	l.Static, l.Notes = res.Findings[p.Focus], append([]string(nil), l.Notes...)
	if !st.shadowFinal {
		l.Shadow, l.ShadowFindings = nil, nil
	}
	insp, kerr := st.inspection, st.kernelErr
	st.mu.Unlock()
	v := Merge(p.Focus, st.index, l)
	v.KernelErr = kerr
	if runs(LayerVerify) && v.Verdict == VerdictCrash {
		if err := j.verifyStage(ctx, p, st, res, v, l.Shadow, insp, publish); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// rulesStage inspects the names the pass's rule cells need and runs the rules on each: the
// focus cell alone first when it leads the list, the rest in one batch. It returns the
// static result to go on with (re-analysed once the kernel's namespace is known).
func (j *Judge) rulesStage(ctx context.Context, p Pass, res *analysis.Result, st *focusState, publish func(Answer)) (*analysis.Result, error) {
	var cells []*notebook.Cell
	for _, id := range p.Rules {
		if c := p.Notebook.Cell(id); c != nil && res.Facts[id] != nil {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return res, nil
	}
	// The focus cell's inspection gets the editor's keystroke budget; a batch gets three
	// times as long, since it asks about many cells' names at once.
	rest := cells
	if cells[0].ID == p.Focus {
		var err error
		if res, err = j.inspectAndCheck(ctx, p, res, cells[:1], j.Options.inspectBudget(), st, publish); err != nil {
			return res, err
		}
		rest = cells[1:]
	}
	if len(rest) == 0 {
		return res, nil
	}
	return j.inspectAndCheck(ctx, p, res, rest, 3*j.Options.inspectBudget(), st, publish)
}

// kernelGone reports whether a kernel request failed in a way that leaves no layer to ask
// this pass: the kernel is busy with someone else's code, dead, detached or restarted.
func kernelGone(err error) bool {
	return errors.Is(err, kernelclient.ErrBusy) || errors.Is(err, kernelclient.ErrDead) ||
		errors.Is(err, kernelclient.ErrClosed) || errors.Is(err, kernelclient.ErrRestarted)
}

// inspectAndCheck takes one inspection of every name the cells need and runs the rules on
// each cell, then publishes one answer per cell.
func (j *Judge) inspectAndCheck(ctx context.Context, p Pass, res *analysis.Result, cells []*notebook.Cell, budget time.Duration, st *focusState, publish func(Answer)) (*analysis.Result, error) {
	if p.Busy != nil && p.Busy() {
		return res, fmt.Errorf("inspect: %w", kernelclient.ErrBusy)
	}
	seen := map[string]bool{}
	var names []string
	for _, c := range cells {
		for _, n := range rules.Wanted(res.Facts[c.ID]) {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	insp, err := j.Kernel.Inspect(ctx, kernelclient.InspectRequest{Names: names, Budget: budget, Namespace: true})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return res, ctx.Err()
	case kernelGone(err):
		return res, fmt.Errorf("inspect: %w", err)
	default:
		note := "runtime facts unavailable: inspect: " + err.Error()
		for i, c := range cells {
			if st != nil && c.ID == st.cell.ID {
				st.mu.Lock()
				st.l.Notes = append(st.l.Notes, note)
				st.kernelErr = cmp.Or(st.kernelErr, fmt.Errorf("inspect: %w", err))
				st.mu.Unlock()
			}
			publish(Answer{Layer: LayerRules, Cell: c.ID, Err: fmt.Errorf("inspect: %w", err), Notes: []string{note}, Pending: i < len(cells)-1})
		}
		return res, nil
	}
	env := rules.Env{
		Values:         insp.Values,
		Namespace:      NameSet(insp.Namespace),
		Imported:       NameSet(insp.Imported),
		ExecutionCount: insp.ExecutionCount,
	}
	if res.Flow != nil {
		flow := res.Flow
		env.LastDefiner = func(name string) (int, int, bool) {
			d, ok := flow.LastDefinition(name)
			return d.Index, d.ExecutionOrder, ok
		}
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		// Each cell gets its own copy: the notebook-order rules need to know where on the
		// page the checked cell sits.
		cellEnv := env
		cellEnv.Cell, cellEnv.HasCell = p.Notebook.Index(c.ID), true
		a := Answer{Layer: LayerRules, Cell: c.ID, Inspection: insp, Pending: i < len(cells)-1}
		if perr := safely("runtime rules", func() { a.Findings = rules.Check(c.ID, res.Facts[c.ID], &cellEnv) }); perr != nil {
			a.Err, a.Notes = perr, []string{"runtime facts unavailable: " + perr.Error()}
		}
		answers[i] = a
	}
	// Knowing the kernel's namespace makes the static layer's NameErrors certain and removes
	// those the kernel disproves.
	if p.Session.setNamespace(p.epoch, insp.Namespace) {
		var res2 *analysis.Result
		var err error
		if perr := safely("static analysis", func() { res2, err = p.Session.Analyze(ctx, p.Notebook) }); perr != nil {
			res2, err = nil, nil // the first analysis stands
		}
		switch {
		case ctx.Err() != nil:
			return res, ctx.Err()
		case err == nil && res2 != nil:
			res = res2
			answers[len(answers)-1].Static = res2
		}
	}
	for _, a := range answers {
		if st != nil && a.Cell == st.cell.ID {
			st.mu.Lock()
			if a.Err == nil {
				st.l.RuntimeChecked, st.inspection, st.l.Rules = true, insp, a.Findings
			} else {
				st.l.Notes = append(st.l.Notes, a.Notes...)
			}
			st.mu.Unlock()
		}
		publish(a)
	}
	return res, nil
}

// ErrSuperseded is the shadow layer's Answer.Err when the inspector killed the run's child
// because a newer shadow run started on the kernel: the result is not about the cell.
var ErrSuperseded = errors.New("cancelled by a newer shadow run")

// Superseded reports whether a shadow result is the inspector's answer for a child it
// killed because a newer run started.
func Superseded(r *facts.ShadowResult) bool {
	return r != nil && r.Status == facts.ShadowDied && strings.HasPrefix(r.Reason, "cancelled")
}

// shadowStage starts the focus cell's shadow run and returns once it has a first answer
// (the final one, or the provisional one at the budget); the full run goes on in a
// goroutine, and the returned function waits for it.
func (j *Judge) shadowStage(ctx context.Context, p Pass, res *analysis.Result, st *focusState, publish func(Answer)) (wait func()) {
	noop := func() {}
	switch {
	case j.Kernel == nil:
		st.l.NoShadow = "no kernel, so no shadow run"
		return noop
	case j.Options.Shadow == ShadowOff || j.Options.Shadow == "":
		st.l.NoShadow = "shadow runs are off"
		return noop
	case st.shadowFinal:
		return noop // a current final answer is known
	}
	sctx, release := ctx, func() {}
	if p.Gate != nil {
		g, rel, ok := p.Gate(ctx)
		if !ok {
			return noop
		}
		sctx, release = g, rel
	}
	cell := st.cell
	cf := res.Facts[cell.ID]
	first, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	answered := func() { once.Do(func() { close(first) }) }
	record := func(r *facts.ShadowResult, provisional bool) {
		var fs []finding.Finding
		var notes []string
		if perr := safely("shadow findings", func() {
			fs, notes = ShadowFindings(cell.ID, cell.Text, cf, r)
			pointAtSite(fs, r, historyCells(p.Notebook, res, cell.ID))
		}); perr != nil {
			notes = append(notes, perr.Error())
		}
		st.mu.Lock()
		st.l.Shadow, st.l.ShadowFindings, st.shadowFinal = r, fs, !provisional
		if !provisional {
			st.l.Notes = append(st.l.Notes, notes...)
		}
		st.mu.Unlock()
		publish(Answer{Layer: LayerShadow, Cell: cell.ID, Shadow: r, Findings: fs, Notes: notes, Provisional: provisional, Final: !provisional})
	}
	failed := func(err error) {
		st.mu.Lock()
		st.l.NoShadow = "the shadow run could not run (" + err.Error() + ")"
		st.l.Notes = append(st.l.Notes, "shadow run failed: "+err.Error())
		st.kernelErr = cmp.Or(st.kernelErr, fmt.Errorf("shadow run: %w", err))
		st.mu.Unlock()
		publish(Answer{Layer: LayerShadow, Cell: cell.ID, Err: err})
	}
	go func() {
		defer close(done)
		defer answered()
		defer release()
		var endProgress func(string, bool)
		early := func(r *facts.ShadowResult) {
			// The progress begins before the provisional answer shows, so a caller never
			// sees a provisional answer without knowing that a better one is coming.
			if p.Progress != nil {
				endProgress = p.Progress(fmt.Sprintf("premortem: full shadow run of cell %d goes on (up to %s)", st.index+1,
					max(j.Options.shadowFullTimeout(), j.Options.shadowTimeout())))
			}
			record(r, true)
			answered()
		}
		var r *facts.ShadowResult
		var err error
		if perr := safely("the shadow run", func() { r, err = j.ShadowRunStaged(sctx, cell.Text, cf, early) }); perr != nil {
			err = perr
		}
		if endProgress != nil {
			endProgress("", true)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			// The pass is over; Run returns its context's error.
		case err != nil:
			failed(err)
		case r == nil:
		case Superseded(r):
			publish(Answer{Layer: LayerShadow, Cell: cell.ID, Shadow: r, Err: ErrSuperseded})
		default:
			record(r, false)
		}
	}()
	<-first
	return func() { <-done }
}

// llmStage asks the LLM about the focus cell, unless the shadow run already answered (see
// the file comment) or the LLM's answer for this text and kernel state is known.
func (j *Judge) llmStage(ctx context.Context, p Pass, res *analysis.Result, st *focusState, publish func(Answer)) error {
	st.mu.Lock()
	r, done := st.l.Shadow, st.llmDone
	evidence := concat(res.Findings[p.Focus], st.l.Rules, st.l.ShadowFindings)
	insp := st.inspection
	st.mu.Unlock()
	if r != nil && (r.Status == facts.ShadowError || CleanShadow(r)) {
		return nil // the real run in a copy of the kernel answered (a shortened clean run that does not stand did not)
	}
	if done {
		return nil
	}
	end := func(string, bool) {}
	if p.Progress != nil {
		end = p.Progress("premortem: asking the LLM about the cell")
	}
	a := Answer{Layer: LayerLLM, Cell: p.Focus}
	in := LLMInput(p.Notebook, res, p.Focus, insp, evidence)
	perr := safely("LLM layer", func() {
		v, err := j.LLM.Predict(ctx, in)
		a.Err = err
		if v != nil {
			a.Final = true
			a.Findings = v.Findings(p.Focus, st.cell.Text)
			if v.Unknown {
				a.Notes = []string{"the LLM could not tell: " + v.Reason}
			}
		}
	})
	end("", true)
	if err := ctx.Err(); err != nil {
		return err
	}
	if perr != nil {
		a = Answer{Layer: LayerLLM, Cell: p.Focus, Err: perr}
	}
	st.mu.Lock()
	st.l.LLM, st.llmDone = a.Findings, a.Final
	if a.Err != nil {
		st.l.Notes = append(st.l.Notes, "LLM unavailable: "+a.Err.Error())
	}
	st.mu.Unlock()
	publish(a)
	return nil
}

// verifyStage proves candidate fixes for the focus cell's predicted crashes (VerifyFixes)
// and puts the result in v. Without a kernel or with the shadow layer off, the findings
// only gain the repair library's evidence (what the call needed, what it got).
func (j *Judge) verifyStage(ctx context.Context, p Pass, st *focusState, res *analysis.Result, v *CellVerdict, shadow *facts.ShadowResult, insp *facts.Inspection, publish func(Answer)) error {
	st.mu.Lock()
	verified, outcomes := st.verified, st.outcomes
	st.mu.Unlock()
	if verified {
		return nil
	}
	active := j.Kernel != nil && j.Options.Shadow != ShadowOff && j.Options.Shadow != ""
	vctx := ctx
	report := func(string, bool) {}
	if active {
		if p.Busy != nil && p.Busy() {
			return fmt.Errorf("verify fixes: %w", kernelclient.ErrBusy)
		}
		if p.Gate != nil {
			g, release, ok := p.Gate(ctx)
			if !ok {
				return nil
			}
			defer release()
			vctx = g
		}
		if p.Progress != nil {
			report = p.Progress("premortem: verifying fixes in a copy of the kernel")
			defer report("", true)
		}
	}
	req := VerifyRequest{Notebook: p.Notebook, Result: res, CellID: p.Focus, Findings: v.Findings, Shadow: shadow, Inspection: insp,
		Known: make(map[string]Outcome, len(outcomes)),
		OnOutcome: func(o Outcome, n, total int, now []finding.Finding) {
			publish(Answer{Layer: LayerVerify, Cell: p.Focus, Findings: now, Outcome: o, Tried: n, Total: total})
			report(fmt.Sprintf("%d of %d candidate fixes tried", n, total), false)
		}}
	for k, o := range outcomes {
		req.Known[k] = o
	}
	var out []finding.Finding
	var err error
	if perr := safely("fix verification", func() { out, err = j.VerifyFixes(vctx, req) }); perr != nil {
		out, err = v.Findings, perr
	}
	switch {
	case err == nil:
		v.Findings = out
		// Without shadow runs no candidate ran: the answer is not final, so a later pass
		// with them (the CLI's full judging after its rules-only one, an editor whose user
		// turned shadow runs on) still verifies.
		publish(Answer{Layer: LayerVerify, Cell: p.Focus, Findings: out, Final: active})
	case ctx.Err() != nil:
		return ctx.Err()
	case vctx.Err() != nil:
		// An explicit shadow run took the gate: the next pass resumes from the outcomes kept.
		return nil
	case errors.Is(err, kernelclient.ErrBusy):
		return fmt.Errorf("verify fixes: %w", err)
	default:
		v.Findings = out
		v.Notes = append(v.Notes, "fix verification stopped: "+err.Error())
		publish(Answer{Layer: LayerVerify, Cell: p.Focus, Findings: out, Err: err})
	}
	return nil
}

// NameSet turns a name list from the kernel into a set; nil stays nil (unknown).
func NameSet(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
