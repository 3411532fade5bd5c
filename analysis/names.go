package analysis

import (
	"sort"
	"strings"
)

// Scope analysis: which names a cell binds at module level and which it reads before
// binding them. Module level is flow-sensitive (top to bottom); function bodies are
// resolved when the cell calls the function, against what the cell bound by then.

type scopeKind int

const (
	scopeModule scopeKind = iota
	scopeFunction
	scopeClass
	scopeComprehension
	scopeLambda
)

type scope struct {
	kind   scopeKind
	parent *scope
	// names bound in the scope: a function's locals (all of them, Python decides at
	// compile time), a class body's names so far, a comprehension's targets, a lambda's
	// parameters.
	names map[string]bool
	// globals are names a function declares global or nonlocal: reads skip its locals.
	globals map[string]bool
	// fn receives reads escaping to module level from this function (the outermost
	// function of a nest).
	fn *funcInfo
}

// funcInfo is what calling a function defined in the cell reads and binds.
type funcInfo struct {
	name    string
	rng     Range
	reads   []read
	calls   map[string]bool
	globals []string // names declared global and assigned: bound at module level by a call
}

// read is one read of a name that was not local where it happened.
type read struct {
	name       string
	start, end int
	guarded    bool
}

type walker struct {
	text string
	m    *masked
	idx  *LineIndex
	conv *converter
	f    *CellFacts

	bound     map[string]bool      // module-level names bound so far
	everBound map[string]bool      // module-level names bound anywhere in the cell
	funcs     map[string]*funcInfo // module-level names currently bound to a cell function
	seenUse   map[[2]int]bool      // (start, end) of recorded uses
	cond      int                  // depth of if/for/while/try/with around the statement
	guard     int                  // depth of try bodies catching NameError
	guarded   map[string]int       // names checked by `'x' in globals()` around the read
	fnDepth   int                  // >0 inside a function body
	starSeen  bool
	defined   []*funcInfo // module-level functions in definition order
}

func newWalker(text string, m *masked, idx *LineIndex, conv *converter, f *CellFacts) *walker {
	return &walker{
		text: text, m: m, idx: idx, conv: conv, f: f,
		bound: map[string]bool{}, everBound: map[string]bool{}, funcs: map[string]*funcInfo{},
		seenUse: map[[2]int]bool{}, guarded: map[string]int{},
	}
}

func (w *walker) src(n *node) string {
	if n == nil {
		return ""
	}
	return w.text[n.start:n.end]
}

func (w *walker) module(root *node) {
	collectBindings(root, w.text, func(name string) { w.everBound[name] = true }, nil)
	mod := &scope{kind: scopeModule}
	w.block(root, mod)
	for _, fn := range w.defined {
		f := Function{Name: fn.name, Range: fn.rng, Globals: fn.globals}
		seen := map[[2]int]bool{}
		for _, r := range fn.reads {
			if k := [2]int{r.start, r.end}; !seen[k] {
				seen[k] = true
				f.Reads = append(f.Reads, Use{Name: r.name, Range: w.idx.Range(r.start, r.end), InFunction: fn.name, Guarded: r.guarded})
			}
		}
		for c := range fn.calls {
			f.Calls = append(f.Calls, c)
		}
		sort.Strings(f.Calls)
		w.f.Functions = append(w.f.Functions, f)
	}
}

// block walks the statements among n's children.
func (w *walker) block(n *node, sc *scope) {
	if n == nil {
		return
	}
	for _, k := range n.kids {
		if k.named && k.typ != "comment" && !w.m.inMask(k.start) {
			w.stmt(k, sc)
		}
	}
}

