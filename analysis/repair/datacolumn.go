package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A column named by a string that the frame handed to the same call does not have, when the
// library says so in its own words rather than with a KeyError: seaborn's "Could not
// interpret value `sex` for parameter `x`" (or "Could not interpret input 'sex'"), plotly's
// and statsmodels' like it. The quoted value is the string literal on the crash line; the
// frames are those the call is given (data=df, or df as its first argument); the nearest
// column name of theirs (a different case first) replaces it.

func init() {
	register(family{name: "data-column", gen: dataColumnGen})
}

func dataColumnGen(in *Input) []Candidate {
	if e := in.exception(); (e != "ValueError" && e != "KeyError" && e != "PatsyError") || in.Facts == nil {
		return nil
	}
	msg := in.message()
	if !strings.Contains(msg, "interpret") && !strings.Contains(msg, "not found") && !strings.Contains(msg, "not in") {
		return nil
	}
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		var frames []*analysis.Expr
		if d := c.Keyword("data"); d != nil {
			frames = append(frames, d)
		}
		if len(c.Args) > 0 {
			frames = append(frames, c.Args[0])
		}
		var pool []string
		for _, f := range frames {
			if v, ok := in.value(f.Text); ok && v.Kind == facts.KindDataFrame {
				for _, col := range v.Columns {
					if s, ok := col.Name.(string); ok {
						pool = append(pool, s)
					}
				}
			}
		}
		if len(pool) == 0 {
			continue
		}
		strs := append([]*analysis.Expr{}, c.Args...)
		for _, k := range c.Keywords {
			strs = append(strs, k.Value)
		}
		for _, s := range strs {
			lit, ok := s.Const.(string)
			if s.Kind != analysis.ExprConst || !ok || lit == "" || !quotes(msg, lit) || contains(pool, lit) {
				continue
			}
			for _, col := range nearestColumn(lit, pool) {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use column %s (the frame has no %s)", strconv.Quote(col), strconv.Quote(lit)), Edits: []finding.Edit{replaceAt(s.Range, quoteLike(s.Text, col))}},
					Keeps: fmt.Sprintf("the same plot or model, on the column %s the frame does have", col),
				})
			}
		}
	}
	return out
}

// quotes reports whether msg quotes lit ('lit', "lit" or `lit`).
func quotes(msg, lit string) bool {
	for _, q := range []string{"'", "\"", "`"} {
		if strings.Contains(msg, q+lit+q) {
			return true
		}
	}
	return false
}

// nearestColumn returns the columns of pool that differ from lit only in case, else the
// nearest by spelling.
func nearestColumn(lit string, pool []string) []string {
	var out []string
	for _, p := range pool {
		if strings.EqualFold(p, lit) {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return out
	}
	return nearest(lit, pool, 2)
}

// quoteLike writes s as a string literal with the quote character old uses.
func quoteLike(old, s string) string {
	q := "'"
	if strings.HasPrefix(old, "\"") {
		q = "\""
	}
	return q + strings.ReplaceAll(s, q, "\\"+q) + q
}
