package analysis

import (
	"sort"
	"strings"

	"github.com/premortem/premortem/finding"
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
	rng     finding.Range
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
