package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// The pandas family. This file: missing columns and labels (df['a'], df[['a','b']], .loc,
// .iloc, row labels, agg keys) and the subscripts that project a frame; the stale-state
// fix. Attributes are in pandas_attrs.go, functions and DataFrame methods (drop, merge,
// groupby, sort_values, set_index, dropna(subset=), ...) in pandas_methods.go, get_dummies
// in pandas_dummies.go, Series methods in pandas_series.go, and text in numeric operations
// and astype casts in pandas_dtypes.go.

// columnNames lists v's string column labels.
func columnNames(v *val) []string {
	var out []string
	for _, c := range v.Columns {
		if s, ok := c.Name.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// reportMissingColumn reports that label is not a column of df. keyExpr is the literal (or
// attribute name) to mark; attr is true for df.name access (AttributeError).
func reportMissingColumn(c *checker, r finding.Range, literal string, label any, df *val, why string, exc string, attr bool) {
	if s, ok := label.(string); ok && c.keyGuards[s] > 0 {
		return // under `if 'col' in df:`
	}
	msg := fmt.Sprintf("column %s is not in %s", pyRepr(label), df.name)
	if attr {
		msg = fmt.Sprintf("%s has no column or attribute %s", df.name, pyRepr(label))
	}
	if df.colsComplete && len(df.Columns) > 0 {
		msg += " (columns: " + columnList(df.Columns, 8) + ")"
	}
	evidence := []string{describe(df)}
	code := finding.MissingColumn
	if why != "" {
		evidence = append(evidence, fmt.Sprintf("column %s was %s", pyRepr(label), why))
	}
	var fixes []finding.Fix
	if s, ok := label.(string); ok {
		if best, ok := suggest(s, columnNames(df)); ok {
			text := quoteLike(literal, best)
			if attr {
				text = best
				if !isIdentifier(best) {
					text = "" // handled below
				}
			}
			if text != "" {
				fixes = append(fixes, replaceFix(fmt.Sprintf("Use column %s", pyRepr(best)), r, text, true))
				msg += fmt.Sprintf("; did you mean %s?", pyRepr(best))
			}
		}
	}
	if stale := staleColumn(c, df, label); stale != "" && len(fixes) == 0 {
		code = finding.StaleState
		evidence = append(evidence, stale)
		if call := enclosingCall(c.stmt.Value, r, "drop"); call != nil {
			fixes = append(fixes, ignoreErrorsFix(call, literal)...)
		}
		msg = fmt.Sprintf("column %s is no longer in %s: an earlier run (probably of this cell, which rebinds %s) already removed it%s; re-create %s first or make the cell safe to re-run (e.g. drop(..., errors='ignore'))",
			pyRepr(label), df.name, df.name, spaced(c.env.asOf()), df.name)
	}
	c.report(r, finding.SeverityError, code, exc, msg, 0.97, evidence, fixes)
}

// isIdentifier reports whether s can follow a dot.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') || r > 127 {
			continue
		}
		return false
	}
	return true
}

// checkLabels reports every constant label in x that is missing from df. Returns true when
// something was reported.
func checkLabels(c *checker, x *analysis.Expr, xv *val, df *val, exc string) bool {
	if x == nil || df == nil || df.Kind != facts.KindDataFrame && df.Kind != facts.KindGroupBy {
		return false
	}
	labels, ok := constLabels(xv)
	if !ok {
		return false
	}
	found := false
	ranges := labelRanges(x)
	for i, l := range labels {
		if why, missing := df.columnMissing(l); missing {
			r, lit := x.Range, x.Text
			if i < len(ranges) {
				r, lit = ranges[i].Range, ranges[i].Text
			}
			reportMissingColumn(c, r, lit, l, df, why, exc, false)
			found = true
		}
	}
	return found
}

// labelRanges returns the literal expressions of a constant or list of constants.
func labelRanges(x *analysis.Expr) []*analysis.Expr {
	if x.Kind == analysis.ExprList || x.Kind == analysis.ExprTuple {
		return x.Args
	}
	return []*analysis.Expr{x}
}

// seriesOf builds the Series for one column of df.
func seriesOf(df *val, col facts.Column, text string) *val {
	s := &val{name: text, origin: df.origin, ident: new(int)}
	s.Kind = facts.KindSeries
	s.Dtype = col.Dtype
	s.Columns = []facts.Column{col}
	if len(df.Shape) > 0 {
		s.Shape = []int{df.Shape[0]}
	}
	if col.Nulls != nil {
		nan := *col.Nulls > 0
		s.HasNaN = &nan
	}
	s.Min, s.Max = col.Min, col.Max
	return s
}

