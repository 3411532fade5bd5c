package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// checker walks one cell's statements in order with an abstract state: what is known about
// each name at the current statement. Rules run as expressions are visited (inner first), so
// a rule sees the facts established by every earlier statement of the cell.
type checker struct {
	cellID string
	cf     *analysis.CellFacts
	env    *Env
	// state holds names the cell has bound so far; a nil entry means "bound, unknown".
	state map[string]*val
	// deleted holds names the cell deleted with `del` (reading them is a NameError).
	deleted map[string]finding.Range
	// vals memoises visited expressions of the current statement.
	vals map[*analysis.Expr]*val
	// depth is how many visits are under way (see maxVisitDepth).
	depth int
	// cond counts enclosing if/for/while bodies: a crash there is only likely.
	cond int
	// guarded counts enclosing try bodies: an exception there may be handled.
	guarded int
	// stmt is the statement being checked; stmtFailed is set once a certain error was
	// reported in it (what Python would evaluate after the exception never runs).
	stmt       *analysis.Statement
	stmtFailed bool
	// cellFailed is set after the first certain error outside if/loop/try bodies.
	cellFailed bool
	// attrGuards counts enclosing `if hasattr(x, 'a'):` checks by "x.a"; keyGuards the
	// constant keys of enclosing `if 'a' in ...:` tests.
	attrGuards map[string]int
	keyGuards  map[string]int
	findings   []finding.Finding
	seen       map[string]bool
}

func newChecker(cellID string, cf *analysis.CellFacts, env *Env) *checker {
	if env == nil {
		env = &Env{}
	}
	return &checker{cellID: cellID, cf: cf, env: env, state: map[string]*val{},
		deleted: map[string]finding.Range{}, seen: map[string]bool{}}
}

// lookup returns what is known of name at this point of the cell.
func (c *checker) lookup(name string) *val {
	if v, ok := c.state[name]; ok {
		return v
	}
	if _, ok := c.deleted[name]; ok {
		return nil
	}
	if f, ok := c.env.value(name); ok && f.Exists {
		if shadowable[name] && !plainData(f) {
			return nil // the builtin itself: the rules know it by name
		}
		return fromFacts(name, f, c.env)
	}
	if m := conventionalModule(name, c); m != "" {
		return &val{Value: facts.Value{Kind: facts.KindPyModule}, module: m, name: name}
	}
	return nil
}

// fromKernelName reports whether name still refers to the kernel's object (the cell has not
// rebound it).
func (c *checker) fromKernelName(name string) bool {
	_, bound := c.state[name]
	_, del := c.deleted[name]
	return !bound && !del
}

// conventionalModule maps the usual aliases to modules when the kernel imported them (or we
// do not know what it imported) and the name is not something else in the kernel.
func conventionalModule(name string, c *checker) string {
	m, ok := map[string]string{"np": "numpy", "pd": "pandas", "torch": "torch", "nn": "torch.nn",
		"F": "torch.nn.functional", "plt": "matplotlib.pyplot", "sns": "seaborn", "sm": "statsmodels.api"}[name]
	if !ok {
		return ""
	}
	if c.env.Namespace != nil && !c.env.Namespace[name] {
		return ""
	}
	if f, ok := c.env.value(name); ok && (!f.Exists || (f.Kind != "" && f.Kind != facts.KindPyModule)) {
		return ""
	}
	return m
}

// run checks every statement of the cell in order.
func (c *checker) run() {
	checkNames(c)
	c.block(c.cf.Statements)
}

// block runs statements in order.
func (c *checker) block(stmts []*analysis.Statement) {
	for _, s := range stmts {
		c.statement(s)
	}
}

