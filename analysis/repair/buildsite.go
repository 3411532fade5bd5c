package repair

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Data that needs preparing, prepared where it is built: the frame a failing fit got was
// made by a statement of this cell or an earlier one (X = df.drop(...), then split with
// train_test_split), so its text columns are one-hot encoded there (every later use, the
// split, the predict and the score get the same features), text columns a scaler is handed
// are turned into their category codes before the scaling, and a target of numbers written
// with symbols ('$1,250.00') is parsed where it is taken from its frame. What the data holds
// comes from the crash frame's facts (Input.CrashFacts) when the cell built it, so this
// works for data that exists in no inspection. The failing call, the target and every
// feature stay.

func init() {
	register(family{name: "build-site", gen: buildSiteGen})
}

// maxOriginDepth bounds how many bindings origin follows back (split of a copy of a drop).
const maxOriginDepth = 6

// buildSite is the statement that builds a value: the cell it is in ("" for the crashing
// cell), that cell's 0-based notebook index and text, the name it binds and its value.
type buildSite struct {
	cell  string
	index int
	text  string
	name  string
	value *analysis.Expr
	stmt  *analysis.Statement
}

// where is the title's tail for an edit in another cell.
func (s buildSite) where() string {
	if s.cell == "" {
		return ""
	}
	return fmt.Sprintf(" in cell %d (run it again)", s.index+1)
}

// edit replaces the site's value with text.
func (s buildSite) edit(text string) finding.Edit {
	e := replaceAt(s.value.Range, text)
	e.Cell = s.cell
	return e
}

// wrap surrounds the site's value with before and after as two insertions, so the edit's
// size is what it adds (EditSize ranks the smallest repair first).
func (s buildSite) wrap(before, after string) []finding.Edit {
	r := s.value.Range
	a := finding.Edit{Cell: s.cell, Range: finding.Range{Start: r.Start, End: r.Start}, NewText: before}
	b := finding.Edit{Cell: s.cell, Range: finding.Range{Start: r.End, End: r.End}, NewText: after}
	return []finding.Edit{a, b}
}

// splitterRE names the calls whose tuple result holds, per input, its train and test parts
// in order (train_test_split(X, y) gives X_train, X_test, y_train, y_test).
var splitterRE = regexp.MustCompile(`(^|\.)train_test_split$`)

// origin returns the statement that builds name as the crash line reads it: the cell's last
// top-level binding of name before the crash line, else the latest executed cell's. A split
// (X_train, X_test, ... = train_test_split(X, ...)) or a plain copy (X = data) is followed
// to the binding of what it splits or copies.
func (in *Input) origin(name string) (buildSite, bool) {
	pos, before := -1, in.crashLine()
	for depth := 0; depth < maxOriginDepth; depth++ {
		s, p, ok := in.binding(name, pos, before)
		if !ok {
			return buildSite{}, false
		}
		next := ""
		if v := s.value; v.Kind == analysis.ExprName {
			next = v.Name
		} else {
			next = splitPart(s)
			if next == "" && isSplit(s.value) {
				return buildSite{}, false // a split whose parts cannot be told apart
			}
		}
		if next == "" {
			return s, true
		}
		name, pos, before = next, p, s.stmt.Range.Start.Line
	}
	return buildSite{}, false
}

func isSplit(v *analysis.Expr) bool {
	if v.Kind != analysis.ExprCall || v.Value == nil {
		return false
	}
	callee, _ := v.Value.Chain()
	return splitterRE.MatchString(callee)
}

// splitPart returns, for a site whose value splits several arrays into their train and test
// parts, the name of the input its bound name is a part of ("" when it is no such split).
func splitPart(s buildSite) string {
	v, st := s.value, s.stmt
	if !isSplit(v) || len(v.Args) == 0 || len(st.Targets) != 1 {
		return ""
	}
	t := st.Targets[0]
	if t.Kind != analysis.ExprTuple && t.Kind != analysis.ExprList || len(t.Args) != 2*len(v.Args) {
		return ""
	}
	for i, e := range t.Args {
		if e.Kind == analysis.ExprName && e.Name == s.name {
			if a := v.Args[i/2]; a.Kind == analysis.ExprName {
				return a.Name
			}
		}
	}
	return ""
}

