package judge

import (
	"context"
	"errors"
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// Judge runs the layers for cells of one notebook against one kernel.
type Judge struct {
	// Analyzer caches per-cell facts between calls.
	Analyzer *analysis.Analyzer
	// Kernel is the kernel whose state the cells will run against; nil for static checks.
	Kernel kernelclient.Kernel
	// LLM is the configured LLM client; nil when no endpoint is configured.
	LLM     *llm.Client
	Options Options
	// OnProvisional, when set, is told of a cell's provisional shadow answer while its full
	// run goes on in the background (`premortem check` prints progress with it).
	OnProvisional func(cellID string, r *facts.ShadowResult)
}

// Runtime is what the runtime layer learned about one cell.
type Runtime struct {
	Inspection *facts.Inspection
	Findings   []analysis.Finding
}

// Cell judges one cell with every enabled layer and merges the answers.
func (j *Judge) Cell(ctx context.Context, nb *notebook.Notebook, cellID string) (*CellVerdict, error) {
	idx := nb.Index(cellID)
	var err error
	if idx < 0 {
		return nil, fmt.Errorf("judge: no cell %q in %s", cellID, nb.URI)
	}
	cell := nb.Cells[idx]
	var res *analysis.Result
	if perr := safely("static analysis", func() { res, err = j.Analyzer.Analyze(ctx, nb, analysis.Options{}) }); perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
	}
	var l Layers
	cf := res.Facts[cellID]

	var insp *facts.Inspection
	if j.Kernel != nil && j.Options.Rules && cf != nil {
		rt, err := j.RuntimeFindings(ctx, nb, res, cellID)
		switch {
		case err == nil:
			insp = rt.Inspection
			l.Rules = rt.Findings
			l.RuntimeChecked = true
			// Knowing the kernel's namespace makes the static layer's NameErrors certain
			// and removes those the kernel disproves.
			if insp.Namespace != nil {
				var res2 *analysis.Result
				var err2 error
				if safely("static analysis", func() { res2, err2 = j.Analyzer.Analyze(ctx, nb, analysis.Options{Namespace: set(insp.Namespace)}) }) == nil && err2 == nil {
					res = res2
				}
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			l.Notes = append(l.Notes, "runtime facts unavailable: "+err.Error())
		}
	}
	l.Static = res.Findings[cellID]

	switch {
	case j.Kernel == nil:
		l.NoShadow = "no kernel, so no shadow run"
	case j.Options.Shadow == ShadowOff || j.Options.Shadow == "":
		l.NoShadow = "shadow runs are off"
	}
	if j.Kernel != nil && j.Options.Shadow != ShadowOff && j.Options.Shadow != "" {
		var early func(*facts.ShadowResult)
		if j.OnProvisional != nil {
			early = func(r *facts.ShadowResult) { j.OnProvisional(cellID, r) }
		}
		r, err := j.ShadowRunStaged(ctx, cell.Text, cf, early)
		switch {
		case err == nil:
			l.Shadow = r
			var fs []analysis.Finding
			var notes []string
			if perr := safely("shadow findings", func() { fs, notes = ShadowFindings(cellID, cell.Text, cf, r) }); perr != nil {
				notes = append(notes, perr.Error())
			}
			l.ShadowFindings = fs
			l.Notes = append(l.Notes, notes...)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			l.NoShadow = "the shadow run could not run (" + err.Error() + ")"
			l.Notes = append(l.Notes, "shadow run failed: "+err.Error())
		}
	}

	if j.LLM != nil {
		fs, err := j.LLMFindings(ctx, nb, res, cellID, insp, concat(l.Static, l.Rules, l.ShadowFindings))
		switch {
		case err == nil:
			l.LLM = fs
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			l.Notes = append(l.Notes, "LLM unavailable: "+err.Error())
		}
	}
	// ok needs a clean, unshortened shadow run (Merge): a layer that found nothing has not
	// proven that nothing is there.
	v := Merge(cellID, idx, l)
	if v.Verdict == VerdictCrash {
		// Repairs for the predicted crashes, each proven in a copy of the kernel (verify.go).
		var fs []analysis.Finding
		var err error
		if perr := safely("fix verification", func() {
			fs, err = j.VerifyFixes(ctx, VerifyRequest{Notebook: nb, Result: res, CellID: cellID, Findings: v.Findings, Shadow: l.Shadow, Inspection: insp})
		}); perr != nil {
			fs, err = v.Findings, perr
		}
		v.Findings = fs
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			v.Notes = append(v.Notes, "fix verification stopped: "+err.Error())
		}
	}
	return v, nil
}

