package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Feature counts that differ from fit because of how X was built: a split one-hot encoded
// on its own (pd.get_dummies(test[cols]) lacks the indicator columns of categories only
// the training split has), and a frame selected with fewer of the columns the model or
// transformer was fitted on. The repair is made where X is built, so every use of it in the
// cell gets the same columns.

// alignSplitDummies aligns a split encoded on its own with the training split's encoding,
// when the history encodes the training split with the same call:
// pd.get_dummies(test[cols]) becomes pd.get_dummies(test[cols]).reindex(
// columns=pd.get_dummies(train[cols]).columns, fill_value=0). An indicator of a category the
// split lacks is 0 in each of its rows; a category only the split has is one the model never
// saw, and is left out.
func alignSplitDummies(in *Input) []Candidate {
	_, args := callArgs(in)
	if len(args) == 0 {
		return nil
	}
	x := args[0]
	// The encoding is on the crash line or on the line of this cell that builds X.
	ls := []int{in.crashLine()}
	if d, ok := lastDef(in, x.Text); ok && x.Kind == analysis.ExprName {
		ls = append(ls, d.Range.Start.Line)
	}
	for _, l := range ls {
		// The get_dummies calls on the line not yet reindexed (the call is no .reindex's object).
		reindexed := map[string]bool{}
		for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprAttribute && e.Name == "reindex" }) {
			reindexed[rangeKey(e.Value.Range)] = true
		}
		for _, c := range in.exprsOnLine(l, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && calleeText(e) == "pd.get_dummies" && e.Range.Start.Line == l && e.Range.End.Line == l
		}) {
			if reindexed[rangeKey(c.Range)] {
				continue
			}
			train, ok := trainingTwin(in, c.Text)
			if !ok {
				continue
			}
			p := c.Range.End
			return []Candidate{{
				Fix: finding.Fix{Title: "Encode with the training split's columns (categories it lacks as 0)", Edits: []finding.Edit{{
					Range: finding.Range{Start: p, End: p}, NewText: ".reindex(columns=" + train + ".columns, fill_value=0)"}}},
				Keeps: fmt.Sprintf("%s encoded on its own lacks the indicator columns of categories it does not contain; with %s's columns each is 0 in its rows, as the model was fitted", c.Text, train),
			}}
		}
	}
	return nil
}

// trainingTwin returns the call that encodes the training split the same way (the split
// words swapped), when an executed cell or an earlier line of this cell has it.
func trainingTwin(in *Input, call string) (string, bool) {
	texts := []string{strings.Join(lines(in.Text)[:min(in.crashLine(), len(lines(in.Text)))], "\n")}
	for _, h := range in.History {
		texts = append(texts, h.Text)
	}
	uses := analysis.ParseCell(call).Uses
	for _, w := range splitWords {
		var edits []finding.Edit
		for _, u := range uses {
			if to, ok := w.swap(u.Name, true); ok && !strings.HasPrefix(u.Name, "pd") {
				edits = append(edits, replaceAt(u.Range, to))
			}
		}
		twin, err := ApplyEdits(call, edits)
		if len(edits) == 0 || err != nil {
			continue
		}
		for _, t := range texts {
			if strings.Contains(codeOnly(t), twin) {
				return twin, true
			}
		}
	}
	return "", false
}

// fitColumnsWhereBuilt selects, where X is built from a frame, every column the model or
// transformer was fitted on, when the selection names only some of them and the frame has
// them all: df[["a", "b"]].values for a scaler fitted on df[["a", "b", "c"]] becomes
// df[scaler.feature_names_in_].values.
func fitColumnsWhereBuilt(in *Input) []Candidate {
	call, args := callArgs(in)
	if call == nil || len(args) == 0 || call.Value == nil || call.Value.Value == nil || in.Facts == nil {
		return nil
	}
	recv := call.Value.Value.Text
	ev, ok := in.value(recv)
	if !ok || ev.Estimator == nil || len(ev.Estimator.FeatureNamesIn) == 0 {
		return nil
	}
	fit := map[string]bool{}
	for _, n := range ev.Estimator.FeatureNamesIn {
		fit[n] = true
	}
	x := args[0]
	ls := map[int]bool{in.crashLine(): true}
	if d, ok := lastDef(in, x.Text); ok && x.Kind == analysis.ExprName {
		ls[d.Range.Start.Line] = true
	}
	for _, s := range in.Facts.Subscripts {
		if !ls[s.Range.Start.Line] || !s.List || s.Object == nil || len(s.Keys) == 0 || len(s.Keys) >= len(fit) {
			continue
		}
		sub := true
		for _, k := range s.Keys {
			str, ok := k.(string)
			sub = sub && ok && fit[str]
		}
		fv, ok := in.value(s.Object.Text)
		if !sub || !ok || fv.Kind != facts.KindDataFrame {
			continue
		}
		all := true
		for n := range fit {
			all = all && hasColumn(fv, n)
		}
		if !all || s.Index == nil {
			continue
		}
		var added []string
		for _, n := range ev.Estimator.FeatureNamesIn {
			found := false
			for _, k := range s.Keys {
				found = found || k == n
			}
			if !found {
				added = append(added, n)
			}
		}
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Select the columns %s was fitted on (adds %s)", recv, abbreviate(added, 4)), Edits: []finding.Edit{replaceAt(s.Index.Range, recv+".feature_names_in_")}},
			Keeps: fmt.Sprintf("%s was fitted on %d columns of %s, in that order; the selection named %d of them", recv, len(fit), s.Object.Text, len(s.Keys)),
		}}
	}
	return nil
}
