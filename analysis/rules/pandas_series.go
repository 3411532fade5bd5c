package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Series methods: how they transform the Series facts.

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
			c.report(k.e.Range, finding.SeverityError, finding.ObjectColumnArith, "TypeError",
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
