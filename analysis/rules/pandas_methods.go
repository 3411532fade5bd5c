package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// pandas functions and DataFrame methods: how each transforms the frame facts (drop,
// rename, inplace variants, merge, ...) and the rules their arguments must satisfy.

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
				c.report(k.e.Range, finding.SeverityError, finding.ObjectColumnArith, "ValueError",
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
	} else if r := k.recvExpr().Root(); r != "" {
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
					c.report(x.Range, finding.SeverityError, finding.MissingKey, "KeyError",
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
