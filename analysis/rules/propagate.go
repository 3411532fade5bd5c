package rules

import (
	"fmt"
	"strings"

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
	deleted map[string]analysis.Range
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
	findings   []analysis.Finding
	seen       map[string]bool
}

// callInfo is one call being visited: its receiver (for methods), callee value, qualified
// name when the callee resolves to a library function, and the visited arguments.
type callInfo struct {
	e      *analysis.Expr
	recv   *val   // receiver of a method call
	method string // method name, "" for plain calls
	fn     *val   // the callee's value
	qual   string // "pandas.get_dummies", "torch.nn.Linear", ... when known
	args   []*val
	kw     map[string]*val
}

// arg returns positional argument i or keyword name (nil when absent or unknown).
func (k *callInfo) arg(i int, name string) *val {
	if name != "" {
		if v, ok := k.kw[name]; ok {
			return v
		}
	}
	if i >= 0 && i < len(k.args) {
		return k.args[i]
	}
	return nil
}

// argExpr returns the expression of positional argument i or keyword name.
func (k *callInfo) argExpr(i int, name string) *analysis.Expr {
	if name != "" {
		if x := k.e.Keyword(name); x != nil {
			return x
		}
	}
	if i >= 0 && i < len(k.e.Args) {
		return k.e.Args[i]
	}
	return nil
}

// has reports whether argument i or keyword name is given at all.
func (k *callInfo) has(i int, name string) bool { return k.argExpr(i, name) != nil }

// recvName returns the receiver's plain name ("df" in df.drop(...)), or "".
func (k *callInfo) recvName() string {
	if k.e.Value == nil || k.e.Value.Kind != analysis.ExprAttribute {
		return ""
	}
	if x := k.e.Value.Value; x != nil && x.Kind == analysis.ExprName {
		return x.Name
	}
	return ""
}

// recvExpr returns the receiver expression of a method call.
func (k *callInfo) recvExpr() *analysis.Expr {
	if k.e.Value == nil || k.e.Value.Kind != analysis.ExprAttribute {
		return nil
	}
	return k.e.Value.Value
}

// kwTrue reports whether keyword name is the constant True.
func (k *callInfo) kwTrue(name string) bool {
	v := k.kw[name]
	return v != nil && v.hasConst && v.konst == true
}

