package judge

import (
	"context"
	"errors"
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// Judge runs the layers for cells of one notebook against one kernel.
type Judge struct {
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
	Findings   []finding.Finding
}

// Cell judges one cell with every enabled layer and merges the answers: the pipeline
// (pipeline.go) run for that cell alone over the notebook's Session, as `premortem check`
// judges each target.
func (j *Judge) Cell(ctx context.Context, s *Session, nb *notebook.Notebook, cellID string) (*CellVerdict, error) {
	p := Pass{Notebook: nb, Session: s, Rules: []string{cellID}, Focus: cellID}
	if j.OnProvisional != nil {
		p.Publish = func(a Answer) {
			if a.Layer == LayerShadow && a.Provisional {
				j.OnProvisional(a.Cell, a.Shadow)
			}
		}
	}
	return j.Run(ctx, p)
}

// RuntimeFindings inspects the names the cell needs in the kernel and runs the rules: the
// pipeline's rules layer alone, over the static result res, in the notebook's Session.
func (j *Judge) RuntimeFindings(ctx context.Context, s *Session, nb *notebook.Notebook, res *analysis.Result, cellID string) (*Runtime, error) {
	if res == nil || res.Facts[cellID] == nil || j.Kernel == nil {
		return nil, errors.New("no kernel or no facts for the cell")
	}
	var rt *Runtime
	var aerr error
	o := j.Options
	o.Rules = true
	rj := *j
	rj.Options = o
	_, err := rj.Run(ctx, Pass{Notebook: nb, Session: s, Static: res, Rules: []string{cellID}, Only: LayerRules,
		Publish: func(a Answer) {
			if a.Layer == LayerRules && a.Cell == cellID {
				rt, aerr = &Runtime{Inspection: a.Inspection, Findings: a.Findings}, a.Err
			}
		}})
	switch {
	case err != nil:
		return nil, err
	case aerr != nil:
		return nil, aerr
	case rt == nil:
		return nil, errors.New("the rules did not answer for the cell")
	}
	return rt, nil
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

// LLMInput builds the LLM layer's input for a cell: the executed history in execution
// order, the cells the target depends on, the runtime facts and the evidence.
func LLMInput(nb *notebook.Notebook, res *analysis.Result, cellID string, insp *facts.Inspection, evidence []finding.Finding) llm.Input {
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

// Explain asks the LLM for a longer diagnosis of the first of a cell's findings (Markdown),
// from the same input the LLM layer predicts with: the executed history, the cell's
// dependencies, the runtime facts and every finding as evidence.
func Explain(ctx context.Context, client *LLMClient, nb *notebook.Notebook, res *analysis.Result, cellID string, insp *facts.Inspection, fs []finding.Finding) (string, error) {
	if len(fs) == 0 {
		return "", errors.New("explain: no finding to explain")
	}
	return client.Explain(ctx, LLMInput(nb, res, cellID, insp, fs), fs[0]) // its errors name the endpoint
}

// LLMConfig is the LLM layer's configuration (endpoint, model, limits), re-exported so that
// a caller configures every layer through judge.
type LLMConfig = llm.Config

// LLMClient is a configured LLM endpoint (Judge.LLM).
type LLMClient = llm.Client

// NewLLM builds the LLM layer's client for cfg.
func NewLLM(cfg LLMConfig) (*LLMClient, error) { return llm.New(cfg) }