func (w *walker) stmt(n *node, sc *scope) {
	switch n.typ {
	case "expression_statement":
		for _, k := range n.namedKids() {
			w.exprStmt(k, sc)
		}
	case "import_statement", "import_from_statement":
		w.imports(n, sc)
	case "future_import_statement":
	case "decorated_definition":
		for _, d := range n.kids {
			if d.typ == "decorator" {
				w.exprs(d, sc)
			}
		}
		w.stmt(n.child("definition"), sc)
	case "function_definition":
		w.function(n, sc)
	case "class_definition":
		w.class(n, sc)
	case "if_statement":
		w.ifStmt(n, sc)
	case "for_statement":
		w.expr(n.child("right"), sc)
		w.cond++
		w.prebind(n, sc)
		w.bindTarget(n.child("left"), sc, DefFor)
		w.block(n.child("body"), sc)
		if alt := n.child("alternative"); alt != nil {
			w.block(alt.child("body"), sc)
		}
		w.cond--
	case "while_statement":
		w.expr(n.child("condition"), sc)
		w.cond++
		w.prebind(n, sc)
		w.block(n.child("body"), sc)
		if alt := n.child("alternative"); alt != nil {
			w.block(alt.child("body"), sc)
		}
		w.cond--
	case "with_statement":
		w.cond++
		for _, item := range withItems(n) {
			v := item.child("value")
			if v != nil && v.typ == "as_pattern" {
				w.expr(v.firstNamed(), sc)
				if t := v.child("alias"); t != nil {
					w.bindTarget(t.firstNamed(), sc, DefWith)
				}
			} else {
				w.expr(v, sc)
			}
		}
		w.block(n.child("body"), sc)
		w.cond--
	case "try_statement":
		w.tryStmt(n, sc)
	case "delete_statement":
		t := n.firstNamed()
		if t != nil && t.typ == "expression_list" {
			for _, k := range t.namedKids() {
				w.deleteTarget(k, sc)
			}
		} else if t != nil {
			w.deleteTarget(t, sc)
		}
	case "global_statement", "nonlocal_statement", "pass_statement", "break_statement", "continue_statement":
	case "match_statement":
		w.expr(n.child("subject"), sc)
		w.cond++
		for _, b := range n.children("body") {
			for _, cc := range b.namedKids() {
				for _, p := range cc.kids {
					if p.typ == "case_pattern" {
						w.pattern(p, sc)
					} else if p.field == "guard" {
						w.exprs(p, sc)
					}
				}
				w.block(cc.child("consequence"), sc)
			}
		}
		w.cond--
	case "block":
		w.block(n, sc)
	case "ERROR":
		for _, k := range n.kids {
			if strings.HasSuffix(k.typ, "_statement") || strings.HasSuffix(k.typ, "_definition") {
				w.stmt(k, sc)
			}
		}
	default:
		// return, raise, assert, print, exec and anything else: read what they contain.
		w.exprs(n, sc)
	}
}

// exprStmt handles the child of an expression statement: assignments bind.
func (w *walker) exprStmt(n *node, sc *scope) {
	switch n.typ {
	case "assignment":
		if t := n.child("type"); t != nil {
			if sc.kind != scopeFunction {
				w.expr(t, sc) // annotations are evaluated at module and class level
			}
			r := n.child("right")
			if r == nil {
				if l := n.child("left"); l != nil && l.typ != "identifier" {
					w.expr(l, sc)
				}
				return // a bare annotation binds nothing
			}
			w.expr(r, sc)
			w.bindTarget(n.child("left"), sc, DefAssign)
			return
		}
		// a = b = v: v is evaluated first, then assigned left to right.
		var targets []*node
		cur := n
		for cur != nil && cur.typ == "assignment" && cur.child("type") == nil {
			targets = append(targets, cur.child("left"))
			cur = cur.child("right")
		}
		w.expr(cur, sc)
		for _, t := range targets {
			w.bindTarget(t, sc, DefAssign)
		}
	case "augmented_assignment":
		w.expr(n.child("right"), sc)
		l := n.child("left")
		if l != nil && l.typ == "identifier" {
			w.read(l, sc)
			w.bindName(l, sc, DefAugAssign)
		} else {
			w.store(l, sc)
		}
	default:
		w.expr(n, sc)
	}
}

func (w *walker) ifStmt(n *node, sc *scope) {
	cond := n.child("condition")
	w.expr(cond, sc)
	w.cond++
	g := globalsCheck(cond, w.text)
	for _, name := range g {
		w.guarded[name]++
	}
	w.block(n.child("consequence"), sc)
	for _, name := range g {
		w.guarded[name]--
	}
	for _, alt := range n.children("alternative") {
		if c := alt.child("condition"); c != nil {
			w.expr(c, sc)
			g := globalsCheck(c, w.text)
			for _, name := range g {
				w.guarded[name]++
			}
			w.block(alt.child("consequence"), sc)
			for _, name := range g {
				w.guarded[name]--
			}
		}
		w.block(alt.child("body"), sc)
	}
	w.cond--
}

