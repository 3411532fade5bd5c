package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: pandas. Missing columns and labels (df['a'], df.a, df[['a','b']], .loc, drop,
// merge, groupby, get_dummies, sort_values, set_index, dropna(subset=)), .str on non-string
// columns, numeric operations on object columns holding non-numeric strings, and the
// propagation of DataFrame facts through the common transformations.

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
func reportMissingColumn(c *checker, r analysis.Range, literal string, label any, df *val, why string, exc string, attr bool) {
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
	var fixes []analysis.Fix
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
	c.report(r, analysis.SeverityError, code, exc, msg, 0.97, evidence, fixes)
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
	if checkLabels(c, e.Index, idx, base, "KeyError") {
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
				c.report(e.Index.Range, analysis.SeverityError, finding.IndexOutOfRange, "IndexError",
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
			c.report(colExpr.Range, analysis.SeverityError, finding.IndexOutOfRange, "IndexError",
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
			c.report(x.Range, analysis.SeverityError, finding.MissingKey, "KeyError",
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

// pandasAttr handles attribute access on DataFrame/Series/GroupBy values.
func pandasAttr(c *checker, e *analysis.Expr, base *val) *val {
	switch e.Name {
	case "loc", "iloc", "at", "iat", "str", "dt", "cat":
		return &val{bound: base, name: e.Text}
	case "values":
		return toNumpy(base, e.Text)
	case "T":
		if base.Kind == facts.KindDataFrame {
			n := &val{name: e.Text, ident: new(int)}
			n.Kind = facts.KindDataFrame
			if s, ok := base.shapeKnown(); ok && len(s) == 2 {
				n.Shape = []int{s[1], s[0]}
			}
			return n
		}
	case "dtypes":
		if base.Kind == facts.KindDataFrame && base.colsComplete {
			v := &val{name: e.Text}
			v.Kind = facts.KindSeries
			n := len(base.Columns)
			v.Shape, v.Len = []int{n}, &n
			return v
		}
	case "shape":
		if s, ok := base.shapeKnown(); ok {
			return shapeValue(e.Text, s)
		}
	case "columns":
		if base.Kind == facts.KindDataFrame {
			v := &val{name: e.Text, bound: base}
			v.Kind = facts.KindIndex
			if base.colsComplete {
				n := len(base.Columns)
				v.Len = &n
				v.Shape = []int{n}
			}
			return v
		}
	}
	if base.Kind == facts.KindDataFrame {
		if col, ok := base.column(e.Name); ok && !knownAttrs["dataframe"][e.Name] {
			return seriesOf(base, col, e.Text)
		}
	}
	return &val{bound: base, name: e.Text}
}

// pandasAttrRule runs rules on base.name: .str on non-string data.
func pandasAttrRule(c *checker, e *analysis.Expr, base *val) {
	if e.Name != "str" || base.Kind != facts.KindSeries || base.Dtype == "" {
		return
	}
	d := base.Dtype
	if isObjectDtype(d) || d == "category" || strings.HasPrefix(d, "category") {
		return
	}
	c.report(e.NameRange, analysis.SeverityError, finding.StrAccessor, "AttributeError",
		fmt.Sprintf("%s has dtype %s, and .str only works on string values (Can only use .str accessor with string values!)", base.name, d),
		0.96, []string{describe(base)},
		[]analysis.Fix{replaceFix("Convert to strings first", analysis.Range{Start: e.Value.Range.End, End: e.Value.Range.End}, ".astype(str)", false)})
}

// toNumpy is df.values / df.to_numpy() / np.array(df).
func toNumpy(base *val, text string) *val {
	n := &val{name: text, origin: base.origin, ident: new(int)}
	n.Kind = facts.KindNDArray
	if base.Kind == facts.KindNDArray || base.Kind == facts.KindTensor {
		n.Shape = append([]int(nil), base.Shape...)
		n.Dtype = strings.TrimPrefix(base.Dtype, "torch.")
		n.HasNaN = base.HasNaN
		return n
	}
	if base.Kind == facts.KindSeries {
		n.Shape = append([]int(nil), base.Shape...)
		n.Dtype = base.Dtype
		n.HasNaN = base.HasNaN
		n.Columns = base.Columns
		return n
	}
	if base.Kind != facts.KindDataFrame {
		return nil
	}
	if len(base.Shape) == 2 {
		n.Shape = append([]int(nil), base.Shape...)
	}
	if base.colsComplete {
		n.Dtype = commonDtype(base.Columns)
		nan, known := false, true
		for _, col := range base.Columns {
			if col.Nulls == nil {
				known = false
			} else if *col.Nulls > 0 {
				nan = true
			}
		}
		if nan || known {
			n.HasNaN = &nan
		}
		n.Columns = base.Columns // kept for why-explanations (string samples)
	}
	return n
}

// commonDtype is the dtype numpy picks for a frame's values.
func commonDtype(cols []facts.Column) string {
	if len(cols) == 0 {
		return ""
	}
	allSame, anyFloat, allNumeric := true, false, true
	for _, c := range cols {
		if c.Dtype != cols[0].Dtype {
			allSame = false
		}
		if strings.HasPrefix(c.Dtype, "float") {
			anyFloat = true
		}
		if !isNumericDtype(c.Dtype) && c.Dtype != "bool" {
			allNumeric = false
		}
	}
	switch {
	case allSame:
		return cols[0].Dtype
	case !allNumeric:
		return "object"
	case anyFloat:
		return "float64"
	}
	return "int64"
}

// pandasCall handles pandas functions and DataFrame/Series/GroupBy methods.
func pandasCall(c *checker, k *callInfo) (*val, bool) {
	switch k.qual {
	case "pandas.get_dummies":
		return getDummies(c, k), true
	case "pandas.merge":
		left, right := k.arg(0, "left"), k.arg(1, "right")
		checkMerge(c, k, left, right)
		return unknownFrame(k.e.Text), true
	case "pandas.to_numeric":
		s := k.arg(0, "arg")
		if errs, _ := constStr(k.kw["errors"]); errs == "" || errs == "raise" {
			if bad := nonNumeric(s); bad != "" {
				c.report(k.e.Range, analysis.SeverityError, finding.ObjectColumnArith, "ValueError",
					fmt.Sprintf("%s holds non-numeric strings such as %q, so pd.to_numeric raises (Unable to parse string); pass errors='coerce' to turn them into NaN", s.name, bad),
					0.95, []string{describe(s)}, nil)
			}
		}
		return nil, true
	case "pandas.DataFrame", "pandas.Series", "pandas.read_csv", "pandas.concat":
		return unknownFrameKind(k.qual, k.e.Text), true
	}
	if k.method == "" || k.recv == nil {
		return nil, false
	}
	switch k.recv.Kind {
	case facts.KindDataFrame:
		return frameMethod(c, k, k.recv)
	case facts.KindSeries:
		return seriesMethod(c, k, k.recv)
	case facts.KindGroupBy:
		if k.method == "agg" || k.method == "aggregate" {
			checkAggKeys(c, k, k.recv)
		}
		return nil, true
	}
	// df.str.lower(), df.loc(...) and other bound accessors: nothing to check
	return nil, false
}

// unknownFrame is a DataFrame whose columns are unknown.
func unknownFrame(text string) *val {
	v := &val{name: text, ident: new(int)}
	v.Kind = facts.KindDataFrame
	return v
}

func unknownFrameKind(q, text string) *val {
	if q == "pandas.Series" {
		v := &val{name: text, ident: new(int)}
		v.Kind = facts.KindSeries
		return v
	}
	return unknownFrame(text)
}

// derived returns a copy of df as the result of the call on line of k.
func derived(df *val, k *callInfo) *val {
	n := df.clone()
	n.name = k.e.Text
	n.origin = fmt.Sprintf("after line %d", k.e.Range.Start.Line+1)
	n.fromKernel = false
	n.ident = new(int)
	return n
}

// inplace applies a method's result to its receiver when inplace=True and returns None.
func inplace(c *checker, k *callInfo, result *val) (*val, bool) {
	if !k.kwTrue("inplace") {
		return result, true
	}
	if name := k.recvName(); name != "" {
		if result != nil {
			result.name, result.origin = name, fmt.Sprintf("after line %d", k.e.Range.Start.Line+1)
		}
		c.rebind(name, result)
	} else if r := rootName(k.recvExpr()); r != "" {
		c.forget(r)
	}
	none := constVal(nil, k.e.Text)
	none.name = k.e.Text
	return none, true
}

// frameMethod models DataFrame methods.
func frameMethod(c *checker, k *callInfo, df *val) (*val, bool) {
	line := fmt.Sprintf("line %d", k.e.Range.Start.Line+1)
	switch k.method {
	case "drop":
		return dropFrame(c, k, df)
	case "dropna":
		sub := k.argExpr(-1, "subset")
		if sub != nil && checkLabels(c, sub, k.kw["subset"], df, "KeyError") {
			return nil, true
		}
		n := derived(df, k)
		axis := axisOf(k.arg(0, "axis"))
		if axis == 1 {
			allKnown := true
			var drop []any
			for _, col := range n.Columns {
				if col.Nulls == nil {
					allKnown = false
				} else if *col.Nulls > 0 {
					drop = append(drop, col.Name)
				}
			}
			if !allKnown || !n.colsComplete {
				n.colsComplete, n.absent = false, nil
			} else {
				n.dropColumns(drop, "dropped by dropna(axis=1) on "+line)
			}
			return inplace(c, k, n)
		}
		if len(n.Shape) == 2 {
			n.Shape[0] = -1
		}
		subset, _ := constLabels(k.kw["subset"])
		how, _ := constStr(k.kw["how"])
		if how != "all" && !k.has(-1, "thresh") {
			for i := range n.Columns {
				if sub == nil || containsLabel(subset, n.Columns[i].Name) {
					zero := 0
					n.Columns[i].Nulls = &zero
				}
			}
		}
		return inplace(c, k, n)
	case "fillna":
		n := derived(df, k)
		v := k.arg(0, "value")
		for i := range n.Columns {
			if v != nil && v.hasConst && v.Kind != facts.KindNone {
				zero := 0
				n.Columns[i].Nulls = &zero
			} else {
				n.Columns[i].Nulls = nil
			}
		}
		return inplace(c, k, n)
	case "copy", "head", "tail", "sample", "sort_index", "round", "abs":
		n := derived(df, k)
		if k.method != "copy" && len(n.Shape) == 2 {
			n.Shape[0] = -1
		}
		return inplace(c, k, n)
	case "sort_values":
		if by := k.argExpr(0, "by"); by != nil && checkLabels(c, by, k.arg(0, "by"), df, "KeyError") {
			return nil, true
		}
		return inplace(c, k, derived(df, k))
	case "groupby":
		if by := k.argExpr(0, "by"); by != nil && checkLabels(c, by, k.arg(0, "by"), df, "KeyError") {
			return nil, true
		}
		g := derived(df, k)
		g.Kind = facts.KindGroupBy
		return g, true
	case "set_index":
		keys := k.argExpr(0, "keys")
		if keys != nil && checkLabels(c, keys, k.arg(0, "keys"), df, "KeyError") {
			return nil, true
		}
		n := derived(df, k)
		if labels, ok := constLabels(k.arg(0, "keys")); ok && !(k.kw["drop"] != nil && k.kw["drop"].konst == false) {
			n.dropColumns(labels, "moved to the index by set_index on "+line)
		} else {
			n.colsComplete, n.absent = false, nil
		}
		n.Index = nil
		return inplace(c, k, n)
	case "reset_index":
		n := derived(df, k)
		if !k.kwTrue("drop") {
			n.colsComplete, n.absent = false, nil
		}
		n.Index = &facts.Index{Type: "RangeIndex"}
		return inplace(c, k, n)
	case "rename":
		n := derived(df, k)
		if !applyRename(n, k.e.Keyword("columns")) {
			n.colsComplete, n.absent = false, nil
		}
		return inplace(c, k, n)
	case "merge", "join":
		checkMerge(c, k, df, k.arg(0, "right"))
		return unknownFrame(k.e.Text), true
	case "pop":
		if x := k.argExpr(0, "item"); x != nil && checkLabels(c, x, k.arg(0, "item"), df, "KeyError") {
			return nil, true
		}
		if labels, ok := constLabels(k.arg(0, "item")); ok && len(labels) == 1 {
			col, found := df.column(labels[0])
			n := derived(df, k)
			n.dropColumns(labels, "popped on "+line)
			if name := k.recvName(); name != "" {
				n.name = name
				c.rebind(name, n)
			}
			if found {
				return seriesOf(df, col, k.e.Text), true
			}
			return nil, true
		}
		c.forget(k.recvName())
		return nil, true
	case "insert":
		n := derived(df, k)
		if l, ok := constLabels(k.arg(1, "column")); ok && len(l) == 1 {
			n.addColumn(facts.Column{Name: l[0]})
		} else {
			n.colsComplete = false
		}
		if name := k.recvName(); name != "" {
			n.name = name
			c.rebind(name, n)
		}
		return constVal(nil, k.e.Text), true
	case "to_numpy":
		return toNumpy(df, k.e.Text), true
	case "astype":
		checkAstype(c, k, df)
		n := derived(df, k)
		if d, ok := astypeArg(c, k); ok {
			for i := range n.Columns {
				n.Columns[i].Dtype = d
				n.Columns[i].NonNumericSample = nil
			}
		} else {
			n.Columns = nil
			n.colsComplete = false
		}
		return n, true
	case "mean", "median", "std", "var":
		return nil, true
	case "agg", "aggregate":
		checkAggKeys(c, k, df)
		return nil, true
	}
	if k.kwTrue("inplace") {
		c.forget(k.recvName())
		return constVal(nil, k.e.Text), true
	}
	return nil, false
}

// containsLabel reports whether labels holds l.
func containsLabel(labels []any, l any) bool {
	k, _ := colKey(l)
	for _, x := range labels {
		if xk, _ := colKey(x); xk == k {
			return true
		}
	}
	return false
}

// applyRename applies a constant columns={...} mapping; false when it is not constant.
func applyRename(n *val, m *analysis.Expr) bool {
	if m == nil || m.Kind != analysis.ExprDict {
		return false
	}
	for i := 0; i+1 < len(m.Args); i += 2 {
		from, to := m.Args[i], m.Args[i+1]
		if from.Kind != analysis.ExprConst || to.Kind != analysis.ExprConst {
			return false
		}
		col, ok := n.column(from.Const)
		if !ok {
			continue // rename ignores unknown labels
		}
		n.dropColumns([]any{from.Const}, "renamed")
		col.Name = to.Const
		n.addColumn(col)
	}
	return true
}

// axisOf returns 0 or 1 for axis arguments (0, 1, 'index', 'columns'), -1 when unknown.
func axisOf(v *val) int {
	if v == nil {
		return 0
	}
	if !v.hasConst {
		return -1
	}
	switch a := v.konst.(type) {
	case int64:
		return int(a)
	case string:
		switch a {
		case "index", "rows":
			return 0
		case "columns":
			return 1
		}
	}
	return -1
}

// dropFrame handles df.drop(...) in all its spellings.
func dropFrame(c *checker, k *callInfo, df *val) (*val, bool) {
	errs, _ := constStr(k.kw["errors"])
	var colsExpr *analysis.Expr
	var cols *val
	axis := axisOf(k.arg(1, "axis"))
	switch {
	case k.has(-1, "columns"):
		colsExpr, cols = k.argExpr(-1, "columns"), k.kw["columns"]
	case axis == 1 && k.has(0, "labels"):
		colsExpr, cols = k.argExpr(0, "labels"), k.arg(0, "labels")
	case axis == 0 && (k.has(0, "labels") || k.has(-1, "index")):
		x := k.argExpr(0, "labels")
		xv := k.arg(0, "labels")
		if x == nil {
			x, xv = k.argExpr(-1, "index"), k.kw["index"]
		}
		n := derived(df, k)
		if labels, ok := constLabels(xv); ok && errs != "ignore" {
			for _, l := range labels {
				if missing, desc := rowLabelMissing(df, l); missing {
					c.report(x.Range, analysis.SeverityError, finding.MissingKey, "KeyError",
						fmt.Sprintf("row label %s is not in the index of %s (%s), so drop raises", pyRepr(l), df.name, desc),
						0.95, []string{describe(df)}, nil)
					return nil, true
				}
			}
		}
		if len(n.Shape) == 2 {
			n.Shape[0] = -1
		}
		n.Index = nil
		return inplace(c, k, n)
	default:
		if k.kwTrue("inplace") {
			c.forget(k.recvName())
		}
		return nil, true
	}
	if errs != "ignore" && checkLabels(c, colsExpr, cols, df, "KeyError") {
		return nil, true
	}
	n := derived(df, k)
	labels, ok := constLabels(cols)
	if !ok {
		n.colsComplete, n.absent = false, nil
		n.Columns = nil
		if len(n.Shape) == 2 {
			n.Shape[1] = -1
		}
		return inplace(c, k, n)
	}
	n.dropColumns(labels, fmt.Sprintf("dropped on line %d", k.e.Range.Start.Line+1))
	return inplace(c, k, n)
}

// checkMerge checks the join keys of a merge on both sides.
func checkMerge(c *checker, k *callInfo, left, right *val) {
	if on := k.argExpr(-1, "on"); on != nil {
		if !checkLabels(c, on, k.kw["on"], left, "KeyError") {
			checkLabels(c, on, k.kw["on"], right, "KeyError")
		}
	}
	if x := k.argExpr(-1, "left_on"); x != nil {
		checkLabels(c, x, k.kw["left_on"], left, "KeyError")
	}
	if x := k.argExpr(-1, "right_on"); x != nil {
		checkLabels(c, x, k.kw["right_on"], right, "KeyError")
	}
}

// getDummies checks and models pd.get_dummies(df, columns=...).
func getDummies(c *checker, k *callInfo) *val {
	df := k.arg(0, "data")
	if df == nil || df.Kind != facts.KindDataFrame {
		return nil
	}
	line := fmt.Sprintf("one-hot encoded by get_dummies on line %d", k.e.Range.Start.Line+1)
	if x := k.argExpr(-1, "columns"); x != nil {
		if checkLabels(c, x, k.kw["columns"], df, "KeyError") {
			return nil
		}
		n := derived(df, k)
		if labels, ok := constLabels(k.kw["columns"]); ok {
			var enc []facts.Column
			for _, l := range labels {
				col, _ := df.column(l)
				enc = append(enc, col)
			}
			n.dropColumns(labels, line)
			n.colsComplete = false
			if len(n.Shape) == 2 {
				n.Shape[1] = dummiesWidth(k, df, enc)
			}
			return n
		}
		return unknownFrame(k.e.Text)
	}
	if !df.colsComplete {
		return unknownFrame(k.e.Text)
	}
	n := derived(df, k)
	var enc []any
	var encCols []facts.Column
	for _, col := range df.Columns {
		if isObjectDtype(col.Dtype) || col.Dtype == "category" {
			enc = append(enc, col.Name)
			encCols = append(encCols, col)
		}
	}
	n.dropColumns(enc, line)
	if len(enc) > 0 {
		n.colsComplete = false
		if len(n.Shape) == 2 {
			n.Shape[1] = dummiesWidth(k, df, encCols)
		}
	}
	return n
}

// dummiesWidth is the number of columns get_dummies gives df when the distinct values of
// every encoded column are counted on the whole frame (one column per value; a category
// column gets one per category; NaN none): the other columns plus those, minus one per
// encoded column with drop_first=True. -1 when unknown.
func dummiesWidth(k *callInfo, df *val, enc []facts.Column) int {
	if df.Sampled || len(df.Shape) != 2 || df.Shape[1] < 0 || !df.colsComplete {
		return -1
	}
	if k.has(-1, "dummy_na") {
		if v := k.kw["dummy_na"]; v == nil || !v.hasConst || v.konst != false {
			return -1
		}
	}
	dropFirst := false
	if k.has(-1, "drop_first") {
		v := k.kw["drop_first"]
		if v == nil || !v.hasConst {
			return -1
		}
		b, ok := v.konst.(bool)
		if !ok {
			return -1
		}
		dropFirst = b
	}
	width := df.Shape[1] - len(enc)
	for _, col := range enc {
		if col.NUnique == nil || col.Name == nil {
			return -1
		}
		n := *col.NUnique
		if dropFirst && n > 0 {
			n--
		}
		width += n
	}
	return width
}

// seriesMethod models Series methods.
func seriesMethod(c *checker, k *callInfo, s *val) (*val, bool) {
	switch k.method {
	case "astype":
		checkAstype(c, k, s)
		n := derived(s, k)
		if d, ok := astypeArg(c, k); ok {
			n.Dtype = d
			if len(n.Columns) == 1 {
				n.Columns[0].Dtype = d
				n.Columns[0].NonNumericSample = nil
			}
		} else {
			n.Dtype = ""
			n.Columns = nil
		}
		return n, true
	case "mean", "median", "std", "var":
		if bad := nonNumeric(s); bad != "" {
			c.report(k.e.Range, analysis.SeverityError, finding.ObjectColumnArith, "TypeError",
				fmt.Sprintf("%s holds strings such as %q, so .%s() cannot convert them to numbers", s.name, bad, k.method),
				0.93, []string{describe(s), "non-numeric values: " + strings.Join(quoteAll(s.Columns[0].NonNumericSample), ", ")}, nil)
		}
		return nil, true
	case "to_numpy":
		return toNumpy(s, k.e.Text), true
	case "dropna":
		n := derived(s, k)
		f := false
		n.HasNaN = &f
		if len(n.Shape) == 1 {
			n.Shape[0] = -1
		}
		if len(n.Columns) == 1 {
			zero := 0
			n.Columns[0].Nulls = &zero
		}
		return inplace(c, k, n)
	case "fillna":
		n := derived(s, k)
		if v := k.arg(0, "value"); v != nil && v.hasConst && v.Kind != facts.KindNone {
			f := false
			n.HasNaN = &f
			if len(n.Columns) == 1 {
				zero := 0
				n.Columns[0].Nulls = &zero
			}
		} else {
			n.HasNaN = nil
			if len(n.Columns) == 1 {
				n.Columns[0].Nulls = nil
			}
		}
		return inplace(c, k, n)
	case "copy", "head", "tail":
		return derived(s, k), true
	}
	return nil, false
}

// nonNumeric returns a sample string that makes numeric conversion of s fail, or "".
func nonNumeric(s *val) string {
	if s == nil || (s.Kind != facts.KindSeries && s.Kind != facts.KindNDArray) || !isObjectDtype(s.Dtype) || len(s.Columns) != 1 {
		return ""
	}
	if ns := s.Columns[0].NonNumericSample; len(ns) > 0 {
		return ns[0]
	}
	return ""
}

// nonNumericColumns lists the columns of a frame (or array built from one) that hold
// non-numeric strings, with a sample value each.
func nonNumericColumns(v *val) (names []string, sample string) {
	if v == nil || (v.Kind != facts.KindDataFrame && v.Kind != facts.KindNDArray && v.Kind != facts.KindSeries) {
		return nil, ""
	}
	if v.Kind != facts.KindDataFrame && !isObjectDtype(v.Dtype) {
		return nil, ""
	}
	for _, col := range v.Columns {
		if isObjectDtype(col.Dtype) && len(col.NonNumericSample) > 0 {
			if v.Kind != facts.KindDataFrame || col.Name == nil {
				names = append(names, "its values")
			} else {
				names = append(names, "column "+pyRepr(col.Name))
			}
			if sample == "" {
				sample = col.NonNumericSample[0]
			}
		}
	}
	if len(names) == 0 && v.Kind == facts.KindNDArray && isObjectDtype(v.Dtype) {
		for _, x := range v.Sample {
			if s, ok := x.(string); ok && !looksNumeric(s) {
				return []string{"values"}, s
			}
		}
	}
	return names, sample
}

// looksNumeric reports whether float(s) would succeed, roughly.
func looksNumeric(s string) bool {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return false
	}
	switch s {
	case "nan", "inf", "-inf", "+inf", "infinity", "-infinity":
		return true
	}
	seenDigit := false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			seenDigit = true
		case r == '.' || r == 'e' || r == '_' || ((r == '-' || r == '+') && (i == 0 || s[i-1] == 'e')):
		default:
			return false
		}
	}
	return seenDigit
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// dtypeArg reads a dtype argument: 'int', int, np.float32, 'float64', str...
func dtypeArg(v *val) (string, bool) {
	if v == nil {
		return "", false
	}
	if s, ok := constStr(v); ok {
		switch s {
		case "int":
			return "int64", true
		case "float":
			return "float64", true
		case "str":
			return "object", true
		}
		return s, true
	}
	q := v.qual
	if q == "" {
		q = v.name
	}
	q = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(q, "numpy."), "np."), "builtins.")
	switch q {
	case "int":
		return "int64", true
	case "float":
		return "float64", true
	case "str":
		return "object", true
	case "float32", "float64", "int32", "int64", "int8", "int16", "uint8", "bool", "float16":
		return q, true
	}
	return "", false
}

// astypeArg reads the dtype argument of an astype call, including the builtins int, float,
// str and bool (which visit to no value) when the cell and the kernel leave them unbound.
func astypeArg(c *checker, k *callInfo) (string, bool) {
	if d, ok := dtypeArg(k.arg(0, "dtype")); ok {
		return d, true
	}
	x := k.argExpr(0, "dtype")
	if x == nil || x.Kind != analysis.ExprName || k.arg(0, "dtype") != nil {
		return "", false
	}
	if _, bound := c.state[x.Name]; bound {
		return "", false
	}
	if f, ok := c.env.value(x.Name); ok && f.Exists {
		return "", false
	}
	if c.env.Namespace != nil && c.env.Namespace[x.Name] {
		return "", false
	}
	switch x.Name {
	case "int":
		return "int64", true
	case "float":
		return "float64", true
	case "str":
		return "object", true
	case "bool":
		return "bool", true
	}
	return "", false
}

// checkAstype reports astype(int/float) of object columns holding non-numeric strings.
func checkAstype(c *checker, k *callInfo, v *val) {
	d, ok := astypeArg(c, k)
	if !ok || !isNumericDtype(d) {
		return
	}
	if errs, _ := constStr(k.kw["errors"]); errs == "ignore" {
		return
	}
	for _, col := range v.Columns {
		if !isObjectDtype(col.Dtype) || len(col.NonNumericSample) == 0 {
			continue
		}
		bad := col.NonNumericSample[0]
		what := "int()"
		if strings.HasPrefix(d, "float") {
			what = "float"
		}
		if strings.HasPrefix(d, "int") && looksNumeric(bad) {
			what = "int()"
		}
		c.report(k.e.Value.NameRange, analysis.SeverityError, finding.ObjectColumnArith, "ValueError",
			fmt.Sprintf("column %s holds strings such as %q that %s cannot parse, so astype(%s) fails", pyRepr(col.Name), bad, what, d),
			0.95, []string{describe(v), "non-numeric values in " + pyRepr(col.Name) + ": " + strings.Join(quoteAll(col.NonNumericSample), ", ")}, nil)
		return
	}
	// int cast of float strings like '46.0' also fails: the inspector lists them as
	// numeric, so stay silent.
	if (v.Kind == facts.KindSeries || v.Kind == facts.KindDataFrame) && (strings.HasPrefix(d, "int") || strings.HasPrefix(d, "uint")) {
		checkIntCastNaN(c, k, v, d)
	}
}

// checkIntCastNaN reports astype(<numpy int>) of a float Series/column holding NaN or inf:
// pandas raises IntCastingNaNError (a ValueError) instead of casting. Nullable "Int64" and
// numpy arrays (which cast NaN to garbage) are not affected.
func checkIntCastNaN(c *checker, k *callInfo, v *val, d string) {
	cols := v.Columns
	if v.Kind == facts.KindSeries && len(cols) == 0 {
		cols = []facts.Column{{Dtype: v.Dtype}}
	}
	for _, col := range cols {
		dt := col.Dtype
		if v.Kind == facts.KindSeries && dt == "" {
			dt = v.Dtype
		}
		if !strings.HasPrefix(dt, "float") {
			continue
		}
		n := 0
		if col.Nulls != nil {
			n = *col.Nulls
		}
		inf := v.Kind == facts.KindSeries && v.HasInf != nil && *v.HasInf
		if n == 0 && !inf && !(v.Kind == facts.KindSeries && v.HasNaN != nil && *v.HasNaN) {
			continue
		}
		what := fmt.Sprintf("%d missing value(s)", n)
		if n == 0 {
			what = "missing or infinite values"
		}
		where := v.name
		if v.Kind == facts.KindDataFrame {
			where = fmt.Sprintf("column %s of %s", pyRepr(col.Name), v.name)
		}
		c.report(k.e.Value.NameRange, analysis.SeverityError, finding.NaNToInt, "IntCastingNaNError",
			fmt.Sprintf("%s is float with %s, and astype(%s) cannot turn NaN into an integer (Cannot convert non-finite values (NA or inf) to integer); fill them first (.fillna(...)) or use the nullable 'Int64' dtype", where, what, d),
			0.95, []string{describe(v)}, []analysis.Fix{replaceFix("Use the nullable 'Int64' dtype", k.argExpr(0, "dtype").Range, "'Int64'", false)})
		return
	}
}

// objectArith reports arithmetic between an object column of strings and a number.
func objectArith(c *checker, e *analysis.Expr, a, b *val) bool {
	if strSeries(a) && strSeries(b) && (e.Name == "-" || e.Name == "/" || e.Name == "*" || e.Name == "//" || e.Name == "**") {
		c.report(e.Range, analysis.SeverityError, finding.ObjectColumnArith, "TypeError",
			fmt.Sprintf("%s and %s both hold strings, and strings do not support %s (unsupported operand type(s) for %s: 'str' and 'str'); convert them first (pd.to_datetime, pd.to_numeric)", a.name, b.name, e.Name, e.Name),
			0.93, []string{describe(a), describe(b)}, nil)
		return true
	}
	s, other := a, b
	if nonNumeric(s) == "" && !strSeries(s) {
		s, other = b, a
	}
	if s == nil || other == nil || (!strSeries(s) && nonNumeric(s) == "") {
		return false
	}
	if other.Kind != facts.KindInt && other.Kind != facts.KindFloat && !(other.Kind == facts.KindSeries && isNumericDtype(other.Dtype)) {
		return false
	}
	if e.Name == "*" && other.Kind == facts.KindInt {
		return false // string repetition works
	}
	if e.Name != "+" && e.Name != "-" && e.Name != "/" && e.Name != "*" && e.Name != "//" && e.Name != "**" {
		return false
	}
	sample := nonNumeric(s)
	msg := fmt.Sprintf("%s holds strings (dtype object), so %s %s a number raises TypeError", s.name, s.name, e.Name)
	if sample != "" {
		msg = fmt.Sprintf("%s holds strings such as %q, so %s %s a number raises TypeError; convert it to numbers first", s.name, sample, s.name, e.Name)
	}
	c.report(e.Range, analysis.SeverityError, finding.ObjectColumnArith, "TypeError", msg, 0.93, []string{describe(s)}, nil)
	return true
}

// strSeries reports whether s is a Series whose values are all strings.
func strSeries(s *val) bool {
	if s == nil || s.Kind != facts.KindSeries || s.Dtype != "object" || len(s.Columns) != 1 {
		return false
	}
	et := s.Columns[0].ElementTypes
	return len(et) == 1 && et[0] == "str"
}

// checkCompare reports ordering comparisons between string columns and numbers.
func checkCompare(c *checker, e *analysis.Expr, a, b *val) {
	switch e.Name {
	case "<", ">", "<=", ">=":
	default:
		return
	}
	s, other := a, b
	if !strSeries(s) {
		s, other = b, a
	}
	if !strSeries(s) || other == nil || (other.Kind != facts.KindInt && other.Kind != facts.KindFloat) {
		return
	}
	c.report(e.Range, analysis.SeverityError, finding.ObjectColumnArith, "TypeError",
		fmt.Sprintf("%s holds strings, so comparing it with %s using %s raises TypeError", s.name, other.name, e.Name),
		0.93, []string{describe(s)}, nil)
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
func enclosingCall(e *analysis.Expr, r analysis.Range, name string) *analysis.Expr {
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
func ignoreErrorsFix(call *analysis.Expr, literal string) []analysis.Fix {
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
	return []analysis.Fix{{Title: "Ignore labels already dropped (errors=" + quoteLike(literal, "ignore") + ")",
		Edits: []analysis.Edit{{Range: analysis.Range{Start: at, End: at}, NewText: text}}}}
}
