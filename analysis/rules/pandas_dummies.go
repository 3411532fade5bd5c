package rules

import (
	"fmt"

	"github.com/premortem/premortem/facts"
)

// pd.get_dummies: the encoded frame's columns and width, from the kernel's column facts.

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
