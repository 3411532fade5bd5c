package repair

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Parameters made without requires_grad: a hand-written model's weights, w = torch.zeros(3),
// updated from w.grad or handed to an optimizer, and a backward() that finds nothing to
// differentiate ("element 0 of tensors does not require grad and does not have a
// grad_fn"). The tensors the cell treats as parameters (their .grad read, or listed to a
// torch.optim optimizer, here or in the history) are made where they are bound by a torch
// factory, all at once: requires_grad=True.

func init() {
	register(family{name: "grad-leaf", gen: gradLeafGen})
}

func gradLeafGen(in *Input) []Candidate {
	if in.exception() != "RuntimeError" || !strings.Contains(in.message(), "does not require grad") {
		return nil
	}
	params := map[string]bool{}
	cells := []*analysis.CellFacts{in.Facts}
	for i := range in.History {
		if f := in.History[i].Facts; f != nil {
			cells = append(cells, f)
		} else {
			cells = append(cells, analysis.ParseCell(in.History[i].Text))
		}
	}
	for _, cf := range cells {
		if cf == nil {
			continue
		}
		for _, a := range cf.Attrs {
			if len(a.Parts) >= 2 && a.Parts[1] == "grad" {
				params[a.Parts[0]] = true
			}
		}
		for _, c := range cf.Calls {
			if !strings.Contains(c.Callee, "optim.") || c.Expr == nil || len(c.Expr.Args) == 0 || c.Expr.Args[0].Kind != analysis.ExprList {
				continue
			}
			for _, a := range c.Expr.Args[0].Args {
				if a.Kind == analysis.ExprName {
					params[a.Name] = true
				}
			}
		}
	}
	names := make([]string, 0, len(params))
	for n := range params {
		if v, ok := in.value(n); ok && v.RequiresGrad != nil && *v.RequiresGrad {
			continue // already a leaf that requires grad
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var edits []finding.Edit
	var made []string
	for _, n := range names {
		b, ok := in.assignedAbove(n)
		if !ok || b.value.Kind != analysis.ExprCall || !strings.HasPrefix(calleeText(b.value), "torch.") {
			continue
		}
		has := false
		for _, k := range b.value.Keywords {
			has = has || k.Name == "requires_grad"
		}
		if has {
			continue
		}
		p := b.value.Range.End
		p.Character-- // before the closing parenthesis
		text := ", requires_grad=True"
		if len(b.value.Args)+len(b.value.Keywords) == 0 {
			text = "requires_grad=True"
		}
		edits = append(edits, finding.Edit{Cell: b.cell, Range: finding.Range{Start: p, End: p}, NewText: text})
		made = append(made, n)
	}
	if len(edits) == 0 {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Make %s parameters: requires_grad=True where they are made", strings.Join(made, ", ")), Edits: edits},
		Keeps: fmt.Sprintf("the same starting values; %s now get gradients from backward(), as the updates that read .grad need", strings.Join(made, ", ")),
	}}
}
