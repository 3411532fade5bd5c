package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A row taken by position with a label lookup: after a filter, a sort or a string index,
// s[0] and s.loc[0] look for the label 0 ("KeyError: 0"). The first row is s.iloc[0]. The
// message's key is the integer literal of the subscript; the object is a Series or a frame
// (or not known to be anything else).

func init() {
	register(family{name: "by-position", gen: byPositionGen})
}

func byPositionGen(in *Input) []Candidate {
	if in.exception() != "KeyError" || in.Facts == nil {
		return nil
	}
	key := strings.Trim(in.message(), " '\"")
	if key == "" || strings.Trim(key, "-0123456789") != "" {
		return nil
	}
	var out []Candidate
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Index != nil && e.Index.Text == key
	}) {
		obj := s.Value
		loc := obj.Kind == analysis.ExprAttribute && obj.Name == "loc"
		if loc {
			obj = obj.Value
		}
		if v, ok := in.value(obj.Text); ok && v.Kind != facts.KindSeries && v.Kind != facts.KindDataFrame {
			continue
		} else if !ok && obj.Kind != analysis.ExprSubscript && obj.Kind != analysis.ExprName && obj.Kind != analysis.ExprCall {
			continue
		}
		text := obj.Text + ".iloc[" + key + "]"
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Take row %s by position: %s (there is no label %s)", key, text, key), Edits: []finding.Edit{replaceAt(s.Range, text)}},
			Keeps: fmt.Sprintf("the row at position %s of %s, as the index meant", key, obj.Text),
		})
	}
	return out
}
