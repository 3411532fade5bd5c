package repair

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A merge on keys of different dtypes: ids read as text on one side and as numbers on the
// other ("You are trying to merge on int64 and object columns"). The message names both
// dtypes, left first; the side that holds text gets its key converted to the other side's
// number dtype, or, where its text is not numbers, the number side's key becomes text. The
// frames, the keys and the kind of join stay.

func init() {
	register(family{name: "merge-key-dtype", gen: mergeKeysGen})
}

var (
	mergeDtypesRE = regexp.MustCompile(`trying to merge on (\w+) and (\w+) columns`)
	numberDtypeRE = regexp.MustCompile(`^(u?int|float)\d*$`)
)

func mergeKeysGen(in *Input) []Candidate {
	m := mergeDtypesRE.FindStringSubmatch(in.message())
	if m == nil || in.Facts == nil {
		return nil
	}
	ldt, rdt := m[1], m[2]
	numeric := numberDtypeRE.MatchString
	if !(ldt == "object" && numeric(rdt)) && !(rdt == "object" && numeric(ldt)) {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && (e.Value.Name == "merge" || e.Value.Name == "merge_asof" || e.Value.Name == "merge_ordered")
	}) {
		left, right, lkey, rkey, ok := mergeOperands(c)
		if !ok {
			continue
		}
		textSide, numSide, textKey, numKey, numDT := right, left, rkey, lkey, ldt
		if ldt == "object" {
			textSide, numSide, textKey, numKey, numDT = left, right, lkey, rkey, rdt
		}
		cast := func(e *analysis.Expr, key, dt string) string {
			t := e.Text
			if needsParens(e) {
				t = "(" + t + ")"
			}
			// Python's own types where they name the dtype: the edit of the number side
			// is then no longer than the text side's, so ranking by size keeps numbers first.
			spelled := map[string]string{"int64": "int", "float64": "float", "str": "str"}[dt]
			if spelled == "" {
				spelled = strconv.Quote(dt)
			}
			return fmt.Sprintf("%s.astype({%s: %s})", t, strconv.Quote(key), spelled)
		}
		out = append(out,
			Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Read the key %s of %s as numbers (%s), as %s holds it", textKey, textSide.Text, numDT, numSide.Text), Edits: []finding.Edit{replaceAt(textSide.Range, cast(textSide, textKey, numDT))}},
				Keeps: fmt.Sprintf("the same merge of %s and %s on the same keys, compared as numbers", left.Text, right.Text),
			},
			Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Read the key %s of %s as text, as %s holds it", numKey, numSide.Text, textSide.Text), Edits: []finding.Edit{replaceAt(numSide.Range, cast(numSide, numKey, "str"))}},
				Keeps: fmt.Sprintf("the same merge of %s and %s on the same keys, compared as text", left.Text, right.Text),
			})
	}
	return out
}

// mergeOperands returns the frames and key columns of a merge call: df.merge(other, on=k)
// or pd.merge(left, right, left_on=a, right_on=b). Only keys given as one string each.
func mergeOperands(c *analysis.Expr) (left, right *analysis.Expr, lkey, rkey string, ok bool) {
	module := false
	if ch, isChain := c.Value.Chain(); isChain && (ch == "pd.merge" || ch == "pandas.merge" || ch == "pd.merge_asof" || ch == "pd.merge_ordered") {
		module = true
	}
	args := c.Args
	if module {
		if len(args) >= 1 {
			left = args[0]
		}
		args = args[min(len(args), 1):]
	} else {
		left = c.Value.Value
	}
	if len(args) >= 1 {
		right = args[0]
	}
	for _, k := range c.Keywords {
		s, isStr := "", false
		if k.Value != nil && k.Value.Kind == analysis.ExprConst {
			s, isStr = k.Value.Const.(string)
		}
		switch k.Name {
		case "left":
			left = k.Value
		case "right":
			right = k.Value
		case "on":
			if !isStr {
				return nil, nil, "", "", false
			}
			lkey, rkey = s, s
		case "left_on":
			if !isStr {
				return nil, nil, "", "", false
			}
			lkey = s
		case "right_on":
			if !isStr {
				return nil, nil, "", "", false
			}
			rkey = s
		}
	}
	if left == nil || right == nil || lkey == "" || rkey == "" || left.Starred || right.Starred {
		return nil, nil, "", "", false
	}
	return left, right, lkey, rkey, true
}
