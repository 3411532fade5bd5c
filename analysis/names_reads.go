package analysis

import (
	"strings"
)

// Reads in the scope walk: expressions, comprehensions, attribute chains, constant
// subscripts and calls (a call of a function the cell defined resolves its body).

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