// binding finds the last top-level plain assignment binding name: in cell pos (-1: the
// crashing cell, else History[pos]) before line before, else in the executed cells before
// that one, latest first. It returns the site and the cell's pos.
func (in *Input) binding(name string, pos, before int) (buildSite, int, bool) {
	order := []int{pos}
	start := pos
	if pos == -1 {
		start = len(in.History)
	}
	for p := start - 1; p >= 0; p-- {
		order = append(order, p)
	}
	for i, p := range order {
		limit := before
		if i > 0 {
			limit = 1 << 30
		}
		var text, id string
		var cf *analysis.CellFacts
		index := -1
		if p == -1 {
			text, cf = in.Text, in.Facts
		} else {
			h := in.History[p]
			text, cf, id, index = h.Text, h.Facts, h.ID, h.Index
			if cf == nil {
				cf = analysis.ParseCell(text)
			}
		}
		if cf == nil {
			continue
		}
		var found *analysis.Statement
		for _, st := range cf.Statements {
			if st.Kind == analysis.StmtAssign && st.Value != nil && len(st.Targets) == 1 && st.Range.Start.Line < limit && bindsName(st.Targets[0], name) {
				found = st
			}
		}
		if found != nil {
			return buildSite{cell: id, index: index, text: text, name: name, value: found.Value, stmt: found}, p, true
		}
	}
	return buildSite{}, 0, false
}

func bindsName(t *analysis.Expr, name string) bool {
	switch t.Kind {
	case analysis.ExprName:
		return t.Name == name
	case analysis.ExprTuple, analysis.ExprList:
		for _, a := range t.Args {
			if a.Kind == analysis.ExprName && a.Name == name {
				return true
			}
		}
	}
	return false
}

// textColumns are the names of v's text columns.
func textColumns(v facts.Value) []string {
	var out []string
	for _, c := range v.Columns {
		if textDtypes[c.Dtype] {
			out = append(out, fmt.Sprint(c.Name))
		}
	}
	return out
}

// hasPandas reports whether pd names pandas for the cell.
func (in *Input) hasPandas() bool {
	return in.inNamespace("pd") || strings.Contains(in.Text, "import pandas as pd")
}

// wrapped returns expr text followed by suffix, parenthesized when expr is no primary.
func wrapped(e *analysis.Expr, suffix string) string {
	switch e.Kind {
	case analysis.ExprName, analysis.ExprAttribute, analysis.ExprSubscript, analysis.ExprCall:
		return e.Text + suffix
	}
	return "(" + e.Text + ")" + suffix
}

var fitMethods = map[string]bool{"fit": true, "fit_transform": true, "fit_predict": true, "partial_fit": true}

func buildSiteGen(in *Input) []Candidate {
	if !in.hasPandas() {
		return nil
	}
	msg := in.message()
	call, args := callArgs(in)
	if call == nil || len(args) == 0 || !fitMethods[call.Value.Name] {
		return nil
	}
	var out []Candidate
	if m := textNumberRE.FindStringSubmatch(msg); m != nil && digitsRE.MatchString(m[1]) {
		out = append(out, numbersAtSite(in, args, m[1])...)
	}
	if textIntoRE.MatchString(msg) {
		x := args[0]
		switch x.Kind {
		case analysis.ExprName:
			out = append(out, encodeAtSite(in, x.Name)...)
		case analysis.ExprSubscript:
			out = append(out, codesBeforeUse(in, x, textValue(msg))...)
		}
	}
	return out
}

