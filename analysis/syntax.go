package analysis

import (
	"context"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"
)

// node mirrors one tree-sitter node in Go memory. Facts are computed from this mirror rather
// than from the cgo tree: one cgo walk per parse, then plain Go, and no tree-sitter object
// outlives the parse except the tree kept for incremental re-parsing.
type node struct {
	typ        string
	field      string // field name in the parent ("left", "body", ...), "" if none
	start, end int    // byte offsets in the (masked) cell text
	named      bool
	kids       []*node
}

// child returns the first child with the given field name, or nil.
func (n *node) child(field string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.field == field {
			return k
		}
	}
	return nil
}

// children returns all children with the given field name.
func (n *node) children(field string) []*node {
	if n == nil {
		return nil
	}
	var out []*node
	for _, k := range n.kids {
		if k.field == field {
			out = append(out, k)
		}
	}
	return out
}

// namedKids returns the named children, skipping comments.
func (n *node) namedKids() []*node {
	if n == nil {
		return nil
	}
	var out []*node
	for _, k := range n.kids {
		if k.named && k.typ != "comment" {
			out = append(out, k)
		}
	}
	return out
}

// firstNamed returns the first named non-comment child, or nil.
func (n *node) firstNamed() *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.named && k.typ != "comment" {
			return k
		}
	}
	return nil
}

// hasToken reports whether an anonymous child token typ is present.
func (n *node) hasToken(typ string) bool {
	if n == nil {
		return false
	}
	for _, k := range n.kids {
		if !k.named && k.typ == typ {
			return true
		}
	}
	return false
}

var pythonLang = python.GetLanguage()

// symbolNames are the node type names by symbol: one lookup instead of a cgo call and a
// string copy per node.
var symbolNames = func() []string {
	names := make([]string, pythonLang.SymbolCount())
	for i := range names {
		names[i] = pythonLang.SymbolName(sitter.Symbol(i))
	}
	return names
}()

// symbolName returns the type name of symbol s.
func symbolName(s sitter.Symbol) string {
	if int(s) < len(symbolNames) {
		return symbolNames[s]
	}
	return pythonLang.SymbolName(s)
}

// parsers holds idle tree-sitter parsers: a parser is not safe for concurrent use, and
// making one per parse costs more than the parse of a small cell. Unlike a sync.Pool it
// never drops them, so no parser is freed by a finalizer while trees are being worked on.
var parsers = make(chan *sitter.Parser, 8)

func getParser() *sitter.Parser {
	select {
	case p := <-parsers:
		return p
	default:
		p := sitter.NewParser()
		p.SetLanguage(pythonLang)
		return p
	}
}

func putParser(p *sitter.Parser) {
	select {
	case parsers <- p:
	default:
		p.Close()
	}
}

// parseTimeout bounds one tree-sitter parse (microseconds): no real cell comes close, and
// a pathological one must not stall the server.
const parseTimeout = 2_000_000

// parseDeadline bounds how long a caller waits for one parse. tree-sitter has been seen,
// very rarely and only on long random binary input, to spin inside a parse that its own
// timeout does not stop; such a parse is abandoned (its goroutine and parser are lost)
// rather than hanging the server.
const parseDeadline = 3 * time.Second

// parseTree parses src with tree-sitter, reusing old (already edited) when non-nil. It
// returns nil when tree-sitter gave up; abandoned is true when the parse was left running
// past parseDeadline, in which case old must not be used or freed any more.
func parseTree(src []byte, old *sitter.Tree) (t *sitter.Tree, abandoned bool) {
	done := make(chan *sitter.Tree, 1)
	go func() { done <- parseTreeNow(src, old) }()
	timer := time.NewTimer(parseDeadline)
	defer timer.Stop()
	select {
	case t := <-done:
		return t, false
	case <-timer.C:
		go func() {
			// Free the tree if the parse ever finishes.
			if t := <-done; t != nil {
				t.Close()
			}
		}()
		return nil, true
	}
}

func parseTreeNow(src []byte, old *sitter.Tree) *sitter.Tree {
	p := getParser()
	defer putParser(p)
	p.SetOperationLimit(parseTimeout)
	t, err := p.ParseCtx(context.Background(), old, src)
	if err != nil || t == nil {
		// A halted parse would resume on the next call: start over, from scratch.
		p.Reset()
		if old == nil {
			return nil
		}
		t, err = p.ParseCtx(context.Background(), nil, src)
		if err != nil || t == nil {
			p.Reset()
			return nil
		}
	}
	return t
}

// mirror copies the tree into Go nodes with one cursor walk, down to maxDepth: a deeper
// subtree becomes one childless "TOODEEP" node spanning its text, and deep is the start of
// the first such node (-1 when none).
func mirror(t *sitter.Tree) (root *node, deep int) {
	if t == nil {
		return &node{typ: "TIMEOUT", named: true}, -1
	}
	c := sitter.NewTreeCursor(t.RootNode())
	defer c.Close()
	deep = -1
	return mirrorAt(c, "", 0, &deep), deep
}

func mirrorAt(c *sitter.TreeCursor, field string, depth int, deep *int) *node {
	n := c.CurrentNode()
	m := &node{
		typ:   symbolName(n.Symbol()),
		field: field,
		start: int(n.StartByte()),
		end:   int(n.EndByte()),
		named: n.IsNamed(),
	}
	if m.start == m.end && n.IsMissing() { // only a zero-width node can be missing
		m.typ = "MISSING"
	}
	if depth >= maxDepth && n.ChildCount() > 0 {
		m.typ, m.named = "TOODEEP", true
		if *deep < 0 {
			*deep = m.start
		}
		return m
	}
	if c.GoToFirstChild() {
		for {
			m.kids = append(m.kids, mirrorAt(c, c.CurrentFieldName(), depth+1, deep))
			if !c.GoToNextSibling() {
				break
			}
		}
		c.GoToParent()
	}
	return m
}