func (c *checker) statement(s *analysis.Statement) {
	if s == nil {
		return
	}
	c.stmt = s
	c.stmtFailed = false
	c.vals = map[*analysis.Expr]*val{}
	switch s.Kind {
	case analysis.StmtAssign, analysis.StmtAnnAssign:
		v := c.visit(s.Value)
		for _, t := range s.Targets {
			c.assign(t, v, s.Value)
		}
	case analysis.StmtAugAssign:
		c.visit(s.Value)
		if len(s.Targets) == 1 {
			t := s.Targets[0]
			c.visit(t)
			c.assign(t, nil, nil)
		}
	case analysis.StmtExpr, analysis.StmtReturn:
		c.visit(s.Value)
	case analysis.StmtImport:
		for _, im := range c.cf.Imports {
			if within(im.Range, s.Range) {
				c.bindImport(im)
			}
		}
	case analysis.StmtDef, analysis.StmtClass:
		if s.Name != "" {
			c.bindName(s.Name, &val{Value: facts.Value{Kind: facts.KindCallable}, fn: s, name: s.Name})
		}
	case analysis.StmtDelete:
		for _, t := range s.Targets {
			c.delete(t)
		}
	case analysis.StmtWith:
		c.visit(s.Value)
		for _, t := range s.Targets {
			c.assign(t, nil, nil)
		}
		c.block(s.Body)
	case analysis.StmtFor, analysis.StmtWhile, analysis.StmtIf, analysis.StmtTry:
		if s.Kind == analysis.StmtFor || s.Kind == analysis.StmtWhile || s.Kind == analysis.StmtIf {
			c.visit(s.Value) // the iterable or the first test runs at least once
		}
		if s.Kind == analysis.StmtFor {
			if it := c.vals[s.Value]; it != nil && (it.Kind == facts.KindInt || it.Kind == facts.KindFloat) {
				t := map[string]string{facts.KindInt: "int", facts.KindFloat: "float"}[it.Kind]
				var fixes []finding.Fix
				if t == "int" {
					fixes = append(fixes, replaceFix("Iterate over range()", s.Value.Range, "range("+s.Value.Text+")", true))
				}
				c.report(s.Value.Range, finding.SeverityError, finding.NotIterable, "TypeError",
					fmt.Sprintf("%s is a single %s, so a for loop cannot iterate over it ('%s' object is not iterable)", s.Value.Text, t, t),
					0.95, []string{describe(it)}, fixes)
			}
			checkDropInLoop(c, s, c.vals[s.Value])
			if c.runsOnce(s) {
				c.firstIteration(s)
			}
		}
		touched := map[string]bool{}
		touchedBy(s.Body, touched)
		for _, t := range s.Targets {
			namesIn(t, touched)
		}
		for n := range touched {
			c.forget(n)
		}
		if s.Kind == analysis.StmtTry {
			c.guarded++
		} else {
			c.cond++
		}
		for _, key := range membershipKeys(s.Value) {
			if c.keyGuards == nil {
				c.keyGuards = map[string]int{}
			}
			c.keyGuards[key]++
			defer func(key string) { c.keyGuards[key]-- }(key)
		}
		if g := hasattrGuard(s); g != "" {
			if c.attrGuards == nil {
				c.attrGuards = map[string]int{}
			}
			c.attrGuards[g]++
			defer func() { c.attrGuards[g]-- }()
		}
		c.block(s.Body)
		if s.Kind == analysis.StmtTry {
			c.guarded--
		} else {
			c.cond--
		}
		for n := range touched {
			c.forget(n)
		}
	default:
		c.visit(s.Value)
	}
}

// runsOnce reports whether a for loop certainly runs its body at least once: it iterates
// over range() of constants with a non-empty range, or a value of known non-zero length.
func (c *checker) runsOnce(s *analysis.Statement) bool {
	it := s.Value
	if it == nil {
		return false
	}
	if it.Kind == analysis.ExprCall && it.Value != nil && it.Value.Kind == analysis.ExprName && it.Value.Name == "range" && len(it.Keywords) == 0 {
		if _, rebound := c.state["range"]; rebound {
			return false
		}
		var n []int
		for _, a := range it.Args {
			x, ok := constInt(c.vals[a])
			if !ok || a.Starred {
				return false
			}
			n = append(n, x)
		}
		switch len(n) {
		case 1:
			return n[0] >= 1
		case 2:
			return n[1] > n[0]
		case 3:
			return n[2] > 0 && n[1] > n[0]
		}
		return false
	}
	v := c.vals[it]
	if v == nil || (v.Kind != facts.KindList && v.Kind != facts.KindTuple && v.Kind != facts.KindNDArray && v.Kind != facts.KindTensor) {
		return false
	}
	n, ok := v.rows()
	if v.hasConst {
		if l, isList := v.konst.([]any); isList {
			n, ok = len(l), true
		}
	}
	return ok && n > 0
}

// firstIteration checks the leading straight-line statements of a loop body that certainly
// runs, as its first iteration runs them: with the facts from before the loop, so a crash
// there stays certain (a training loop's `out = model(X)`). It stops at the first statement
// that may branch (if, break, nested loops...). The loop variables are unknown.
func (c *checker) firstIteration(s *analysis.Statement) {
	for _, t := range s.Targets {
		c.assign(t, nil, nil)
	}
	for _, b := range s.Body {
		switch b.Kind {
		case analysis.StmtAssign, analysis.StmtAnnAssign, analysis.StmtAugAssign, analysis.StmtExpr:
		default:
			return
		}
		c.statement(b)
		if c.cellFailed {
			return
		}
	}
	c.stmt, c.stmtFailed = s, false
}

// within reports whether r lies inside outer.
func within(r, outer finding.Range) bool {
	return !r.Start.Before(outer.Start) && !outer.End.Before(r.End)
}
