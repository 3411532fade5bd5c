package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A method whose library documents a sibling for the case it refuses: DataFrame.pivot
// reshapes one row per index and column pair and raises "Index contains duplicate
// entries, cannot reshape" on more; pivot_table takes the same index, columns and values
// and aggregates the duplicates (aggfunc="mean", its default, written out so the choice
// is visible). One entry per method in alternatives, each the library's own remedy.

func init() {
	register(family{name: "documented-alternative", gen: alternativeGen})
}

// alternative is one method's documented sibling: the words of the refusal, the method
// written instead and the keywords added.
type alternative struct {
	says, method, with, title, why string
}

var alternatives = map[string]alternative{
	"pivot": {says: "duplicate entries", method: "pivot_table", with: `aggfunc="mean"`, title: "the rows that share a cell averaged",
		why: "the same index, columns and values; the rows that share a cell are averaged"},
}

func alternativeGen(in *Input) []Candidate {
	if in.exception() != "ValueError" {
		return nil
	}
	msg := in.message()
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute
	}) {
		alt, ok := alternatives[c.Value.Name]
		if !ok || !strings.Contains(msg, alt.says) {
			continue
		}
		edits := []finding.Edit{replaceAt(c.Value.NameRange, alt.method)}
		if alt.with != "" && len(c.Args)+len(c.Keywords) > 0 {
			end := c.Range.End
			end.Character-- // before the closing parenthesis
			edits = append(edits, finding.Edit{Range: finding.Range{Start: end, End: end}, NewText: ", " + alt.with})
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Use %s.%s (%s)", c.Value.Value.Text, alt.method, alt.title), Edits: edits},
			Keeps: alt.why,
		})
	}
	return out
}

// A constructor keyword the library documents for the case it refuses, added where the
// object is built (in this cell or the history, nested in a pipeline too): OneHotEncoder
// raises "Found unknown categories ... during transform" on a category its fit never saw,
// and handle_unknown="ignore" encodes such a row as all zeros.
var constructorKeywords = []struct{ says, class, keyword, why string }{
	{"Found unknown categories", "OneHotEncoder", "handle_unknown", `"ignore"`},
}

func init() {
	register(family{name: "constructor-keyword", gen: constructorKeywordGen})
}

func constructorKeywordGen(in *Input) []Candidate {
	msg := in.message()
	for _, ck := range constructorKeywords {
		if !strings.Contains(msg, ck.says) {
			continue
		}
		for _, s := range in.editSites() {
			for _, c := range walkExprs(s.Facts.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
				return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Name == ck.class
			}) {
				if s.ID == "" && c.Range.Start.Line > in.crashLine() {
					continue
				}
				given := false
				for _, k := range c.Keywords {
					given = given || k.Name == ck.keyword
				}
				if given {
					continue
				}
				p := c.Range.End
				p.Character-- // before the closing parenthesis
				text := ck.keyword + "=" + ck.why
				if len(c.Args)+len(c.Keywords) > 0 {
					text = ", " + text
				}
				title := fmt.Sprintf("Build the %s with %s", ck.class, ck.keyword+"="+ck.why)
				if s.ID != "" {
					title += fmt.Sprintf(" in cell %d (run it again)", s.Index+1)
				}
				return []Candidate{{
					Fix:   finding.Fix{Title: title, Edits: []finding.Edit{{Cell: s.ID, Range: finding.Range{Start: p, End: p}, NewText: text}}},
					Keeps: fmt.Sprintf("the same %s; a category its fit never saw is encoded as no known one instead of failing", ck.class),
				}}
			}
		}
	}
	return nil
}
