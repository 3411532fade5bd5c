package analysis

import "github.com/premortem/premortem/finding"

// The findings model lives in package finding, a leaf package every layer can import.
// These aliases keep the callers written before it compiling; new code should use package
// finding directly.

// Source names the layer that produced a finding. New code should use finding.Source.
type Source = finding.Source

// Severity of a finding. New code should use finding.Severity.
type Severity = finding.Severity

// Position is a place in one cell. New code should use finding.Position.
type Position = finding.Position

// Range is a half-open span in one cell. New code should use finding.Range.
type Range = finding.Range

// Edit replaces a range in a cell. New code should use finding.Edit.
type Edit = finding.Edit

// Fix is an edit the user may apply. New code should use finding.Fix.
type Fix = finding.Fix

// Finding is one predicted problem in one cell. New code should use finding.Finding.
type Finding = finding.Finding

// The four layers, cheapest first. New code should use the finding.Source* constants.
const (
	SourceStatic = finding.SourceStatic
	SourceRules  = finding.SourceRules
	SourceShadow = finding.SourceShadow
	SourceLLM    = finding.SourceLLM
)

// Severities, as in LSP. New code should use the finding.Severity* constants.
const (
	SeverityError   = finding.SeverityError
	SeverityWarning = finding.SeverityWarning
	SeverityInfo    = finding.SeverityInfo
	SeverityHint    = finding.SeverityHint
)
