// Package finding is the findings model every layer of premortem reports in — Finding,
// Fix, Edit, Range, Position, Severity, Source — and the registry of finding codes
// (codes.go): each code a layer may emit is declared there once, with the exceptions it
// predicts, the layers that emit it, a one-line summary and a paragraph of documentation.
// docs/rules.md is generated from the registry (go generate ./finding).
//
// The package imports nothing of the project, so any package — analysis, the rules,
// judge, llm, lsp, the output formats — can depend on it without depending on each other.
// Package analysis still re-exports these types as aliases for the callers written before
// this package existed.
package finding
