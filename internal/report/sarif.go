package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
)

// SARIF 2.1.0 shapes: only what code scanning reads.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool     `json:"tool"`
		Results    []sarifResult `json:"results"`
		ColumnKind string        `json:"columnKind"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		ShortDescription sarifMessage `json:"shortDescription"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID     string          `json:"ruleId"`
		RuleIndex  int             `json:"ruleIndex"`
		Level      string          `json:"level"`
		Message    sarifMessage    `json:"message"`
		Locations  []sarifLocation `json:"locations"`
		Fixes      []sarifFix      `json:"fixes,omitempty"`
		Properties map[string]any  `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
		EndLine     int `json:"endLine"`
		EndColumn   int `json:"endColumn"`
	}
	sarifLogical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
	sarifFix struct {
		Description     sarifMessage          `json:"description"`
		ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
		Properties      map[string]any        `json:"properties,omitempty"`
	}
	sarifArtifactChange struct {
		ArtifactLocation sarifArtifact      `json:"artifactLocation"`
		Replacements     []sarifReplacement `json:"replacements"`
	}
	sarifReplacement struct {
		DeletedRegion   sarifRegion  `json:"deletedRegion"`
		InsertedContent sarifMessage `json:"insertedContent"`
	}
)

// SARIF writes SARIF 2.1.0 for CI code scanning. A .ipynb is JSON, so regions point
// at the cell's source line inside that JSON file (where code scanning shows them); the
// cell and its 1-based line are in the message, the logical location and properties too,
// for tools that read them. A region that cannot be placed in the file is left out rather
// than guessed.
func SARIF(w io.Writer, rep *judge.Report, version string) error {
	loc := newIpynbLocator(rep)
	ruleIndex := map[string]int{}
	var rules []sarifRule
	codes := map[string]string{}
	for _, c := range rep.Cells {
		for _, f := range c.Findings {
			if _, ok := codes[f.Code]; !ok || codes[f.Code] == "" {
				codes[f.Code] = f.Exception
			}
		}
	}
	sorted := make([]string, 0, len(codes))
	for c := range codes {
		sorted = append(sorted, c)
	}
	sort.Strings(sorted)
	for i, c := range sorted {
		desc := "premortem finding " + c
		if e := codes[c]; e != "" {
			desc = fmt.Sprintf("the cell would raise %s (%s)", e, c)
		}
		ruleIndex[c] = i
		rules = append(rules, sarifRule{ID: c, ShortDescription: sarifMessage{Text: desc}})
	}
	unknownRule := -1
	for _, c := range rep.Cells {
		if c.Verdict == judge.VerdictUnknown && unknownRule < 0 {
			unknownRule = len(rules)
			rules = append(rules, sarifRule{ID: finding.OutcomeUnknown, ShortDescription: sarifMessage{Text: "no layer could tell whether the cell crashes"}})
		}
	}
	if rules == nil {
		rules = []sarifRule{}
	}
	results := []sarifResult{}
	for _, c := range rep.Cells {
		cellName := fmt.Sprintf("cell %d", c.Index+1)
		for _, f := range c.Findings {
			level := map[finding.Severity]string{finding.SeverityError: "error", finding.SeverityWarning: "warning"}[f.Severity]
			if level == "" {
				level = "note"
			}
			res := sarifResult{
				RuleID:    f.Code,
				RuleIndex: ruleIndex[f.Code],
				Level:     level,
				Message:   sarifMessage{Text: fmt.Sprintf("%s, line %d: %s", cellName, f.Range.Start.Line+1, f.Message)},
				Locations: []sarifLocation{{
					PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: rep.Notebook}, Region: loc.region(c.Index, f.Range)},
					LogicalLocations: []sarifLogical{{Name: cellName, FullyQualifiedName: fmt.Sprintf("%s/%s", rep.Notebook, cellName), Kind: "module"}},
				}},
				Properties: map[string]any{
					"cell": c.Index, "line": f.Range.Start.Line + 1, "column": f.Range.Start.Character + 1,
					"source": f.Source, "exception": f.Exception, "evidence": f.Evidence, "confidence": f.Confidence,
				},
			}
			res.Fixes = sarifFixes(rep, loc, c.Index, f)
			results = append(results, res)
		}
	}
	for _, c := range rep.Cells {
		if c.Verdict != judge.VerdictUnknown {
			continue
		}
		// A note, so CI sees that the cell was not proven either way (never an alarm).
		cellName := fmt.Sprintf("cell %d", c.Index+1)
		first := finding.Range{End: finding.Position{Character: 1}}
		results = append(results, sarifResult{
			RuleID: finding.OutcomeUnknown, RuleIndex: unknownRule, Level: "note",
			Message: sarifMessage{Text: fmt.Sprintf("%s: outcome unknown: %s", cellName, firstNonEmpty(c.Reason, "no layer could tell"))},
			Locations: []sarifLocation{{
				PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: rep.Notebook}, Region: loc.region(c.Index, first)},
				LogicalLocations: []sarifLogical{{Name: cellName, FullyQualifiedName: fmt.Sprintf("%s/%s", rep.Notebook, cellName), Kind: "module"}},
			}},
			Properties: map[string]any{"cell": c.Index, "verdict": c.Verdict, "reason": c.Reason},
		})
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:       sarifTool{Driver: sarifDriver{Name: "premortem", Version: version, InformationURI: "https://github.com/premortem/premortem", Rules: rules}},
			Results:    results,
			ColumnKind: "utf16CodeUnits",
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// jsonStringBody escapes text as it must appear inside the notebook's JSON string (the
// replacement is applied to the raw file).
func jsonStringBody(text string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(text)
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// sarifFixes converts a finding's fixes: every verified fix (best first), or, when none is
// verified, the preferred fix as before (a rule's fix with the shadow layer off). Each edit
// becomes a replacement in the .ipynb file, in the cell it edits (an earlier cell
// included); a fix with an edit that cannot be placed in one JSON string is left out.
func sarifFixes(rep *judge.Report, loc *ipynbLocator, cell int, f finding.Finding) []sarifFix {
	var fixes []*finding.Fix
	for i := range f.Fixes {
		if f.Fixes[i].Verified {
			fixes = append(fixes, &f.Fixes[i])
		}
	}
	if len(fixes) == 0 {
		if fix := preferredFix(f); fix != nil {
			fixes = append(fixes, fix)
		}
	}
	var out []sarifFix
	for _, fix := range fixes {
		ch := sarifArtifactChange{ArtifactLocation: sarifArtifact{URI: rep.Notebook}}
		for _, e := range fix.Edits {
			r := loc.region(EditCell(rep, cell, e), e.Range)
			if r == nil || e.Range.Start.Line != e.Range.End.Line {
				// Only edits within one source line map onto one JSON string (new lines
				// inserted there are escaped "\n" inside it, which nbformat reads back as
				// lines).
				ch.Replacements = nil
				break
			}
			ch.Replacements = append(ch.Replacements, sarifReplacement{DeletedRegion: *r, InsertedContent: sarifMessage{Text: jsonStringBody(e.NewText)}})
		}
		if len(ch.Replacements) == 0 {
			continue
		}
		out = append(out, sarifFix{
			Description:     sarifMessage{Text: fix.Title},
			ArtifactChanges: []sarifArtifactChange{ch},
			Properties:      map[string]any{"verified": fix.Verified},
		})
	}
	return out
}