// project builds df[labels].
func project(df *val, labels []any, text string) *val {
	n := &val{name: text, origin: df.origin, colsComplete: true, ident: new(int)}
	n.Kind = facts.KindDataFrame
	for _, l := range labels {
		col, ok := df.column(l)
		if !ok {
			col = facts.Column{Name: l}
		}
		n.Columns = append(n.Columns, col)
	}
	rows := -1
	if len(df.Shape) > 0 {
		rows = df.Shape[0]
	}
	n.Shape = []int{rows, len(n.Columns)}
	return n
}

// pandasSubscript handles df['a'], df[['a','b']], series[...], groupby[...].
func pandasSubscript(c *checker, e *analysis.Expr, base, idx *val) *val {
	if base.Kind == facts.KindSeries {
		return nil
	}
	labels, ok := constLabels(idx)
	if !ok {
		// boolean masks and slices select rows: same columns, fewer rows
		if base.Kind == facts.KindDataFrame && (isMask(idx) || e.Index.Kind == analysis.ExprSlice) {
			n := base.clone()
			n.name, n.origin, n.ident = e.Text, "after line "+itoa(e.Range.Start.Line+1), new(int)
			if len(n.Shape) == 2 {
				n.Shape[0] = -1
			}
			n.HasNaN = nil
			return n
		}
		return nil
	}
	n := len(c.findings)
	if checkLabels(c, e.Index, idx, base, "KeyError") {
		if exactType(base, "pandas.core.frame.DataFrame") && c.asInspected(e.Value) && c.pristine(e.Range.Start) {
			// df['x'] on a frame whose columns the inspection listed whole.
			c.certainSince(n)
		}
		return nil
	}
	if base.Kind == facts.KindGroupBy {
		return nil
	}
	_, isList := idx.konst.([]any)
	if isList {
		return project(base, labels, e.Text)
	}
	if col, ok := base.column(labels[0]); ok {
		return seriesOf(base, col, e.Text)
	}
	return nil
}

// isMask reports whether v is a boolean Series/array used as a row filter.
func isMask(v *val) bool {
	return v != nil && (v.Kind == facts.KindSeries || v.Kind == facts.KindNDArray) && v.Dtype == "bool"
}

// pandasIndexer handles df.loc[rows, cols] and df.iloc[rows, cols].
func pandasIndexer(c *checker, e *analysis.Expr, base, idx *val) *val {
	df := base.bound
	isLoc := strings.HasSuffix(e.Value.Text, ".loc")
	var colExpr *analysis.Expr
	var colVal *val
	if e.Index.Kind == analysis.ExprTuple && len(e.Index.Args) == 2 {
		colExpr = e.Index.Args[1]
		colVal = c.vals[colExpr]
	}
	if colExpr == nil {
		if isLoc {
			checkRowLabel(c, e.Index, idx, df)
		} else if i, ok := constInt(idx); ok {
			if n, known := df.rows(); known && (i >= n || i < -n) {
				c.report(e.Index.Range, finding.SeverityError, finding.IndexOutOfRange, "IndexError",
					fmt.Sprintf("row position %d is out of range: %s has %d rows (single positional indexer is out-of-bounds)", i, df.name, n),
					0.96, []string{describe(df)}, nil)
			}
		}
		return nil
	}
	if isLoc {
		if checkLabels(c, colExpr, colVal, df, "KeyError") {
			return nil
		}
		return nil
	}
	// iloc: positional columns
	if i, ok := constInt(colVal); ok {
		if n, ok := df.ncols(); ok && (i >= n || i < -n) {
			c.report(colExpr.Range, finding.SeverityError, finding.IndexOutOfRange, "IndexError",
				fmt.Sprintf("column position %d is out of range: %s has %d columns", i, df.name, n),
				0.97, []string{describe(df)}, nil)
		}
	}
	return nil
}

// checkRowLabel reports df.loc[label] for a label outside a fully known index.
func checkRowLabel(c *checker, x *analysis.Expr, xv *val, df *val) {
	labels, ok := constLabels(xv)
	if !ok {
		return
	}
	for _, l := range labels {
		if missing, desc := rowLabelMissing(df, l); missing {
			c.report(x.Range, finding.SeverityError, finding.MissingKey, "KeyError",
				fmt.Sprintf("row label %s is not in the index of %s (%s)", pyRepr(l), df.name, desc),
				0.95, []string{describe(df)}, nil)
			return
		}
	}
}

