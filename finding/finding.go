package finding

import "fmt"

// Source names the layer that produced a finding, so the user sees how sure it is.
type Source string

// The four layers, cheapest first.
const (
	SourceStatic Source = "static"
	SourceRules  Source = "rules"
	SourceShadow Source = "shadow"
	SourceLLM    Source = "llm"
)

// Severity of a finding. Error means the cell will certainly crash.
type Severity string

// Severities, as in LSP.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
	SeverityHint    Severity = "hint"
)

// Position is a place in one cell: 0-based line and 0-based UTF-16 code unit column, as
// LSP counts. The JSON contract of `premortem check` is 1-based; convert at the edge.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span in one cell.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Contains reports whether p lies within r (end inclusive, so a cursor right after a name
// still hovers it).
func (r Range) Contains(p Position) bool {
	return !p.Before(r.Start) && !r.End.Before(p)
}

// Before reports whether p comes strictly before q.
func (p Position) Before(q Position) bool {
	return p.Line < q.Line || (p.Line == q.Line && p.Character < q.Character)
}

// Edit replaces Range in a cell with NewText.
type Edit struct {
	// Cell is the key (notebook.Cell.ID) of the cell the edit applies to; empty means the
	// finding's own cell. A fix edits an earlier cell when the root cause is there (the
	// class whose Linear layer has the wrong in_features).
	Cell    string `json:"cell,omitempty"`
	Range   Range  `json:"range"`
	NewText string `json:"new_text"`
}

// Fix is an edit the user may apply to the cell. premortem never applies it to the user's
// notebook or kernel by itself (`premortem fix` writes a notebook only when asked to).
type Fix struct {
	Title string `json:"title"`
	Edits []Edit `json:"edits"`
	// Preferred marks the fix an editor offers first (LSP isPreferred).
	Preferred bool `json:"preferred,omitempty"`
	// Verified is true when the edited cell ran to its end without an exception in a
	// forked copy of the kernel, against the same state (judge.VerifyFixes). Only a full
	// run counts: a run cut short (fast dev run) never verifies a fix.
	Verified bool `json:"verified,omitempty"`
}

// Finding is one predicted problem in one cell.
type Finding struct {
	// Cell is the key of the cell the finding is about (notebook.Cell.ID).
	Cell     string   `json:"cell"`
	Source   Source   `json:"source"`
	Severity Severity `json:"severity"`
	// Code is a stable short identifier ("undefined-name", "missing-column"): one of the
	// codes registered in codes.go, or a shadow run's exception in kebab case (ShadowCodes).
	Code string `json:"code"`
	// Exception is the Python exception the cell would raise ("KeyError"), if any.
	Exception string `json:"exception,omitempty"`
	Message   string `json:"message"`
	Range     Range  `json:"range"`
	// Evidence lists the facts the finding rests on, in words a user can check:
	// "df: DataFrame 891x11, columns [...]", "x defined in cell 4, which has not run".
	Evidence []string `json:"evidence,omitempty"`
	Fixes    []Fix    `json:"fixes,omitempty"`
	// Confidence in [0,1] that the cell crashes because of this finding.
	Confidence float64 `json:"confidence,omitempty"`
	// Explanation is a longer diagnosis (LLM layer), Markdown.
	Explanation string `json:"explanation,omitempty"`
	// Related are other places the finding is about: the line of an earlier cell whose
	// code raised the exception (a forward or helper it defines).
	Related []Related `json:"related,omitempty"`
	// Certain is true for a crash certain by construction: the rule concluded it from facts
	// the inspection saw whole (a frame's complete columns, the kernel's namespace, None),
	// about a state nothing in the cell changed before the line, by an operation whose
	// failure Python or the library defines exactly. A clean shadow run can never disprove
	// it, so an editor shows it at once; a finding that rests on introspection of a user or
	// library class or on a model of a library call waits for the shadow run when one is
	// coming (judge.Awaits). Not part of check's JSON contract.
	Certain bool `json:"-"`
}

// Digest identifies a finding across answers about the same cell text: its layer, code and
// range (an editor matches a published diagnostic to a later code action request by it, the
// verified fixes to the merged findings).
func (f Finding) Digest() string {
	return fmt.Sprintf("%s/%s/%d:%d-%d:%d", f.Source, f.Code, f.Range.Start.Line, f.Range.Start.Character, f.Range.End.Line, f.Range.End.Character)
}

// Related is a place in another cell that a finding points at (LSP relatedInformation).
type Related struct {
	// Cell is the key of the cell (notebook.Cell.ID), Range the place in it.
	Cell    string `json:"cell"`
	Range   Range  `json:"range"`
	Message string `json:"message"`
}
