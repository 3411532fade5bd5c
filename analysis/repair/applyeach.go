package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A function written for one value called on a whole column: def bucket(age): if age > 60
// ... applied as bucket(df["age"]) asks the Series for one truth value ("The truth value of
// a Series is ambiguous"). The function means each value, so the column applies it:
// df["age"].apply(bucket); a frame applies it row by row, df.apply(f, axis=1), when the
// function reads fields of its argument; a NumPy array vectorises it. The function and its
// arguments stay; only how it meets the data changes.

func init() {
	register(family{name: "apply-each", gen: applyEachGen})
}

func applyEachGen(in *Input) []Candidate {
	if !ambiguousTruth(in) {
		return nil
	}
	isCall := func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && len(e.Args) >= 1 && e.Args[0] != nil && !e.Args[0].Starred
	}
	calls := in.exprsOnLine(in.crashLine(), isCall)
	if def, nested := innermostDef(enclosing(in.Facts.Statements, in.crashLine())); def != nil && !nested {
		// Raised inside a function this cell defines: the calls to it, outside it, are
		// where it meets the data.
		calls = append(calls, walkExprs(in.Facts.Statements, func(r finding.Range) bool {
			return r.End.Line < def.Range.Start.Line || r.Start.Line > def.Range.End.Line
		}, func(e *analysis.Expr) bool {
			return isCall(e) && e.Value.Name == def.Name
		})...)
	}
	var out []Candidate
	for _, c := range calls {
		f := c.Value.Name
		_, def, ok := in.definition(f)
		if !ok || len(def.Params) == 0 || strings.HasPrefix(def.Params[0], "*") {
			continue
		}
		arg := c.Args[0]
		text := arg.Text
		if needsParens(arg) {
			text = "(" + text + ")"
		}
		rest := ""
		if len(c.Args) > 1 {
			var ts []string
			for _, a := range c.Args[1:] {
				if a == nil || a.Starred {
					ts = nil
					break
				}
				ts = append(ts, a.Text)
			}
			if ts == nil {
				continue
			}
			rest = ", args=(" + strings.Join(ts, ", ") + ",)"
		}
		for _, k := range c.Keywords {
			if k.Name == "" || k.Value == nil {
				rest = "\x00"
				break
			}
			rest += ", " + k.Name + "=" + k.Value.Text
		}
		if rest == "\x00" {
			continue
		}
		kind := in.exprKind(arg)
		switch {
		case kind == facts.KindDataFrame:
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Apply %s() to each row: %s.apply(%s, axis=1)", f, text, f), Edits: []finding.Edit{replaceAt(c.Range, fmt.Sprintf("%s.apply(%s, axis=1%s)", text, f, rest))}},
				Keeps: fmt.Sprintf("%s() unchanged, given one row of %s at a time", f, arg.Text),
			})
		case kind == facts.KindSeries || (kind == "" && arg.Kind == analysis.ExprSubscript):
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Apply %s() to each value: %s.apply(%s)", f, text, f), Edits: []finding.Edit{replaceAt(c.Range, fmt.Sprintf("%s.apply(%s%s)", text, f, rest))}},
				Keeps: fmt.Sprintf("%s() unchanged, given one value of %s at a time", f, arg.Text),
			})
		case kind == facts.KindNDArray && len(c.Args) == 1 && len(c.Keywords) == 0 && in.inNamespace("np"):
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Apply %s() to each element: np.vectorize(%s)(%s)", f, f, arg.Text), Edits: []finding.Edit{replaceAt(c.Range, fmt.Sprintf("np.vectorize(%s)(%s)", f, arg.Text))}},
				Keeps: fmt.Sprintf("%s() unchanged, given one element of %s at a time", f, arg.Text),
			})
		}
	}
	return out
}

// exprKind is the runtime kind of e when it is a name or attribute chain the facts know, or
// a column of a frame they know (a Series); "" when unknown.
func (in *Input) exprKind(e *analysis.Expr) string {
	if e == nil {
		return ""
	}
	if name, ok := e.Chain(); ok {
		if v, ok := in.value(name); ok {
			return v.Kind
		}
		return ""
	}
	if e.Kind == analysis.ExprSubscript && e.Index != nil && e.Index.Kind == analysis.ExprConst {
		if name, ok := e.Value.Chain(); ok {
			if v, ok := in.value(name); ok && v.Kind == facts.KindDataFrame {
				return facts.KindSeries
			}
		}
	}
	return ""
}