// globalsCheck returns the names a condition tests for with 'x' in globals() (or
// locals(), dir(), vars()).
func globalsCheck(cond *node, text string) []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.typ == "comparison_operator" {
			kids := n.namedKids()
			if len(kids) == 2 && kids[0].typ == "string" && strings.TrimSpace(text[kids[1].start:kids[1].end]) != "" {
				op := n.child("operators")
				r := strings.ReplaceAll(text[kids[1].start:kids[1].end], " ", "")
				if op != nil && text[op.start:op.end] == "in" &&
					(r == "globals()" || r == "locals()" || r == "dir()" || r == "vars()") {
					out = append(out, strings.Trim(text[kids[0].start:kids[0].end], `'"`))
				}
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(cond)
	return out
}

func (w *walker) tryStmt(n *node, sc *scope) {
	catches := false
	for _, k := range n.kids {
		if k.typ == "except_clause" && catchesNameError(k, w.text) {
			catches = true
		}
	}
	w.cond++
	if catches {
		w.guard++
	}
	w.block(n.child("body"), sc)
	if catches {
		w.guard--
	}
	for _, k := range n.kids {
		switch k.typ {
		case "except_clause", "except_group_clause":
			for _, p := range k.kids {
				switch {
				case p.typ == "as_pattern":
					w.expr(p.firstNamed(), sc)
					if t := p.child("alias"); t != nil {
						w.bindTarget(t.firstNamed(), sc, DefExcept)
					}
				case p.typ == "block":
					w.block(p, sc)
				case p.named && p.typ != "comment":
					w.expr(p, sc)
				}
			}
		case "else_clause", "finally_clause":
			for _, p := range k.kids {
				if p.typ == "block" {
					w.block(p, sc)
				}
			}
		}
	}
	w.cond--
}

// catchesNameError reports whether an except clause catches NameError: a bare except,
// or a type list naming NameError, Exception or BaseException.
func catchesNameError(clause *node, text string) bool {
	var typ *node
	for _, p := range clause.kids {
		if p.typ == "block" {
			break
		}
		if p.named && p.typ != "comment" {
			typ = p
			break
		}
	}
	if typ == nil {
		return true
	}
	if typ.typ == "as_pattern" {
		typ = typ.firstNamed()
	}
	s := text[typ.start:typ.end]
	for _, name := range []string{"NameError", "Exception", "BaseException"} {
		for i := strings.Index(s, name); i >= 0; {
			end := i + len(name)
			before := i == 0 || !isIdentByte(s[i-1])
			after := end == len(s) || !isIdentByte(s[end])
			if before && after {
				return true
			}
			j := strings.Index(s[end:], name)
			if j < 0 {
				break
			}
			i = end + j
		}
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// prebind marks names a loop binds as bound before walking its body: the second
// iteration sees them, so a read above the binding is not certainly free.
func (w *walker) prebind(loop *node, sc *scope) {
	add := func(name string) {
		switch sc.kind {
		case scopeModule:
			w.bound[name] = true
		case scopeClass:
			sc.names[name] = true
		}
	}
	for _, field := range []string{"body", "alternative"} {
		if b := loop.child(field); b != nil {
			collectBindings(b, w.text, add, nil)
		}
	}
	if l := loop.child("left"); l != nil {
		targetNames(l, w.text, add)
	}
}

func (w *walker) imports(n *node, sc *scope) {
	module := ""
	if mn := n.child("module_name"); mn != nil {
		module = strings.Join(strings.Fields(w.src(mn)), "")
	}
	for _, k := range n.kids {
		switch {
		case k.typ == "wildcard_import":
			w.f.StarImports = append(w.f.StarImports, module)
			w.f.Imports = append(w.f.Imports, Import{Module: module, Star: true, Range: w.idx.Range(k.start, k.end)})
			w.starSeen = true
		case k.field != "name":
		case k.typ == "dotted_name":
			imp := Import{Range: w.idx.Range(k.start, k.end)}
			if n.typ == "import_statement" {
				imp.Module = w.src(k)
			} else {
				imp.Module, imp.Name = module, w.src(k)
			}
			w.f.Imports = append(w.f.Imports, imp)
			bound := imp.Bound()
			// The bound name is the first identifier of the dotted name.
			first := k.firstNamed()
			if first == nil {
				first = k
			}
			w.bindNameText(bound, first.start, first.start+len(bound), sc, DefImport)
		case k.typ == "aliased_import":
			nm, alias := k.child("name"), k.child("alias")
			imp := Import{Range: w.idx.Range(k.start, k.end), Alias: w.src(alias)}
			if n.typ == "import_statement" {
				imp.Module = w.src(nm)
			} else {
				imp.Module, imp.Name = module, w.src(nm)
			}
			w.f.Imports = append(w.f.Imports, imp)
			if alias != nil {
				w.bindNameText(imp.Alias, alias.start, alias.end, sc, DefImport)
			}
		}
	}
}

// function handles a def: decorators, defaults and annotations are evaluated now in sc;
// the body's reads are kept in a funcInfo and resolved when the cell calls it.
func (w *walker) function(n *node, sc *scope) {
	name := n.child("name")
	params := n.child("parameters")
	for _, p := range params.namedKids() {
		w.paramDefaults(p, sc)
	}
	if rt := n.child("return_type"); rt != nil {
		w.expr(rt, sc)
	}
	fs := &scope{kind: scopeFunction, parent: sc, names: map[string]bool{}, globals: map[string]bool{}}
	if sc.kind == scopeClass {
		fs.parent = sc.parent // methods do not see the class body's names
	}
	if outer := enclosingFunc(fs.parent); outer != nil {
		fs.fn = outer.fn
	} else {
		fs.fn = &funcInfo{name: w.src(name), calls: map[string]bool{}}
		if name != nil {
			fs.fn.rng = w.idx.Range(name.start, name.end)
		}
	}
	for _, p := range params.namedKids() {
		paramNames(p, w.text, func(s string) { fs.names[s] = true })
	}
	body := n.child("body")
	var globalNames []*node
	collectBindings(body, w.text, func(s string) { fs.names[s] = true }, func(decl *node) {
		for _, id := range decl.namedKids() {
			fs.globals[w.src(id)] = true
			if decl.typ == "global_statement" {
				globalNames = append(globalNames, id)
			}
		}
	})
	for g := range fs.globals {
		delete(fs.names, g)
	}
	w.fnDepth++
	w.block(body, fs)
	w.fnDepth--
	if enclosingFunc(fs.parent) == nil {
		for _, id := range globalNames {
			g := w.src(id)
			w.f.Globals = append(w.f.Globals, g)
			if sc.kind == scopeModule && assignsIn(body, g, w.text) {
				fs.fn.globals = append(fs.fn.globals, g)
				w.f.Defs = append(w.f.Defs, Def{Name: g, Kind: DefGlobal, Range: w.idx.Range(id.start, id.end), Conditional: true})
			}
		}
	}
	if name != nil {
		w.bindName(name, sc, DefFunction)
		if sc.kind == scopeModule {
			w.funcs[w.src(name)] = fs.fn
			w.defined = append(w.defined, fs.fn)
		}
	}
}

// assignsIn reports whether body binds name (used for `global name`).
func assignsIn(body *node, name, text string) bool {
	found := false
	collectBindings(body, text, func(s string) {
		if s == name {
			found = true
		}
	}, nil)
	return found
}

func enclosingFunc(sc *scope) *scope {
	for s := sc; s != nil; s = s.parent {
		if s.kind == scopeFunction {
			return s
		}
	}
	return nil
}

// paramDefaults reads a parameter's default value and annotation in the defining scope.
func (w *walker) paramDefaults(p *node, sc *scope) {
	switch p.typ {
	case "default_parameter", "typed_default_parameter":
		w.expr(p.child("value"), sc)
		if t := p.child("type"); t != nil {
			w.expr(t, sc)
		}
	case "typed_parameter":
		if t := p.child("type"); t != nil {
			w.expr(t, sc)
		}
	}
}

// paramNames reports the names a parameter binds.
func paramNames(p *node, text string, add func(string)) {
	switch p.typ {
	case "identifier":
		add(text[p.start:p.end])
	case "default_parameter", "typed_default_parameter":
		if nm := p.child("name"); nm != nil {
			add(text[nm.start:nm.end])
		}
	case "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern":
		for _, k := range p.namedKids() {
			if k.typ == "identifier" {
				add(text[k.start:k.end])
				return
			}
			if k.typ == "list_splat_pattern" || k.typ == "dictionary_splat_pattern" {
				paramNames(k, text, add)
				return
			}
		}
	case "tuple_pattern":
		for _, k := range p.namedKids() {
			paramNames(k, text, add)
		}
	}
}

func (w *walker) class(n *node, sc *scope) {
	if sup := n.child("superclasses"); sup != nil {
		w.exprs(sup, sc)
	}
	cs := &scope{kind: scopeClass, parent: sc, names: map[string]bool{}}
	w.block(n.child("body"), cs)
	if name := n.child("name"); name != nil {
		w.bindName(name, sc, DefClass)
	}
}

// pattern walks a match-case pattern: dotted names are read, bare names captured.
func (w *walker) pattern(n *node, sc *scope) {
	switch n.typ {
	case "dotted_name":
		ids := n.namedKids()
		if len(ids) == 1 {
			if w.src(ids[0]) != "_" {
				w.bindName(ids[0], sc, DefAssign)
			}
		} else if len(ids) > 1 {
			w.read(ids[0], sc)
		}
		return
	case "identifier":
		if w.src(n) != "_" {
			w.bindName(n, sc, DefAssign)
		}
		return
	case "class_pattern":
		for i, k := range n.kids {
			if i == 0 && k.typ == "dotted_name" {
				if ids := k.namedKids(); len(ids) > 0 {
					w.read(ids[0], sc)
				}
				continue
			}
			w.pattern(k, sc)
		}
		return
	case "keyword_pattern":
		kids := n.namedKids()
		if len(kids) > 1 {
			w.pattern(kids[1], sc)
		}
		return
	case "string", "integer", "float", "true", "false", "none":
		return
	}
	for _, k := range n.kids {
		w.pattern(k, sc)
	}
}

func (w *walker) deleteTarget(t *node, sc *scope) {
	switch t.typ {
	case "identifier":
		w.read(t, sc)
		if sc.kind == scopeModule {
			w.f.Defs = append(w.f.Defs, Def{Name: w.src(t), Kind: DefDelete, Range: w.idx.Range(t.start, t.end), Conditional: w.cond > 0})
			if w.cond == 0 {
				delete(w.bound, w.src(t))
				delete(w.funcs, w.src(t))
			}
		} else if sc.kind == scopeClass {
			delete(sc.names, w.src(t))
		}
	case "tuple", "list", "parenthesized_expression", "expression_list":
		for _, k := range t.namedKids() {
			w.deleteTarget(k, sc)
		}
	default:
		w.store(t, sc)
	}
}

// bindTarget binds the names of an assignment target.
func (w *walker) bindTarget(t *node, sc *scope, kind DefKind) {
	if t == nil {
		return
	}
	switch t.typ {
	case "identifier":
		w.bindName(t, sc, kind)
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list",
		"parenthesized_expression", "as_pattern_target":
		for _, k := range t.namedKids() {
			w.bindTarget(k, sc, kind)
		}
	case "list_splat_pattern", "list_splat":
		w.bindTarget(t.firstNamed(), sc, kind)
	default:
		w.store(t, sc)
	}
}

// store walks an attribute or subscript target: its object and index are read, but it is
// not recorded as an attribute or subscript access (df['new'] = ... adds a column).
func (w *walker) store(t *node, sc *scope) {
	if t == nil {
		return
	}
	switch t.typ {
	case "attribute":
		w.expr(t.child("object"), sc)
	case "subscript":
		if v := strings.ReplaceAll(w.src(t.child("value")), " ", ""); v == "globals()" || v == "vars()" {
			w.f.StarImports = append(w.f.StarImports, v)
		}
		w.expr(t.child("value"), sc)
		for _, s := range t.children("subscript") {
			w.expr(s, sc)
		}
	default:
		w.expr(t, sc)
	}
}

func (w *walker) bindName(id *node, sc *scope, kind DefKind) {
	w.bindNameText(w.src(id), id.start, id.end, sc, kind)
}

func (w *walker) bindNameText(name string, start, end int, sc *scope, kind DefKind) {
	switch sc.kind {
	case scopeModule:
		w.f.Defs = append(w.f.Defs, Def{Name: name, Kind: kind, Range: w.idx.Range(start, end), Conditional: w.cond > 0})
		w.bound[name] = true
		delete(w.funcs, name)
	case scopeClass, scopeComprehension:
		sc.names[name] = true
	case scopeFunction:
		// Locals were collected up front; globals bind when the function is called.
	}
}

// exprs walks every named child of n as an expression.
func (w *walker) exprs(n *node, sc *scope) {
	for _, k := range n.kids {
		if k.named && k.typ != "comment" {
			w.expr(k, sc)
		}
	}
}

// expr walks an expression, reading names and recording accesses.
func (w *walker) expr(n *node, sc *scope) {
	if n == nil || w.m.inMask(n.start) && n.end <= maskEnd(w.m, n.start) {
		return
	}
	switch n.typ {
	case "identifier":
		w.read(n, sc)
	case "attribute":
		w.attribute(n, sc, false)
	case "subscript":
		w.subscript(n, sc)
	case "call":
		w.call(n, sc)
	case "keyword_argument":
		w.expr(n.child("value"), sc)
	case "lambda":
		ls := &scope{kind: scopeLambda, parent: sc, names: map[string]bool{}}
		if ps := n.child("parameters"); ps != nil {
			for _, p := range ps.namedKids() {
				w.paramDefaults(p, sc)
				paramNames(p, w.text, func(s string) { ls.names[s] = true })
			}
		}
		w.expr(n.child("body"), ls)
	case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
		w.comprehension(n, sc)
	case "named_expression":
		w.expr(n.child("value"), sc)
		target := sc
		for target.kind == scopeComprehension {
			target = target.parent
		}
		if nm := n.child("name"); nm != nil {
			w.bindName(nm, target, DefWalrus)
		}
	case "string", "concatenated_string", "interpolation", "format_specifier", "format_expression":
		for _, k := range n.kids {
			switch k.typ {
			case "interpolation", "string", "format_specifier", "format_expression":
				w.expr(k, sc)
			default:
				if k.field == "expression" {
					w.expr(k, sc)
				}
			}
		}
	case "integer", "float", "true", "false", "none", "ellipsis", "comment", "type_conversion":
	default:
		w.exprs(n, sc)
	}
}

// maskEnd returns the end of the masked span containing off.
func maskEnd(m *masked, off int) int { return m.spanEnd(off) }

func (w *walker) comprehension(n *node, sc *scope) {
	cs := &scope{kind: scopeComprehension, parent: sc, names: map[string]bool{}}
	first := true
	for _, k := range n.kids {
		switch k.typ {
		case "for_in_clause":
			rights := k.children("right")
			for _, r := range rights {
				if first {
					w.expr(r, sc) // the first iterable is evaluated in the enclosing scope
				} else {
					w.expr(r, cs)
				}
			}
			first = false
			w.bindTarget(k.child("left"), cs, DefAssign)
		case "if_clause":
			w.exprs(k, cs)
		}
	}
	if b := n.child("body"); b != nil {
		w.expr(b, cs)
	}
}

// chain returns the identifier nodes of a pure dotted chain rooted at a name, with the
// root first; ok is false when the chain contains calls or subscripts.
func chain(n *node) (parts []*node, ok bool) {
	switch n.typ {
	case "identifier":
		return []*node{n}, true
	case "attribute":
		base, ok := chain(n.child("object"))
		a := n.child("attribute")
		if !ok || a == nil {
			return nil, false
		}
		return append(base, a), true
	}
	return nil, false
}

// moduleLevel reports whether facts seen in sc are about module-level objects: accesses
// in function bodies are about whatever the function is called with.
func (w *walker) moduleLevel(root string, sc *scope) bool {
	if w.fnDepth > 0 {
		return false
	}
	for s := sc; s != nil; s = s.parent {
		if s.kind != scopeModule && s.names[root] {
			return false
		}
	}
	return true
}

func (w *walker) attribute(n *node, sc *scope, called bool) {
	parts, ok := chain(n)
	if !ok {
		w.expr(n.child("object"), sc)
		return
	}
	w.read(parts[0], sc)
	if !w.moduleLevel(w.src(parts[0]), sc) {
		return
	}
	ac := AttrChain{Range: w.idx.Range(n.start, n.end), Called: called}
	for _, p := range parts {
		ac.Parts = append(ac.Parts, w.src(p))
		ac.PartRanges = append(ac.PartRanges, w.idx.Range(p.start, p.end))
	}
	w.f.Attrs = append(w.f.Attrs, ac)
}

func (w *walker) subscript(n *node, sc *scope) {
	value := n.child("value")
	subs := n.children("subscript")
	w.expr(value, sc)
	for _, s := range subs {
		w.expr(s, sc)
	}
	if len(subs) == 0 {
		return
	}
	if parts, ok := chain(value); ok && !w.moduleLevel(w.src(parts[0]), sc) || w.fnDepth > 0 {
		return
	}
	e := w.conv.expr(n)
	s := Subscript{Object: e.Value, Index: e.Index, Range: e.Range}
	addKey := func(k *Expr) {
		if k != nil && k.Kind == ExprUnaryOp && k.Name == "-" && len(k.Args) == 1 && k.Args[0].Kind == ExprConst {
			// x[-1]: fold the sign into the key.
			switch v := k.Args[0].Const.(type) {
			case int64:
				s.Keys = append(s.Keys, -v)
				s.KeyRanges = append(s.KeyRanges, k.Range)
			case float64:
				s.Keys = append(s.Keys, -v)
				s.KeyRanges = append(s.KeyRanges, k.Range)
			}
			return
		}
		if k != nil && k.Kind == ExprConst && k.Const != nil {
			if _, isBool := k.Const.(bool); !isBool {
				s.Keys = append(s.Keys, k.Const)
				s.KeyRanges = append(s.KeyRanges, k.Range)
			}
		}
	}
	switch idx := e.Index; {
	case idx == nil:
	case idx.Kind == ExprConst || idx.Kind == ExprUnaryOp:
		addKey(idx)
	case idx.Kind == ExprList:
		for _, a := range idx.Args {
			if a.Kind != ExprConst {
				return // a list with a non-constant element: not a constant key
			}
		}
		s.List = true
		for _, a := range idx.Args {
			addKey(a)
		}
	case idx.Kind == ExprTuple:
		for _, a := range idx.Args {
			addKey(a)
		}
	}
	if len(s.Keys) > 0 {
		w.f.Subscripts = append(w.f.Subscripts, s)
	}
}

func (w *walker) call(n *node, sc *scope) {
	fn := n.child("function")
	args := n.child("arguments")
	if fn != nil && fn.typ == "attribute" {
		w.attribute(fn, sc, true)
	} else {
		w.expr(fn, sc)
	}
	switch {
	case args == nil:
	case args.typ == "generator_expression":
		w.expr(args, sc) // f(x for x in xs): the argument is a comprehension
	default:
		w.exprs(args, sc)
	}
	if fn == nil {
		return
	}
	// Only a short callee can be one of these; a long one (a method chain) is not compacted,
	// which would cost its length at every call of the chain.
	switch callee := compactShort(w.src(fn)); callee {
	case "exec", "globals().update", "vars().update", "locals().update", "globals().setdefault":
		// Names bound this way cannot be listed: treat like a star import.
		w.f.StarImports = append(w.f.StarImports, callee+"()")
	}
	parts, ok := chain(fn)
	if !ok {
		return
	}
	root := w.src(parts[0])
	if len(parts) == 1 {
		if f := enclosingFunc(sc); f != nil {
			f.fn.calls[root] = true
		} else if info := w.funcs[root]; info != nil && !sc.names[root] {
			w.callFunc(info, map[*funcInfo]bool{})
		}
	}
	if !w.moduleLevel(root, sc) {
		return
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = w.src(p)
	}
	w.f.Calls = append(w.f.Calls, Call{Callee: strings.Join(names, "."), Expr: w.conv.expr(n), Range: w.idx.Range(n.start, n.end)})
}

// compactShort returns s without spaces when s is at most 256 bytes long, "" otherwise.
func compactShort(s string) string {
	if len(s) > 256 {
		return ""
	}
	return strings.ReplaceAll(s, " ", "")
}

// callFunc resolves the reads of a cell function at the point the cell calls it.
func (w *walker) callFunc(info *funcInfo, seen map[*funcInfo]bool) {
	if seen[info] {
		return
	}
	seen[info] = true
	for _, r := range info.reads {
		if w.bound[r.name] {
			continue
		}
		w.addUse(r.name, r.start, r.end, info.name, r.guarded || w.guard > 0 || w.guarded[r.name] > 0)
	}
	for name := range info.calls {
		if callee := w.funcs[name]; callee != nil {
			w.callFunc(callee, seen)
		}
	}
	for _, g := range info.globals {
		w.bound[g] = true
	}
}

// read resolves a read of the name at id.
func (w *walker) read(id *node, sc *scope) {
	name := w.src(id)
	inLambda := false
	for s := sc; s != nil; s = s.parent {
		switch s.kind {
		case scopeComprehension, scopeClass:
			if s.names[name] {
				return
			}
		case scopeLambda:
			if s.names[name] {
				return
			}
			inLambda = true
		case scopeFunction:
			if !s.globals[name] && s.names[name] {
				return
			}
			if enclosingFunc(s.parent) != nil && !s.globals[name] {
				continue // an enclosing function may bind it
			}
			s.fn.reads = append(s.fn.reads, read{name: name, start: id.start, end: id.end,
				guarded: w.guard > 0 || w.guarded[name] > 0})
			return
		case scopeModule:
			if w.bound[name] || inLambda && w.everBound[name] {
				return
			}
			w.addUse(name, id.start, id.end, "", w.guard > 0 || w.guarded[name] > 0)
			return
		}
	}
}

func (w *walker) addUse(name string, start, end int, inFunc string, guarded bool) {
	key := [2]int{start, end}
	if w.seenUse[key] {
		return
	}
	w.seenUse[key] = true
	w.f.Uses = append(w.f.Uses, Use{Name: name, Range: w.idx.Range(start, end), InFunction: inFunc, Guarded: guarded})
}

// collectBindings reports every name bound by the statements under n in n's own scope
// (not inside nested functions, classes, lambdas or comprehension targets), and calls decl
// with each global/nonlocal statement.
func collectBindings(n *node, text string, add func(string), decl func(*node)) {
	if n == nil {
		return
	}
	switch n.typ {
	case "function_definition", "class_definition":
		if nm := n.child("name"); nm != nil {
			add(text[nm.start:nm.end])
		}
		return
	case "lambda":
		return
	case "assignment", "augmented_assignment":
		if n.typ == "assignment" && n.child("type") != nil && n.child("right") == nil {
			return
		}
		targetNames(n.child("left"), text, add)
		collectBindings(n.child("right"), text, add, decl)
		return
	case "for_statement":
		targetNames(n.child("left"), text, add)
	case "with_item":
		if v := n.child("value"); v != nil && v.typ == "as_pattern" {
			if a := v.child("alias"); a != nil {
				targetNames(a.firstNamed(), text, add)
			}
		}
	case "except_clause":
		for _, p := range n.kids {
			if p.typ == "as_pattern" {
				if a := p.child("alias"); a != nil {
					targetNames(a.firstNamed(), text, add)
				}
			}
		}
	case "import_statement", "import_from_statement":
		for _, k := range n.kids {
			switch {
			case k.field != "name":
			case k.typ == "dotted_name":
				if first := k.firstNamed(); first != nil {
					add(text[first.start:first.end])
				}
			case k.typ == "aliased_import":
				if a := k.child("alias"); a != nil {
					add(text[a.start:a.end])
				}
			}
		}
		return
	case "delete_statement":
		if t := n.firstNamed(); t != nil {
			targetNames(t, text, add)
		}
		return
	case "named_expression":
		if nm := n.child("name"); nm != nil {
			add(text[nm.start:nm.end])
		}
	case "for_in_clause":
		// Comprehension targets are local to the comprehension.
		for _, r := range n.children("right") {
			collectBindings(r, text, add, decl)
		}
		return
	case "global_statement", "nonlocal_statement":
		if decl != nil {
			decl(n)
		}
		return
	}
	for _, k := range n.kids {
		collectBindings(k, text, add, decl)
	}
}

// targetNames reports the names an assignment target binds.
func targetNames(t *node, text string, add func(string)) {
	if t == nil {
		return
	}
	switch t.typ {
	case "identifier":
		add(text[t.start:t.end])
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list",
		"parenthesized_expression", "list_splat_pattern", "list_splat", "as_pattern_target":
		for _, k := range t.namedKids() {
			targetNames(k, text, add)
		}
	}
}