func newChecker(cellID string, cf *analysis.CellFacts, env *Env) *checker {
	if env == nil {
		env = &Env{}
	}
	return &checker{cellID: cellID, cf: cf, env: env, state: map[string]*val{},
		deleted: map[string]analysis.Range{}, seen: map[string]bool{}}
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
				var fixes []analysis.Fix
				if t == "int" {
					fixes = append(fixes, replaceFix("Iterate over range()", s.Value.Range, "range("+s.Value.Text+")", true))
				}
				c.report(s.Value.Range, analysis.SeverityError, finding.NotIterable, "TypeError",
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
func within(r, outer analysis.Range) bool {
	return !r.Start.Before(outer.Start) && !outer.End.Before(r.End)
}

// bindImport records what an import binds.
func (c *checker) bindImport(im analysis.Import) {
	if im.Star {
		return
	}
	v := &val{name: im.Bound()}
	switch {
	case im.Name == "":
		v.Kind = facts.KindPyModule
		if im.Alias != "" {
			v.module = im.Module
		} else {
			v.module = im.Bound()
		}
	default:
		// from m import n: a submodule, a class or a function; keep its qualified name.
		v.qual = im.Module + "." + im.Name
		if isModuleName(v.qual) {
			v.Kind = facts.KindPyModule
			v.module = v.qual
		}
	}
	c.bindName(im.Bound(), v)
}

// isModuleName reports whether a from-import names a module we resolve calls through.
func isModuleName(q string) bool {
	switch q {
	case "torch.nn", "torch.nn.functional", "matplotlib.pyplot", "numpy.random", "torch.optim":
		return true
	}
	return false
}

// bindName binds name to v (nil = unknown) at this point of the cell.
func (c *checker) bindName(name string, v *val) {
	if v != nil {
		n := *v
		if n.name == "" || !n.fromKernel || n.name != name {
			n.name = name
		}
		v = &n
	}
	c.state[name] = v
	delete(c.deleted, name)
}

// forget makes name unknown from here on (and anything aliased with it).
func (c *checker) forget(name string) {
	old := c.lookup(name)
	c.state[name] = nil
	if old != nil && old.ident != nil {
		for n, v := range c.state {
			if v != nil && v.ident == old.ident {
				c.state[n] = nil
			}
		}
	}
}

// rebind replaces what is known of the object name refers to after an in-place change.
func (c *checker) rebind(name string, v *val) {
	if name == "" {
		return
	}
	old := c.lookup(name)
	if old != nil && old.ident != nil {
		for n, o := range c.state {
			if o != nil && o.ident == old.ident && n != name {
				c.state[n] = nil
			}
		}
	}
	if v != nil && old != nil {
		v.ident = old.ident
		v.name = name
	}
	c.state[name] = v
}

// assign binds target to v.
func (c *checker) assign(t *analysis.Expr, v *val, src *analysis.Expr) {
	if t == nil {
		return
	}
	switch t.Kind {
	case analysis.ExprName:
		if v != nil && v.ident == nil {
			v.ident = new(int)
		}
		if v != nil && v.origin == "" && !v.fromKernel {
			v.origin = "line " + itoa(t.Range.Start.Line+1)
		}
		c.bindName(t.Name, v)
	case analysis.ExprTuple, analysis.ExprList:
		for i, x := range t.Args {
			var e *val
			if v != nil && len(v.elems) == len(t.Args) && !x.Starred {
				e = v.elems[i]
			}
			c.assign(x, e, nil)
		}
	case analysis.ExprSubscript:
		c.visit(t.Value)
		c.visit(t.Index)
		c.assignItem(t, v)
	case analysis.ExprAttribute:
		c.visit(t.Value)
		if root := rootName(t); root != "" {
			c.forget(root)
		}
	}
}

// assignItem handles obj[key] = v: a new or replaced column, a dict key, an array element.
func (c *checker) assignItem(t *analysis.Expr, v *val) {
	root := rootName(t)
	if t.Value.Kind != analysis.ExprName {
		if root != "" {
			c.forget(root)
		}
		return
	}
	obj := c.lookup(t.Value.Name)
	if obj == nil {
		return
	}
	key := c.vals[t.Index]
	switch obj.Kind {
	case facts.KindDataFrame:
		if v != nil && (v.Kind == facts.KindNDArray || v.Kind == facts.KindList || v.Kind == facts.KindTensor) {
			nv, ok1 := v.rows()
			nd, ok2 := obj.rows()
			if ok1 && ok2 && nv != nd && !(v.Kind == facts.KindNDArray && len(v.Shape) == 0) {
				c.report(t.Range, analysis.SeverityError, finding.LengthMismatch, "ValueError",
					fmt.Sprintf("%s has %d values but %s has %d rows (Length of values (%d) does not match length of index (%d))", v.name, nv, obj.name, nd, nv, nd),
					0.95, []string{describe(v), describe(obj)}, nil)
			}
		}
		n := obj.clone()
		labels, ok := constLabels(key)
		if !ok {
			n.colsComplete = false
			n.absent = nil
			c.rebind(t.Value.Name, n)
			return
		}
		for _, l := range labels {
			col := facts.Column{Name: l}
			if v != nil {
				col.Dtype = v.Dtype
				if v.Kind == facts.KindSeries && len(v.Columns) == 1 {
					col = v.Columns[0]
					col.Name = l
				}
			}
			n.addColumn(col)
		}
		c.rebind(t.Value.Name, n)
	case facts.KindDict:
		n := obj.clone()
		if s, ok := constStr(key); ok && n.KeysComplete {
			n.Keys = append(append([]any(nil), n.Keys...), s)
		} else {
			n.KeysComplete = false
		}
		c.rebind(t.Value.Name, n)
	case facts.KindNDArray, facts.KindTensor:
		// element assignment keeps shape; dtype may upcast values but not the array.
		n := obj.clone()
		n.HasNaN, n.Min, n.Max = nil, nil, nil
		c.rebind(t.Value.Name, n)
	default:
		c.forget(t.Value.Name)
	}
}

// delete handles `del x` and `del df['a']`.
func (c *checker) delete(t *analysis.Expr) {
	switch t.Kind {
	case analysis.ExprName:
		if c.cond == 0 && c.guarded == 0 {
			delete(c.state, t.Name)
			c.deleted[t.Name] = t.Range
		} else {
			c.forget(t.Name)
		}
	case analysis.ExprTuple, analysis.ExprList:
		for _, x := range t.Args {
			c.delete(x)
		}
	case analysis.ExprSubscript:
		c.visit(t)
		if t.Value.Kind == analysis.ExprName {
			obj := c.lookup(t.Value.Name)
			key := c.vals[t.Index]
			if obj != nil && obj.Kind == facts.KindDataFrame {
				if labels, ok := constLabels(key); ok {
					n := obj.clone()
					n.dropColumns(labels, "deleted on line "+itoa(t.Range.Start.Line+1))
					c.rebind(t.Value.Name, n)
					return
				}
			}
			c.forget(t.Value.Name)
		}
	default:
		if r := rootName(t); r != "" {
			c.forget(r)
		}
	}
}

// rootName returns the name at the root of an attribute/subscript chain.
func rootName(e *analysis.Expr) string {
	for e != nil {
		switch e.Kind {
		case analysis.ExprName:
			return e.Name
		case analysis.ExprAttribute, analysis.ExprSubscript, analysis.ExprCall:
			e = e.Value
		default:
			return ""
		}
	}
	return ""
}

// touchedBy collects names a block may rebind or change in place: assignment targets, the
// receivers of method calls and names passed to calls.
func touchedBy(stmts []*analysis.Statement, out map[string]bool) {
	for _, s := range stmts {
		for _, t := range s.Targets {
			namesIn(t, out)
		}
		if s.Name != "" {
			out[s.Name] = true
		}
		mutatedIn(s.Value, out)
		touchedBy(s.Body, out)
	}
}

// namesIn adds the root names of targets.
func namesIn(t *analysis.Expr, out map[string]bool) {
	if t == nil {
		return
	}
	switch t.Kind {
	case analysis.ExprTuple, analysis.ExprList:
		for _, x := range t.Args {
			namesIn(x, out)
		}
	default:
		if r := rootName(t); r != "" {
			out[r] = true
		}
	}
}

// mutatedIn adds names that calls in e may change in place.
func mutatedIn(e *analysis.Expr, out map[string]bool) {
	if e == nil {
		return
	}
	pure := e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && readOnlyBuiltin[e.Value.Name]
	if e.Kind == analysis.ExprCall && !pure {
		if e.Value != nil && e.Value.Kind == analysis.ExprAttribute {
			if r := rootName(e.Value.Value); r != "" {
				out[r] = true
			}
		}
		for _, a := range e.Args {
			if a.Kind == analysis.ExprName {
				out[a.Name] = true
			}
		}
		for _, k := range e.Keywords {
			if k.Value != nil && k.Value.Kind == analysis.ExprName {
				out[k.Value.Name] = true
			}
		}
	}
	mutatedIn(e.Value, out)
	mutatedIn(e.Index, out)
	for _, a := range e.Args {
		mutatedIn(a, out)
	}
	for _, k := range e.Keywords {
		mutatedIn(k.Value, out)
	}
}

// maxVisitDepth bounds how deep visit recurses into an expression: below it a value is
// unknown and no rule runs. analysis already cuts syntax trees at a smaller depth, so this
// only guards expressions built some other way; the rules must never overflow the stack.
const maxVisitDepth = 4096

// visit evaluates e once per statement, running the rules on it after its children.
func (c *checker) visit(e *analysis.Expr) *val {
	if e == nil {
		return nil
	}
	if v, ok := c.vals[e]; ok {
		return v
	}
	if c.depth >= maxVisitDepth {
		return nil
	}
	c.depth++
	defer func() { c.depth-- }()
	var v *val
	switch e.Kind {
	case analysis.ExprName:
		v = c.lookup(e.Name)
		if at, gone := c.deleted[e.Name]; gone {
			c.report(e.Range, analysis.SeverityError, finding.UndefinedName, "NameError",
				fmt.Sprintf("name '%s' is not defined: the cell deleted it on line %d", e.Name, at.Start.Line+1),
				0.95, []string{fmt.Sprintf("del %s on line %d", e.Name, at.Start.Line+1)}, nil)
		}
	case analysis.ExprConst:
		v = constVal(e.Const, e.Text)
	case analysis.ExprList, analysis.ExprTuple, analysis.ExprSet:
		v = c.visitSeq(e)
	case analysis.ExprDict:
		v = c.visitDict(e)
	case analysis.ExprAttribute:
		base := c.visit(e.Value)
		v = c.attribute(e, base)
	case analysis.ExprSubscript:
		base := c.visit(e.Value)
		idx := c.visit(e.Index)
		v = c.subscript(e, base, idx)
	case analysis.ExprCall:
		v = c.call(e)
	case analysis.ExprBinOp:
		var a, b *val
		if len(e.Args) == 2 {
			a, b = c.visit(e.Args[0]), c.visit(e.Args[1])
		}
		v = c.binop(e, a, b)
	case analysis.ExprUnaryOp:
		for _, a := range e.Args {
			c.visit(a)
		}
		if len(e.Args) == 1 && e.Name == "-" {
			if x := c.vals[e.Args[0]]; x != nil && x.hasConst {
				switch n := x.konst.(type) {
				case int64:
					v = constVal(-n, e.Text)
				case float64:
					v = constVal(-n, e.Text)
				}
			}
		}
	case analysis.ExprCompare, analysis.ExprSlice:
		var a, b *val
		for i, x := range e.Args {
			r := c.visit(x)
			if i == 0 {
				a = r
			} else if i == 1 {
				b = r
			}
		}
		if e.Kind == analysis.ExprCompare {
			checkCompare(c, e, a, b)
			v = tensorCompare(e, a, b)
		}
	case analysis.ExprLambda:
		// its body runs later, if ever
	case analysis.ExprBoolOp:
		// `a and b`: b runs only when a allows it, and is often guarded by a
		if len(e.Args) > 0 {
			c.visit(e.Args[0])
			c.guarded++
			for _, x := range e.Args[1:] {
				c.visit(x)
			}
			c.guarded--
		}
	case analysis.ExprOther:
		switch {
		case e.Name != "" && e.Value != nil: // walrus
			v = c.visit(e.Value)
			c.bindName(e.Name, v)
		case e.Node == "conditional_expression" && len(e.Args) == 3:
			// `a if cond else b`: only one branch runs
			c.visit(e.Args[1])
			c.guarded++
			c.visit(e.Args[0])
			c.visit(e.Args[2])
			c.guarded--
		default:
			c.visit(e.Value)
			c.visit(e.Index)
			for _, a := range e.Args {
				c.visit(a)
			}
			for _, k := range e.Keywords {
				c.visit(k.Value)
			}
		}
	default:
		c.visit(e.Value)
		c.visit(e.Index)
		for _, a := range e.Args {
			c.visit(a)
		}
		for _, k := range e.Keywords {
			c.visit(k.Value)
		}
	}
	c.vals[e] = v
	return v
}

// visitSeq evaluates a list/tuple/set display.
func (c *checker) visitSeq(e *analysis.Expr) *val {
	v := &val{name: e.Text}
	switch e.Kind {
	case analysis.ExprList:
		v.Kind = facts.KindList
	case analysis.ExprTuple:
		v.Kind = facts.KindTuple
	default:
		v.Kind = facts.KindSet
	}
	consts := []any{}
	allConst, starred := true, false
	for _, a := range e.Args {
		x := c.visit(a)
		if a.Starred {
			starred = true
		}
		v.elems = append(v.elems, x)
		if x != nil && x.hasConst {
			switch x.konst.(type) {
			case string, int64, float64, bool:
				consts = append(consts, x.konst)
				continue
			}
		}
		allConst = false
	}
	if starred {
		v.elems = nil
		return v
	}
	n := len(e.Args)
	v.Len = &n
	if allConst && e.Kind != analysis.ExprSet {
		v.konst, v.hasConst = consts, true
	}
	return v
}

// visitDict evaluates a dict display with constant string keys.
func (c *checker) visitDict(e *analysis.Expr) *val {
	v := &val{Value: facts.Value{Kind: facts.KindDict}, name: e.Text}
	complete := true
	for i := 0; i+1 < len(e.Args); i += 2 {
		k := c.visit(e.Args[i])
		c.visit(e.Args[i+1])
		if s, ok := constStr(k); ok {
			v.Keys = append(v.Keys, s)
		} else {
			complete = false
		}
	}
	if len(e.Args)%2 != 0 {
		complete = false
	}
	v.KeysComplete = complete
	return v
}

// hasattrGuard returns "x.a" for `if hasattr(x, 'a'):`.
func hasattrGuard(s *analysis.Statement) string {
	v := s.Value
	if s.Kind != analysis.StmtIf || v == nil || v.Kind != analysis.ExprCall || v.Value == nil || v.Value.Kind != analysis.ExprName ||
		v.Value.Name != "hasattr" || len(v.Args) != 2 || v.Args[1].Kind != analysis.ExprConst {
		return ""
	}
	name, ok := v.Args[1].Const.(string)
	if !ok {
		return ""
	}
	return v.Args[0].Text + "." + name
}

// attribute evaluates base.name and runs attribute rules.
func (c *checker) attribute(e *analysis.Expr, base *val) *val {
	if c.attrGuards[e.Text] > 0 {
		return nil // the code checked hasattr first
	}
	// The inspector may have looked at the whole chain ("model.fc1", "df.Age").
	if chain, ok := e.Chain(); ok {
		if root := rootName(e); root != "" && c.fromKernelName(root) {
			if f, ok := c.env.value(chain); ok {
				if !f.Exists && base != nil {
					if checkMissingAttr(c, e, base, true) {
						return nil
					}
				}
				if f.Exists && !modeledKind(base) {
					checkAttrOf(c, e, base)
					return fromFacts(chain, f, c.env)
				}
			}
		}
	}
	if base == nil {
		return nil
	}
	if base.isNone() {
		noneAttribute(c, e, base)
		return nil
	}
	if checkMissingAttr(c, e, base, false) {
		return nil
	}
	checkAttrOf(c, e, base)
	if base.Kind == facts.KindPyModule && base.module != "" {
		q := base.module + "." + e.Name
		r := &val{qual: q, name: e.Text}
		if isModuleName(q) {
			r.Kind, r.module = facts.KindPyModule, q
		}
		return r
	}
	switch base.Kind {
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy:
		return pandasAttr(c, e, base)
	case facts.KindNDArray:
		return numpyAttr(c, e, base)
	case facts.KindTensor:
		return torchAttr(c, e, base)
	case facts.KindEstimator:
		return sklearnAttr(c, e, base)
	}
	return &val{bound: base, name: e.Text}
}

// modeledKind reports kinds whose attributes propagation models itself.
func modeledKind(v *val) bool {
	if v == nil {
		return false
	}
	switch v.Kind {
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy, facts.KindNDArray, facts.KindTensor, facts.KindEstimator, facts.KindPyModule:
		return true
	}
	return false
}

// subscript evaluates base[idx] and runs subscript rules.
func (c *checker) subscript(e *analysis.Expr, base, idx *val) *val {
	if base == nil {
		return nil
	}
	if base.isNone() {
		c.report(e.Range, analysis.SeverityError, finding.NoneSubscript, "TypeError",
			base.name+" is None, so "+e.Text+" fails: 'NoneType' object is not subscriptable",
			0.95, []string{describe(base)}, nil)
		return nil
	}
	switch base.Kind {
	case facts.KindInt, facts.KindFloat, facts.KindBool:
		t := map[string]string{facts.KindInt: "int", facts.KindFloat: "float", facts.KindBool: "bool"}[base.Kind]
		c.report(e.Range, analysis.SeverityError, finding.NotSubscriptable, "TypeError",
			fmt.Sprintf("%s is a single %s, so %s fails ('%s' object is not subscriptable)", base.name, t, e.Text, t),
			0.95, []string{describe(base)}, nil)
		return nil
	case facts.KindDataFrame, facts.KindSeries, facts.KindGroupBy:
		return pandasSubscript(c, e, base, idx)
	case facts.KindNDArray:
		return numpySubscript(c, e, base, idx)
	case facts.KindTensor:
		return torchSubscript(c, e, base, idx)
	case facts.KindDict, facts.KindList, facts.KindTuple, facts.KindStr:
		return pythonSubscript(c, e, base, idx)
	}
	if base.bound != nil && base.bound.Kind == facts.KindDataFrame && (strings.HasSuffix(e.Value.Text, ".loc") || strings.HasSuffix(e.Value.Text, ".iloc")) {
		return pandasIndexer(c, e, base, idx)
	}
	return nil
}

// call evaluates a call and runs call rules.
func (c *checker) call(e *analysis.Expr) *val {
	k := &callInfo{e: e, kw: map[string]*val{}}
	k.fn = c.visit(e.Value)
	if e.Value != nil && e.Value.Kind == analysis.ExprAttribute {
		k.recv = c.vals[e.Value.Value]
		k.method = e.Value.Name
	}
	for _, a := range e.Args {
		x := c.visit(a)
		if a.Starred {
			x = nil
		}
		k.args = append(k.args, x)
	}
	for _, kw := range e.Keywords {
		x := c.visit(kw.Value)
		if kw.Name != "" {
			k.kw[kw.Name] = x
		}
	}
	k.qual = c.qualify(e.Value, k.fn)
	if k.fn != nil && k.fn.fromKernel && k.e.Value.Kind == analysis.ExprName {
		switch k.fn.Kind {
		case facts.KindDataFrame, facts.KindSeries, facts.KindNDArray, facts.KindTensor, facts.KindList, facts.KindDict,
			facts.KindStr, facts.KindInt, facts.KindFloat, facts.KindTuple:
			c.report(k.e.Range, analysis.SeverityError, finding.NotCallable, "TypeError",
				fmt.Sprintf("%s is a %s, not a function ('%s' object is not callable); was the name reused for data?", k.fn.name, kindLabel(k.fn), pyTypeName(k.fn)),
				0.93, []string{describe(k.fn)}, nil)
			return nil
		}
	}
	if k.fn != nil && k.fn.isNone() {
		c.report(e.Range, analysis.SeverityError, finding.NoneCall, "TypeError",
			k.fn.name+" is None, so calling it fails: 'NoneType' object is not callable",
			0.95, []string{describe(k.fn)}, nil)
		return nil
	}
	if notCallable(c, k) {
		return nil
	}
	for _, family := range callFamilies {
		if v, ok := family(c, k); ok {
			return v
		}
	}
	c.unknownCall(k)
	return nil
}

// callFamilies are tried in order; the first that handles a call gives its result.
var callFamilies = []func(c *checker, k *callInfo) (*val, bool){
	pythonCall, pandasCall, sklearnCall, numpyCall, torchCall, plotCall,
}

// unknownCall forgets what a call we do not model may change: the receiver of an unknown
// method on a mutable object, and mutable arguments of functions that are not library
// functions.
func (c *checker) unknownCall(k *callInfo) {
	if k.method != "" {
		if r := rootName(k.recvExpr()); r != "" && mutableKind(k.recv) && !pureMethod(k.recv, k.method) && !accessorCall(k) {
			c.forget(r)
		}
	}
	if k.qual != "" && !strings.HasPrefix(k.qual, "__main__") {
		return
	}
	if k.fn != nil && k.fn.fn != nil {
		// a function of this cell: it may change any global it mentions
		touched := map[string]bool{}
		touchedBy(k.fn.fn.Body, touched)
		for n := range touched {
			if _, local := c.state[n]; local || c.env.Values != nil {
				c.forget(n)
			}
		}
	}
	for i, a := range k.e.Args {
		if a.Kind == analysis.ExprName && mutableKind(k.args[i]) {
			c.forget(a.Name)
		}
	}
	for _, kw := range k.e.Keywords {
		if kw.Value != nil && kw.Value.Kind == analysis.ExprName && mutableKind(c.vals[kw.Value]) {
			c.forget(kw.Value.Name)
		}
	}
}

// mutableKind reports whether a value can change in place (unknown counts as mutable).
func mutableKind(v *val) bool {
	if v == nil {
		return true
	}
	switch v.Kind {
	case facts.KindStr, facts.KindInt, facts.KindFloat, facts.KindBool, facts.KindNone, facts.KindTuple, facts.KindPyModule, facts.KindNumpyScalar:
		return false
	}
	return !v.hasConst
}

// pureMethod reports methods known not to change their receiver.
// accessorCall reports a method of pandas' .str/.dt/.cat accessors (s.str.len()): they
// return new objects and never change the frame.
func accessorCall(k *callInfo) bool {
	r := k.recvExpr()
	return r != nil && r.Kind == analysis.ExprAttribute && (r.Name == "str" || r.Name == "dt" || r.Name == "cat") &&
		k.method != "set_categories" && k.method != "add_categories" && k.method != "rename_categories" && k.method != "remove_categories"
}

func pureMethod(_ *val, m string) bool {
	switch m {
	case "head", "tail", "describe", "info", "copy", "sum", "mean", "median", "std", "var", "min", "max",
		"count", "value_counts", "unique", "nunique", "isnull", "isna", "notnull", "notna", "corr",
		"plot", "hist", "print", "to_csv", "to_numpy", "tolist", "item", "size", "numel", "dim",
		"keys", "values", "items", "get", "argmax", "argmin", "any", "all", "nelement", "detach",
		"cpu", "numpy", "__len__", "show", "savefig", "predict", "predict_proba", "score", "transform",
		"decision_function", "get_params", "format", "join", "split", "strip", "lower", "upper",
		"startswith", "endswith", "replace", "eval", "train", "parameters", "state_dict", "named_parameters",
		"select_dtypes", "apply", "map", "applymap", "merge", "pivot_table", "pivot", "melt", "query",
		"filter", "isin", "nlargest", "nsmallest", "to_dict", "iterrows", "itertuples", "duplicated",
		"drop_duplicates", "memory_usage", "corrwith", "cov", "quantile", "cumsum", "diff", "pct_change",
		"shift", "rolling", "expanding", "resample", "agg", "aggregate", "idxmax",
		"idxmin", "abs", "round", "clip", "where", "mask", "explode", "stack", "unstack", "transpose",
		"to_frame", "to_list", "reindex", "rank", "sort_index", "mode", "prod",
		"skew", "kurt", "sem", "add", "sub", "mul", "div", "eq", "ne", "lt", "gt", "le", "ge", "between",
		"to_json", "to_excel", "to_parquet", "to_pickle", "to_string", "to_markdown", "to_html", "equals",
		"view", "reshape", "squeeze", "unsqueeze", "flatten", "ravel", "t", "permute",
		"float", "double", "long", "int", "to", "cuda", "contiguous", "clone", "argsort", "topk",
		"astype", "groupby":
		return true
	}
	return false
}

// qualify resolves a callee to a qualified library name when its root is a module or an
// imported class/function ("np.reshape" -> "numpy.reshape").
func (c *checker) qualify(callee *analysis.Expr, fn *val) string {
	if fn != nil && fn.qual != "" {
		return fn.qual
	}
	if callee == nil {
		return ""
	}
	if callee.Kind == analysis.ExprName {
		if (fn == nil || fn.fromKernel && (fn.Kind == facts.KindClass || fn.Kind == facts.KindCallable)) && c.fromKernelName(callee.Name) {
			if q, ok := knownBareFunction[callee.Name]; ok && looksLike(fn, q) {
				return q
			}
		}
		return ""
	}
	if callee.Kind == analysis.ExprAttribute {
		base := c.vals[callee.Value]
		if base != nil && base.Kind == facts.KindPyModule && base.module != "" {
			return base.module + "." + callee.Name
		}
		if base != nil && base.qual != "" && base.Kind == facts.KindPyModule {
			return base.qual + "." + callee.Name
		}
	}
	return ""
}

// knownBareFunction maps commonly from-imported names to their home, used only when the
// kernel holds the name and did not report what it is.
var knownBareFunction = map[string]string{}

// looksLike checks that a kernel class or function named like a library one really is it
// (tutorials define their own LinearRegression and train_test_split).
func looksLike(fn *val, q string) bool {
	if fn == nil {
		return true
	}
	switch {
	case fn.Kind == facts.KindClass:
		// attributes may be missing when the inspector ran out of budget: trust the name then
		return len(fn.Attributes) == 0 || contains(fn.Attributes, "get_params") || contains(fn.Attributes, "fit_transform")
	case strings.HasSuffix(q, "train_test_split"):
		return strings.HasPrefix(fn.Signature, "(*arrays")
	case strings.HasPrefix(q, "sklearn.metrics."):
		return strings.HasPrefix(fn.Signature, "(y_true, y_pred")
	}
	return false
}

// membershipKeys returns the constant strings tested with `in` / `not in` in a condition.
func membershipKeys(e *analysis.Expr) []string {
	if e == nil {
		return nil
	}
	var out []string
	if e.Kind == analysis.ExprCompare && (e.Name == "in" || e.Name == "not in") && len(e.Args) > 0 && e.Args[0].Kind == analysis.ExprConst {
		if s, ok := e.Args[0].Const.(string); ok {
			out = append(out, s)
		}
	}
	for _, a := range e.Args {
		out = append(out, membershipKeys(a)...)
	}
	return out
}

// readOnlyBuiltin are builtins that never change their arguments.
var readOnlyBuiltin = set("print", "len", "str", "repr", "int", "float", "bool", "type", "isinstance", "id",
	"sorted", "sum", "min", "max", "abs", "round", "range", "enumerate", "zip", "list", "tuple", "set", "dict",
	"hasattr", "getattr", "display", "format", "any", "all", "iter", "hash")

// plainData reports a value of a builtin data type, which is never callable.
func plainData(f facts.Value) bool {
	if f.Callable != nil && !*f.Callable {
		return true
	}
	switch f.Kind {
	case facts.KindBool, facts.KindInt, facts.KindFloat, facts.KindStr, facts.KindList, facts.KindTuple, facts.KindDict, facts.KindSet:
		return f.Type == f.Kind // exactly the builtin type, not a callable subclass
	}
	return false
}