// rowLabelMissing decides whether label is certainly not in df's index.
func rowLabelMissing(df *val, label any) (bool, string) {
	ix := df.Index
	if ix == nil {
		return false, ""
	}
	if ix.Type == "RangeIndex" && len(df.Shape) > 0 && df.Shape[0] >= 0 && startsAtZero(ix.Sample, df.Shape[0]) {
		n := df.Shape[0]
		switch l := label.(type) {
		case int64:
			if l < 0 || int(l) >= n {
				return true, fmt.Sprintf("a RangeIndex 0..%d", n-1)
			}
		case string:
			return true, fmt.Sprintf("a RangeIndex 0..%d", n-1)
		}
		return false, ""
	}
	if ix.Complete {
		k, ok := colKey(label)
		if !ok {
			return false, ""
		}
		for _, s := range ix.Sample {
			if sk, _ := colKey(s); sk == k {
				return false, ""
			}
		}
		return true, fmt.Sprintf("%d labels", len(ix.Sample))
	}
	return false, ""
}

// startsAtZero reports whether a RangeIndex sample reads 0, 1, 2, ... (a default index), so
// its labels are exactly 0..n-1.
func startsAtZero(sample []any, n int) bool {
	if len(sample) == 0 || (n > 1 && len(sample) < 2) {
		return false
	}
	for i, x := range sample {
		if k, _ := colKey(x); k != "n:"+itoa(i) {
			return false
		}
	}
	return true
}

// checkAggKeys reports agg({label: ...}) keys that are not columns.
func checkAggKeys(c *checker, k *callInfo, df *val) {
	m := k.argExpr(0, "func")
	if m == nil || m.Kind != analysis.ExprDict {
		return
	}
	for i := 0; i+1 < len(m.Args); i += 2 {
		key := m.Args[i]
		if key.Kind != analysis.ExprConst {
			continue
		}
		if why, missing := df.columnMissing(key.Const); missing {
			reportMissingColumn(c, key.Range, key.Text, key.Const, df, why, "KeyError", false)
			return
		}
	}
}

// enclosingCall returns the innermost call of method name (x.name(...)) in e whose
// arguments contain r.
func enclosingCall(e *analysis.Expr, r finding.Range, name string) *analysis.Expr {
	if e == nil || !within(r, e.Range) {
		return nil
	}
	for _, sub := range append(append([]*analysis.Expr{e.Value, e.Index}, e.Args...), keywordValues(e)...) {
		if found := enclosingCall(sub, r, name); found != nil {
			return found
		}
	}
	if e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == name && !within(r, e.Value.Range) {
		return e
	}
	return nil
}

// keywordValues lists the values of e's keyword arguments.
func keywordValues(e *analysis.Expr) []*analysis.Expr {
	var out []*analysis.Expr
	for _, k := range e.Keywords {
		out = append(out, k.Value)
	}
	return out
}

// ignoreErrorsFix adds errors="ignore" to a drop call, so re-running it does nothing for
// labels already gone. literal gives the quote style.
func ignoreErrorsFix(call *analysis.Expr, literal string) []finding.Fix {
	if call.Keyword("errors") != nil || !strings.HasSuffix(call.Text, ")") || call.Range.End.Character == 0 {
		return nil
	}
	for _, k := range call.Keywords {
		if k.Name == "" {
			return nil // **kwargs may hold errors already
		}
	}
	inner := strings.TrimSpace(strings.TrimSuffix(call.Text, ")"))
	sep := ", "
	if strings.HasSuffix(inner, ",") {
		sep = " "
	} else if strings.HasSuffix(inner, "(") {
		sep = ""
	}
	at := call.Range.End
	at.Character--
	if strings.HasSuffix(strings.TrimSuffix(call.Text, ")"), "\n") || inner != strings.TrimRight(strings.TrimSuffix(call.Text, ")"), " \t") {
		return nil // the closing parenthesis has its own line or spacing: leave it to the user
	}
	text := sep + "errors=" + quoteLike(literal, "ignore")
	return []finding.Fix{{Title: "Ignore labels already dropped (errors=" + quoteLike(literal, "ignore") + ")",
		Edits: []finding.Edit{{Range: finding.Range{Start: at, End: at}, NewText: text}}}}
}
