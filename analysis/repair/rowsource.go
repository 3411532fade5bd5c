package repair

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// X and y taken from different frames: rows dropped from a copy (clean = df.dropna()) and
// X built from it while y still comes from the original ("Found input variables with
// inconsistent numbers of samples: [29, 30]"). The two must come from the same rows, so
// one side is taken from the other's frame, the side of the frame with more rows first:
// rows are removed on purpose, seldom added. The columns each side reads stay.

func init() {
	register(family{name: "row-source", gen: rowSourceGen})
}

func rowSourceGen(in *Input) []Candidate {
	if !inconsistent.MatchString(in.message()) || in.Facts == nil {
		return nil
	}
	args := pairArgs(in)
	if len(args) < 2 || args[0].Kind != analysis.ExprName || args[1].Kind != analysis.ExprName {
		return nil
	}
	type side struct {
		site buildSite
		base *analysis.Expr
		rows int
	}
	var sides [2]side
	for i, a := range args[:2] {
		s, _, ok := in.binding(a.Name, -1, in.crashLine())
		if !ok {
			return nil
		}
		b := baseFrame(s.value)
		if b == nil || b == s.value {
			return nil // a frame itself, or a value not read from a frame
		}
		sides[i] = side{site: s, base: b, rows: in.rowCount(b.Name)}
	}
	if sides[0].base.Name == sides[1].base.Name {
		return nil
	}
	// The side whose frame has more rows moves first; unknown counts keep y moving first.
	order := []int{1, 0}
	if sides[0].rows > sides[1].rows && sides[1].rows >= 0 {
		order = []int{0, 1}
	}
	var out []Candidate
	for _, i := range order {
		from, to := sides[i], sides[1-i]
		e := replaceAt(from.base.Range, to.base.Name)
		e.Cell = from.site.cell
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Take %s from %s, the frame %s comes from%s", args[i].Name, to.base.Name, args[1-i].Name, from.site.where()), Edits: []finding.Edit{e}},
			Keeps: fmt.Sprintf("%s reads the same columns, from the rows %s has", args[i].Name, args[1-i].Name),
		})
	}
	return out
}

// pairArgs are the first arguments of the call that compares sample counts on the crash
// line: an estimator method's, else the first call's with two positional names.
func pairArgs(in *Input) []*analysis.Expr {
	if _, args := callArgs(in); len(args) >= 2 {
		return args
	}
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		if len(c.Args) >= 2 && c.Args[0].Kind == analysis.ExprName && c.Args[1].Kind == analysis.ExprName {
			return c.Args
		}
	}
	return nil
}

// baseFrame is the name an expression is read from: df in df[["a"]], df.a, df.drop(...)
// and df.loc[...]["y"]; nil when it starts elsewhere (a call of a function, a literal).
func baseFrame(e *analysis.Expr) *analysis.Expr {
	for e != nil {
		switch e.Kind {
		case analysis.ExprName:
			return e
		case analysis.ExprSubscript, analysis.ExprAttribute:
			e = e.Value
		case analysis.ExprCall:
			if e.Value == nil || e.Value.Kind != analysis.ExprAttribute {
				return nil
			}
			e = e.Value
		default:
			return nil
		}
	}
	return nil
}

// rowCount is the number of rows the facts know for name, -1 when unknown.
func (in *Input) rowCount(name string) int {
	v, ok := in.value(name)
	switch {
	case !ok:
		return -1
	case len(v.Shape) > 0:
		return v.Shape[0]
	case v.Len != nil:
		return *v.Len
	}
	return -1
}

// X filtered and y not, or the other way round, with both still pandas objects whose
// index names their rows: X = X[X["income"] <= cap] in an earlier cell and then fit(X,
// y). The longer side keeps the rows the shorter one kept, by index, before the crash
// statement: y = y.loc[X.index]. Every later line of the cell reads the aligned pair.

func init() {
	register(family{name: "row-align", gen: rowAlignGen})
}

func rowAlignGen(in *Input) []Candidate {
	if in.exception() != "ValueError" || !sizesDiffer(in.message()) || in.Facts == nil {
		return nil
	}
	args := pairArgs(in)
	if len(args) < 2 || args[0].Kind != analysis.ExprName || args[1].Kind != analysis.ExprName || args[0].Name == args[1].Name {
		return nil
	}
	rows := func(e *analysis.Expr) int {
		v, ok := in.value(e.Name)
		if !ok || v.Kind != facts.KindDataFrame && v.Kind != facts.KindSeries || len(v.Shape) == 0 {
			return -1
		}
		return v.Shape[0]
	}
	a, b := args[0], args[1]
	ra, rb := rows(a), rows(b)
	if ra < 0 || rb < 0 || ra == rb {
		return nil
	}
	// The same rows only when both are read from one frame: X filtered on its own
	// (X = X[mask]) after X = df[cols], y = df["y"]. Two frames (a cleaned copy and the
	// original) are row-source's; unrelated frames have no rows in common.
	if ba, bb := in.rowBase(a.Name), in.rowBase(b.Name); ba == "" || ba != bb {
		return nil
	}
	short, long := a, b
	if ra > rb {
		short, long = b, a
	}
	l := statementStart(in.Text, in.crashLine())
	code := fmt.Sprintf("%s = %s.loc[%s.index]", long.Name, long.Name, short.Name)
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Keep the rows of %s that %s kept: %s", long.Name, short.Name, code), Edits: []finding.Edit{insertBefore(in.Text, l, code)}},
		Keeps: fmt.Sprintf("%s and %s describe the same rows again, matched by index; %s's rows that %s dropped go", short.Name, long.Name, long.Name, short.Name),
	}}
}

// rowBase returns the frame name's rows are read from: the base of its binding's value
// (df in X = df[["a"]]), past bindings that filter the name itself (X = X[X.a > 0] goes back
// to X's earlier binding); "" when a binding is no read of a frame.
func (in *Input) rowBase(name string) string {
	pos, before := -1, in.crashLine()
	for step := 0; step < maxOriginDepth; step++ {
		s, p, ok := in.binding(name, pos, before)
		if !ok {
			return name // bound by no plain assignment: the frame itself
		}
		b := baseFrame(s.value)
		if b == nil {
			return ""
		}
		if b.Name != name {
			return b.Name
		}
		pos, before = p, s.stmt.Range.Start.Line
	}
	return ""
}
