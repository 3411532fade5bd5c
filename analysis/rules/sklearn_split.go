package rules

import (
	"fmt"
	"math"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// train_test_split: the sizes of its parts, and an empty input.

// trainTestSplit checks the arrays and models the split: columns are kept, rows follow
// scikit-learn's rounding (test = ceil(n*test_size)).
func trainTestSplit(c *checker, k *callInfo) *val {
	var arrays []*val
	for i, a := range k.args {
		if k.e.Args[i].Starred {
			return nil
		}
		arrays = append(arrays, a)
	}
	for i := 1; i < len(arrays); i++ {
		if checkLengths(c, k, arrays[0], arrays[i], k.e.Args[0], k.e.Args[i]) {
			return nil
		}
	}
	if len(arrays) > 0 {
		if n, ok := arrays[0].rows(); ok && n == 0 {
			c.report(k.e.Range, finding.SeverityError, finding.EmptyInput, "ValueError",
				fmt.Sprintf("%s has no rows, so train_test_split cannot make a non-empty train set (With n_samples=0 ... the resulting train set will be empty)", arrays[0].name),
				0.95, []string{describe(arrays[0])}, nil)
			return nil
		}
	}
	nTrain, nTest := -1, -1
	if len(arrays) > 0 {
		if n, ok := arrays[0].rows(); ok {
			nTrain, nTest = splitSizes(n, k.kw["test_size"], k.kw["train_size"])
		}
	}
	out := &val{name: k.e.Text}
	out.Kind = facts.KindTuple
	for _, a := range arrays {
		for j, rows := range []int{nTrain, nTest} {
			if a == nil {
				out.elems = append(out.elems, nil)
				continue
			}
			part := a.clone()
			part.ident = new(int)
			part.fromKernel = false
			part.origin = fmt.Sprintf("split from %s on line %d", a.name, k.e.Range.Start.Line+1)
			part.name = a.name + []string{"[train]", "[test]"}[j]
			part.hasConst, part.konst, part.elems = false, nil, nil
			part.Index = nil
			part.Sample, part.Min, part.Max, part.NUnique = nil, nil, nil, nil
			if len(part.Shape) > 0 {
				part.Shape[0] = rows
			}
			if part.Len != nil {
				if rows >= 0 {
					r := rows
					part.Len = &r
				} else {
					part.Len = nil
				}
			}
			// NaN may or may not land in each part: only "no NaN" survives a split.
			if part.HasNaN != nil && *part.HasNaN {
				part.HasNaN = nil
			}
			for ci := range part.Columns {
				if part.Columns[ci].Nulls != nil && *part.Columns[ci].Nulls > 0 {
					part.Columns[ci].Nulls = nil
				}
				part.Columns[ci].NonNumericSample = nil
				part.Columns[ci].Min, part.Columns[ci].Max = nil, nil
			}
			out.elems = append(out.elems, part)
		}
	}
	return out
}

// splitSizes follows sklearn's _validate_shuffle_split for float and int sizes.
func splitSizes(n int, test, train *val) (int, int) {
	size := func(v *val) (float64, bool, bool) { // value, isFloat, known
		if v == nil || !v.hasConst {
			return 0, false, v == nil
		}
		switch x := v.konst.(type) {
		case float64:
			return x, true, true
		case int64:
			return float64(x), false, true
		}
		return 0, false, false
	}
	tv, tf, tk := size(test)
	rv, rf, rk := size(train)
	if !tk || !rk {
		return -1, -1
	}
	if test == nil && train == nil {
		tv, tf, tk = 0.25, true, true
	}
	nTest, nTrain := -1, -1
	if test != nil || train == nil {
		if tf {
			nTest = int(math.Ceil(tv * float64(n)))
		} else {
			nTest = int(tv)
		}
	}
	if train != nil {
		if rf {
			nTrain = int(math.Floor(rv * float64(n)))
		} else {
			nTrain = int(rv)
		}
	}
	switch {
	case nTrain < 0 && nTest >= 0:
		nTrain = n - nTest
	case nTest < 0 && nTrain >= 0:
		nTest = n - nTrain
	}
	if nTrain < 0 || nTest < 0 || nTrain+nTest > n {
		return -1, -1
	}
	return nTrain, nTest
}
