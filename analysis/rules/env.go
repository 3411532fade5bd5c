// Package rules holds premortem's deterministic, runtime-aware crash rules. Given one cell's
// facts (analysis.CellFacts, with its statement tree) and the facts the kernel inspector
// reported for the names the cell reads (package facts), Check walks the cell's statements in
// order, propagates what is certain through simple statements (drop, get_dummies,
// train_test_split, fit, reshape, tensor conversions, module calls...) and reports the crashes
// the facts make certain (severity error) or very likely (warning), each with the exception,
// the exact range, the evidence and, where one is unambiguous, a quick fix.
//
// Rules never guess: an unknown fact keeps a rule silent. Each library family has a file
// named after it (pandas.go, sklearn.go, numpy.go, torch.go, python.go, order.go,
// plotting.go), split into family_part.go files when it grows (pandas_methods.go,
// sklearn_input.go, torch_modules.go...). The within-cell abstract state they share is in
// propagate.go (the checker and statements), assign.go (bindings and assignments),
// visit.go (expressions), calls.go and callinfo.go (calls), value.go (what is known of a
// value); check.go reports findings and renders evidence. Every finding code is a
// registered constant of package finding (finding/codes.go), documented in docs/rules.md.
package rules

import (
	"github.com/premortem/premortem/facts"
)

// Env is what the kernel told us before the cell runs.
type Env struct {
	// Values are the inspected facts by the name or attribute chain asked for ("df",
	// "model.predict").
	Values map[string]facts.Value
	// Namespace is the kernel's user namespace; nil means unknown (then no NameError is
	// certain).
	Namespace map[string]bool
	// Imported lists the top-level modules loaded in the kernel.
	Imported map[string]bool
	// ExecutionCount is the kernel's execution count when the facts were taken ("as of run
	// N").
	ExecutionCount int
	// LastDefiner, when set, says which cell (0-based index) last bound name and at which
	// execution count, for notebook-order evidence.
	LastDefiner func(name string) (cellIndex int, executionOrder int, ok bool)
	// Cell is the 0-based index of the checked cell in the notebook, -1 when unknown; rules
	// read it only when HasCell is true (so an Env that leaves both unset never places the
	// cell at index 0). With LastDefiner it tells a name last bound by a cell below this one
	// (run later, so the value is not the one this cell was written against).
	Cell    int
	HasCell bool
}

// value returns the kernel facts of name (a name or chain), and whether the inspector
// reported it.
func (e *Env) value(name string) (facts.Value, bool) {
	if e == nil || e.Values == nil {
		return facts.Value{}, false
	}
	v, ok := e.Values[name]
	return v, ok
}

// asOf says when kernel facts were taken, for evidence lines: "as of run N", or "" when
// nothing has run yet (the caller then leaves the remark out).
func (e *Env) asOf() string {
	if e == nil || e.ExecutionCount <= 0 {
		return ""
	}
	return "as of run " + itoa(e.ExecutionCount)
}

// paren renders s as " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// spaced renders s as " s", or "" for an empty s.
func spaced(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}