// textValue is the value the message says could not be converted ("" when it names none).
func textValue(msg string) string {
	if m := textNumberRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// encodeAtSite one-hot encodes (or leaves out) the text columns of the frame X the fit got,
// in the statement that builds the frame X is (a part of).
func encodeAtSite(in *Input, x string) []Candidate {
	s, ok := in.origin(x)
	if !ok {
		return nil
	}
	v, known := in.value(s.name)
	if !known || v.Kind != facts.KindDataFrame {
		return nil
	}
	text := textColumns(v)
	if len(text) == 0 {
		return nil
	}
	what := "the text columns " + abbreviate(text, 6)
	via := ""
	if s.name != x {
		via = fmt.Sprintf(" (%s is a part of %s)", x, s.name)
	}
	var out []Candidate
	if !anyIdentifierLike(v) {
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("One-hot encode %s of %s where it is built (pd.get_dummies)%s", what, s.name, s.where()), Edits: s.wrap("pd.get_dummies(", ")")},
			Keeps: fmt.Sprintf("every feature of %s reaches the estimator%s; %s become indicator columns, the same for every later use of %s", s.name, via, what, s.name),
		})
	}
	return append(out, Candidate{
		Fix:   finding.Fix{Title: fmt.Sprintf("Build %s from the numeric columns only%s", s.name, s.where()), Edits: []finding.Edit{s.edit(wrapped(s.value, ".select_dtypes('number')"))}},
		Keeps: fmt.Sprintf("the numeric features of %s reach the estimator unchanged%s; %s are left out", s.name, via, what),
	})
}

// anyIdentifierLike reports whether a text column of v holds a different value in nearly
// every row (addresses, names, ids): one indicator column per row is no encoding a model
// learns from, so such data is not one-hot encoded.
func anyIdentifierLike(v facts.Value) bool {
	for _, c := range v.Columns {
		if textDtypes[c.Dtype] && identifierLike(c, v) {
			return true
		}
	}
	return false
}

// codesBeforeUse turns the text columns a fit selects from a frame (scaler.fit_transform(
// df[cols])) into their category codes before the crash line, so the selection keeps its
// columns and names (an assignment of the result back to df[cols] still fits).
func codesBeforeUse(in *Input, x *analysis.Expr, bad string) []Candidate {
	if x.Value == nil || x.Value.Kind != analysis.ExprName || x.Index == nil {
		return nil
	}
	df := x.Value.Name
	v, ok := in.value(df)
	if !ok || v.Kind != facts.KindDataFrame {
		return nil
	}
	selected, complete := in.selectedColumns(x.Index)
	var text []string
	for _, c := range v.Columns {
		name, isStr := c.Name.(string)
		if !isStr || !textDtypes[c.Dtype] {
			continue
		}
		if identifierLike(c, v) {
			continue // a code per row means nothing to a model; which to drop is the user's call
		}
		switch {
		case selected[name]:
		case !complete && bad != "" && containsStr(c.NonNumericSample, bad):
		default:
			continue
		}
		text = append(text, name)
	}
	if len(text) == 0 {
		return nil
	}
	q := quoteOf(lineAt(in.Text, in.crashLine()))
	var code []string
	for _, c := range text {
		col := df + "[" + q + c + q + "]"
		code = append(code, fmt.Sprintf("%s = pd.factorize(%s, sort=True)[0]", col, col))
	}
	at := statementStart(in.Text, in.crashLine())
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Encode the text column%s %s of %s as category codes before %s", plural(len(text)), strings.Join(text, ", "), df, x.Text), Edits: []finding.Edit{insertBefore(in.Text, at, strings.Join(code, "\n"))}},
		Keeps: fmt.Sprintf("every column of %s stays selected; the categories of %s become their codes (sorted, as LabelEncoder numbers them)", x.Text, strings.Join(text, ", ")),
	}}
}

// inspectorRowSample is the inspector's _ROW_SAMPLE: the rows a big frame's value facts
// are computed on (kernelclient/inspector/00_common.py).
const inspectorRowSample = 10000

