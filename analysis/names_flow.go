package analysis

import (
	"strings"
)

// Control flow in the scope walk: if and try statements that guard their reads (hasattr,
// "name in globals()", except NameError), and names a loop binds, which its second
// iteration sees.

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
