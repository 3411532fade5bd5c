package llm

import (
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// CellText is one cell's source as the LLM sees it.
type CellText struct {
	// Index is the cell's 0-based position in the notebook.
	Index int
	// ExecutionOrder is the kernel execution count the cell ran with (0 for the target).
	ExecutionOrder int
	Text           string
}

// Input is everything one prediction is about.
type Input struct {
	// Executed lists every executed cell, in execution order.
	Executed []CellText
	// Target is the cell to judge.
	Target CellText
	// Facts are the runtime facts of the names the target uses, by name ("df", "df.Age").
	// Nil in the code-only setting.
	Facts map[string]facts.Value
	// Evidence are findings of the static, rules and shadow layers for the target; the LLM
	// then explains and fixes rather than guesses. LLM findings are ignored.
	Evidence []finding.Finding
	// Dependencies are indexes into Executed of the cells the target depends on
	// (transitively), from the dataflow; nil means unknown and sends every executed cell.
	// SliceDependencies computes them statement by statement from analysis's facts.
	Dependencies []int
}