// RuntimeFindings inspects the names the cell needs in the kernel and runs the rules.
func (j *Judge) RuntimeFindings(ctx context.Context, nb *notebook.Notebook, res *analysis.Result, cellID string) (*Runtime, error) {
	cf := res.Facts[cellID]
	if cf == nil || j.Kernel == nil {
		return nil, errors.New("no kernel or no facts for the cell")
	}
	insp, err := j.Kernel.Inspect(ctx, kernelclient.InspectRequest{
		Names:     rules.Wanted(cf),
		Budget:    j.Options.inspectBudget(),
		Namespace: true,
	})
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	env := &rules.Env{
		Values:         insp.Values,
		Namespace:      set(insp.Namespace),
		Imported:       set(insp.Imported),
		ExecutionCount: insp.ExecutionCount,
		Cell:           nb.Index(cellID),
		HasCell:        true,
	}
	if res.Flow != nil {
		env.LastDefiner = func(name string) (int, int, bool) {
			d, ok := res.Flow.LastDefinition(name)
			return d.Index, d.ExecutionOrder, ok
		}
	}
	var fs []analysis.Finding
	if err := safely("runtime rules", func() { fs = rules.Check(cellID, cf, env) }); err != nil {
		return nil, err
	}
	return &Runtime{Inspection: insp, Findings: fs}, nil
}

// safely runs one layer's code and turns a panic into an error: a bug in one rule must cost
// the user that layer's answer for this cell, not the whole check.
func safely(layer string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in %s: %v (please report it with the cell)", layer, r)
		}
	}()
	f()
	return nil
}

// LLMFindings asks the LLM about the cell, giving it the executed cells the cell depends on,
// the runtime facts and the other layers' findings as evidence.
func (j *Judge) LLMFindings(ctx context.Context, nb *notebook.Notebook, res *analysis.Result, cellID string, insp *facts.Inspection, evidence []analysis.Finding) ([]analysis.Finding, error) {
	in := LLMInput(nb, res, cellID, insp, evidence)
	var fs []analysis.Finding
	var err error
	perr := safely("LLM layer", func() {
		v, perr := j.LLM.Predict(ctx, in)
		if perr != nil {
			err = perr
			return
		}
		fs = v.Findings(cellID, nb.Cell(cellID).Text)
	})
	if perr != nil {
		return nil, perr
	}
	return fs, err
}

// LLMInput builds the LLM layer's input for a cell: the executed history in execution
// order, the cells the target depends on, the runtime facts and the evidence.
func LLMInput(nb *notebook.Notebook, res *analysis.Result, cellID string, insp *facts.Inspection, evidence []analysis.Finding) llm.Input {
	var in llm.Input
	pos := map[string]int{}
	for _, c := range nb.History() {
		if c.ID == cellID {
			continue
		}
		pos[c.ID] = len(in.Executed)
		in.Executed = append(in.Executed, llm.CellText{Index: nb.Index(c.ID), ExecutionOrder: c.ExecutionOrder, Text: c.Text})
	}
	target := nb.Cell(cellID)
	in.Target = llm.CellText{Index: nb.Index(cellID), ExecutionOrder: target.ExecutionOrder, Text: target.Text}
	if res != nil && res.Flow != nil {
		deps := res.Flow.Dependencies(cellID)
		in.Dependencies = []int{}
		for _, id := range deps {
			if p, ok := pos[id]; ok {
				in.Dependencies = append(in.Dependencies, p)
			}
		}
	}
	if insp != nil {
		in.Facts = insp.Values
	}
	in.Evidence = evidence
	return in
}

func set(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
