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
	out := rowsByCounter(in)
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

// rowsByCounter reads by position the rows a loop counter picks with .loc: for i in
// range(len(df)) and df.loc[i, "price"] after a filter left gaps in the index. Every
// df.loc[i, "col"] of the line becomes df["col"].iloc[i] and df.loc[i] df.iloc[i], where
// i counts a range loop around the line (or the facts say it holds an integer).
func rowsByCounter(in *Input) []Candidate {
	var edits []finding.Edit
	counter := ""
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "loc" && e.Index != nil
	}) {
		row, col := s.Index, (*analysis.Expr)(nil)
		if row.Kind == analysis.ExprTuple {
			if len(row.Args) != 2 {
				continue
			}
			row, col = row.Args[0], row.Args[1]
		}
		if row.Kind != analysis.ExprName || counter != "" && row.Name != counter {
			continue
		}
		if !in.rangeCounter(row.Name) {
			if v, ok := in.value(row.Name); !ok || v.Kind != facts.KindInt {
				continue
			}
		}
		counter = row.Name
		obj := s.Value.Value.Text
		text := obj + ".iloc[" + row.Text + "]"
		if col != nil {
			text = obj + "[" + col.Text + "].iloc[" + row.Text + "]"
		}
		edits = append(edits, replaceAt(s.Range, text))
	}
	if len(edits) == 0 {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Take the rows by position with .iloc[%s] (%s counts rows; the index has other labels)", counter, counter), Edits: edits},
		Keeps: fmt.Sprintf("row number %s of the frame, as the loop counts them, and the same columns", counter),
	}}
}

// The other way round: .iloc given labels or a mask Series (df.iloc[df["age"] > 60,
// "income"], df.iloc[:, "price"]), which pandas refuses in words that vary by the key
// (NotImplementedError "iLocation based boolean indexing", ValueError "Location based
// indexing can only have [integer ...] types", TypeError "Cannot index by location index
// with a non-integer key"). The key's own syntax says it is a label or a mask: a string
// literal, a list of them, a comparison or a combination of comparisons. .loc takes
// exactly those; the rows and columns meant are the same.

func init() {
	register(family{name: "by-label", gen: byLabelGen})
}

func byLabelGen(in *Input) []Candidate {
	switch in.exception() {
	case "NotImplementedError", "ValueError", "TypeError", "IndexError":
	default:
		return nil
	}
	var out []Candidate
	for _, s := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Index != nil && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "iloc"
	}) {
		keys := []*analysis.Expr{s.Index}
		if s.Index.Kind == analysis.ExprTuple {
			keys = s.Index.Args
		}
		labelled := false
		for _, k := range keys {
			labelled = labelled || labelKey(k)
		}
		if !labelled {
			continue
		}
		obj := s.Value.Value.Text
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Select by label and mask with %s.loc (.iloc takes positions only)", obj), Edits: []finding.Edit{replaceAt(s.Value.NameRange, "loc")}},
			Keeps: fmt.Sprintf("the same rows and columns of %s: the key holds labels or a mask, which .loc selects by", obj),
		})
	}
	return out
}

// labelKey reports whether an indexer's key is, by its syntax, a label or a boolean mask:
// a string, a list of strings, a comparison, a combination of masks or its negation.
func labelKey(k *analysis.Expr) bool {
	switch k.Kind {
	case analysis.ExprConst:
		_, ok := k.Const.(string)
		return ok
	case analysis.ExprList:
		for _, a := range k.Args {
			if !labelKey(a) || a.Kind != analysis.ExprConst {
				return false
			}
		}
		return len(k.Args) > 0
	case analysis.ExprCompare:
		return true
	case analysis.ExprBinOp, analysis.ExprBoolOp, analysis.ExprUnaryOp:
		if k.Name != "&" && k.Name != "|" && k.Name != "~" && k.Name != "and" && k.Name != "or" && k.Name != "not" {
			return false
		}
		for _, a := range k.Args {
			if !labelKey(a) {
				return false
			}
		}
		return len(k.Args) > 0
	}
	return false
}

// rangeCounter reports whether name is the target of a for loop over range(...) that
// encloses the crash line.
func (in *Input) rangeCounter(name string) bool {
	for _, st := range enclosing(in.Facts.Statements, in.crashLine()) {
		if st.Kind == analysis.StmtFor && len(st.Targets) == 1 && st.Targets[0].Kind == analysis.ExprName && st.Targets[0].Name == name && isRangeCall(st.Value) {
			return true
		}
	}
	return false
}
