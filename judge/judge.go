// Package judge decides whether a notebook cell will crash by running premortem's layers in
// order, cheapest first: static findings (analysis), runtime rules (analysis/rules over facts
// from the kernel inspector), a shadow run in a forked kernel, and the LLM. It merges their
// findings into one verdict per cell. Both `premortem check` and the language server run the
// layers through its one pipeline, Judge.Run (pipeline.go), so a cell gets the same answer
// in the terminal and in the editor.
package judge

import "github.com/premortem/premortem/finding"

// Verdicts of a cell, as in the `premortem check` JSON contract.
const (
	VerdictCrash   = "crash"
	VerdictOK      = "ok"
	VerdictUnknown = "unknown"
)

// CellVerdict is the judgement of one target cell.
type CellVerdict struct {
	// Index is the 0-based position of the cell in the notebook's cells array.
	Index int
	// CellID is notebook.Cell.ID.
	CellID string
	// Verdict is crash, ok or unknown.
	Verdict string
	// Confidence in the verdict, in [0,1].
	Confidence float64
	// Findings from every layer, strongest first (shadow > rules > static > llm on ties).
	Findings []finding.Finding
	// Reason says why the verdict is unknown ("the shadow run timed out after 3 s"); empty
	// for crash and ok.
	Reason string
	// Notes are layer messages for the user that are not findings ("shadow run skipped:
	// cell writes files").
	Notes []string
	// KernelErr is the first kernel request of this cell's judgement that failed without
	// stopping the pass (inspection or the shadow run): the caller that owns the kernel
	// asks whether it was lost. Nil when every request was answered.
	KernelErr error `json:"-"`
}