// identifierLike reports whether a text column holds a different value in (nearly) every
// row, as names and ids do: their codes would be row numbers, not categories.
func identifierLike(c facts.Column, v facts.Value) bool {
	if c.NUnique == nil || len(v.Shape) == 0 {
		return false
	}
	rows := v.Shape[0]
	if v.Sampled {
		rows = min(rows, inspectorRowSample) // n_unique counts the sample's values
	}
	return rows >= 5 && float64(*c.NUnique) >= 0.9*float64(rows)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// selectedColumns returns the column names an index selects (a list of strings, or a name
// bound to one in this cell or an earlier one, or one the facts list completely), and
// whether the list is known completely.
func (in *Input) selectedColumns(idx *analysis.Expr) (map[string]bool, bool) {
	out := map[string]bool{}
	lit := func(e *analysis.Expr) bool {
		if e == nil || e.Kind != analysis.ExprList {
			return false
		}
		for _, a := range e.Args {
			s, ok := a.Const.(string)
			if a.Kind != analysis.ExprConst || !ok {
				return false
			}
			out[s] = true
		}
		return true
	}
	if lit(idx) {
		return out, true
	}
	if idx.Kind != analysis.ExprName {
		return out, false
	}
	if v, ok := in.value(idx.Name); ok && v.Kind == facts.KindList && v.Len != nil && len(v.Sample) == *v.Len {
		for _, e := range v.Sample {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
		return out, true
	}
	if s, _, ok := in.binding(idx.Name, -1, in.crashLine()); ok && lit(s.value) {
		return out, true
	}
	return map[string]bool{}, false
}

// numbersAtSite parses, where it is taken from its frame, a label or feature Series of
// numbers written with symbols (the message's '$1,250.00'): the symbols are removed and the
// rest parsed with pd.to_numeric, so a regressor gets the numbers the text spells.
func numbersAtSite(in *Input, args []*analysis.Expr, sample string) []Candidate {
	class := symbolClass(sample)
	if class == "" {
		return nil
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, a := range args {
		if a.Kind != analysis.ExprName {
			continue
		}
		s, ok := in.origin(a.Name)
		if !ok || seen[s.name] || !holdsText(in, s, sample) {
			continue
		}
		seen[s.name] = true
		q := quoteOf(lineAt(s.text, s.value.Range.Start.Line))
		inner := wrapped(s.value, ".str.replace(r"+q+class+q+", "+q+q+", regex=True)")
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Parse %s as numbers where it is built (remove %s, pd.to_numeric)%s", s.name, class, s.where()), Edits: []finding.Edit{s.edit("pd.to_numeric(" + inner + ")")}},
			Keeps: fmt.Sprintf("%s holds numbers written with symbols (%q); the same numbers reach the fit, and text that is no number still fails", s.name, sample),
		})
	}
	return out
}

// symbolClass is the regex character class of the characters of sample that are no part of
// a number ("[$,]" for "$1,250.00"), "" when the rest does not parse as one.
func symbolClass(sample string) string {
	var keep, drop strings.Builder
	seen := map[rune]bool{}
	for _, r := range sample {
		if r >= '0' && r <= '9' || r == '.' || r == '-' {
			keep.WriteRune(r)
			continue
		}
		if unicode.IsLetter(r) {
			return "" // words, not a number written with symbols ('9808 NE 204th Pl')
		}
		if !seen[r] {
			seen[r] = true
			if strings.ContainsRune(`\]^-[`, r) {
				drop.WriteByte('\\')
			}
			drop.WriteRune(r)
		}
	}
	if drop.Len() == 0 {
		return ""
	}
	if _, err := strconv.ParseFloat(keep.String(), 64); err != nil {
		return ""
	}
	return "[" + drop.String() + "]"
}

// holdsText reports whether the site builds text holding sample: its bound value is a text
// Series (or the frame column it subscripts is text) whose sample shows it.
func holdsText(in *Input, s buildSite, sample string) bool {
	if v, ok := in.value(s.name); ok {
		if v.Kind != facts.KindSeries || !textDtypes[v.Dtype] {
			return false
		}
		for _, c := range v.Columns {
			if containsStr(c.NonNumericSample, sample) {
				return true
			}
		}
		for _, e := range v.Sample {
			if e == sample {
				return true
			}
		}
		return false
	}
	e := s.value
	if e.Kind != analysis.ExprSubscript || e.Value == nil || e.Value.Kind != analysis.ExprName || e.Index == nil {
		return false
	}
	col, ok := e.Index.Const.(string)
	if !ok {
		return false
	}
	fv, ok := in.value(e.Value.Name)
	if !ok {
		return false
	}
	for _, c := range fv.Columns {
		if c.Name == col && textDtypes[c.Dtype] && containsStr(c.NonNumericSample, sample) {
			return true
		}
	}
	return false
}
