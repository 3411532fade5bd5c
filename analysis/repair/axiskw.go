package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// The row/column axis left at its default: df.apply(lambda row: row["a"] + row["b"]) hands
// the function each column, so row["a"] is a KeyError; df.drop("id") looks for a row
// labelled id ("['id'] not found in axis"). Both meant the columns: axis=1 is added to the
// frame's call when it names no axis (axis=, columns=, index=) already.

func init() {
	register(family{name: "axis-keyword", gen: axisKeywordGen})
}

func axisKeywordGen(in *Input) []Candidate {
	if in.exception() != "KeyError" || in.Facts == nil {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "apply" || e.Value.Name == "drop") && len(e.Args) >= 1
	}) {
		if c.Keyword("axis") != nil || c.Keyword("columns") != nil || c.Keyword("index") != nil || len(c.Args) > 1 {
			continue
		}
		if v, ok := in.value(c.Value.Value.Text); ok && v.Kind != facts.KindDataFrame {
			continue
		}
		end := c.Range.End
		if end.Character == 0 {
			continue
		}
		closeAt := finding.Position{Line: end.Line, Character: end.Character - 1}
		if textOf(in.Text, finding.Range{Start: closeAt, End: end}) != ")" {
			continue
		}
		what := "each row to the function"
		if c.Value.Name == "drop" {
			what = "the columns to drop"
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Pass axis=1 to %s (the default axis=0 %s)", c.Value.Name, map[bool]string{true: "looks up row labels", false: "hands the function each column"}[c.Value.Name == "drop"]), Edits: []finding.Edit{{Range: finding.Range{Start: closeAt, End: closeAt}, NewText: ", axis=1"}}},
			Keeps: fmt.Sprintf("the same %s, with %s", c.Value.Name, what),
		})
	}
	return out
}
