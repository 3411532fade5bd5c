package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// pandas attributes: df.col reads, .values, .T, .dtypes, .shape and .columns, the .str
// accessor on values that are not strings, and how a frame becomes a numpy array.

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
	c.report(e.NameRange, finding.SeverityError, finding.StrAccessor, "AttributeError",
		fmt.Sprintf("%s has dtype %s, and .str only works on string values (Can only use .str accessor with string values!)", base.name, d),
		0.96, []string{describe(base)},
		[]finding.Fix{replaceFix("Convert to strings first", finding.Range{Start: e.Value.Range.End, End: e.Value.Range.End}, ".astype(str)", false)})
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
