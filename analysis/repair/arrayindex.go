package repair

import (
	"fmt"
	"regexp"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A NumPy array indexed by a column name, as if it still were the frame it came from
// (a scaler's fit_transform returns an array): when the array has a single column, that
// column is the only thing the name can mean, and it is taken by position (X[:, 0]). With
// more columns nothing tells which one the name was, and nothing is proposed.

func init() {
	register(family{name: "array-index", gen: arrayIndexGen})
}

var validIndicesRE = regexp.MustCompile(`only integers, slices \(` + "`:`" + `\), ellipsis`)

func arrayIndexGen(in *Input) []Candidate {
	if in.exception() != "IndexError" || !validIndicesRE.MatchString(in.message()) || in.Facts == nil {
		return nil
	}
	for _, s := range in.Facts.Subscripts {
		if s.Range.Start.Line != in.crashLine() || s.List || len(s.Keys) != 1 || s.Object == nil || s.Index == nil {
			continue
		}
		col, ok := s.Keys[0].(string)
		if !ok {
			continue
		}
		v, ok := in.value(s.Object.Text)
		if !ok || v.Kind != facts.KindNDArray || len(v.Shape) != 2 || v.Shape[1] != 1 {
			continue
		}
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("%s is a NumPy array with one column: take it by position (%s[:, 0])", s.Object.Text, s.Object.Text), Edits: []finding.Edit{replaceAt(s.Index.Range, ":, 0")}},
			Keeps: fmt.Sprintf("%s (shape %d×1) has no column names; its only column is the %q the cell reads", s.Object.Text, v.Shape[0], col),
		}}
	}
	return nil
}
