package analysis

import (
	"strings"
)

// Bindings in the scope walk: imports, functions and their parameters, classes, match
// patterns, del, and assignment targets.

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
