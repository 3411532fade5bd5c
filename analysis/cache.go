package analysis

import (
	"sync"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// Cache keeps each cell's facts and syntax tree between edits, keyed by cell ID. When a
// cell's text changes, the edit is derived from the common prefix and suffix of the old
// and new (masked) text, applied to the old tree, and tree-sitter re-parses only what
// changed. The zero value is ready to use; a Cache is safe for concurrent use.
//
// Returned facts are shared between callers and must not be modified.
type Cache struct {
	mu    sync.Mutex
	cells map[string]*cacheEntry
}

type cacheEntry struct {
	mu     sync.Mutex
	text   string
	src    []byte // the masked text the tree was parsed from
	tree   *sitter.Tree
	facts  *CellFacts
	parsed bool
	utf8   bool // src is valid UTF-8
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{} }

// Facts returns the facts of the cell id with the given text, re-using the cached facts
// when the text is unchanged and the cached tree when it is not.
func (c *Cache) Facts(id, text string) *CellFacts {
	c.mu.Lock()
	if c.cells == nil {
		c.cells = map[string]*cacheEntry{}
	}
	e := c.cells[id]
	if e == nil {
		e = &cacheEntry{}
		c.cells[id] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.parsed && e.text == text {
		return e.facts
	}
	if len(text) > MaxCellBytes {
		e.forgetTree()
		e.facts, e.text, e.src, e.parsed = tooLargeFacts(text), text, nil, true
		return e.facts
	}
	m := maskCell(text)
	if off := bracketOverflow(m.src); off >= 0 {
		e.forgetTree()
		e.facts, e.text, e.src, e.parsed = bracketFacts(text, off), text, nil, true
		return e.facts
	}
	var old *sitter.Tree
	// Incremental parsing is only for well-formed text: with invalid UTF-8, tree-sitter's
	// edited tree and its decoder can disagree on positions, and a re-parse may not end.
	if e.parsed && e.tree != nil && e.utf8 && utf8.Valid(m.src) && int(e.tree.RootNode().EndByte()) == len(e.src) {
		old = e.tree
		old.Edit(inputEdit(e.src, m.src))
	}
	tree, abandoned := parseTree(m.src, old)
	if abandoned {
		e.tree = nil // still in use by the abandoned parse: neither reuse nor free it
	}
	root, deep := mirror(tree)
	e.facts = buildFacts(text, m, root, deep)
	e.text, e.src, e.parsed = text, m.src, true
	e.utf8 = utf8.Valid(m.src)
	// Trees are freed here, explicitly, not by finalizers on another thread. Keep a fresh
	// copy: the walked tree caches every node it handed out.
	if e.tree != nil {
		e.tree.Close()
		e.tree = nil
	}
	if tree != nil {
		e.tree = tree.Copy()
		tree.Close()
	}
	return e.facts
}

// forgetTree frees the entry's tree (the next parse starts from scratch). Callers hold
// e.mu.
func (e *cacheEntry) forgetTree() {
	if e.tree != nil {
		e.tree.Close()
		e.tree = nil
	}
}

// Forget drops the cell id (deleted or closed).
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	e := c.cells[id]
	delete(c.cells, id)
	c.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		if e.tree != nil {
			e.tree.Close()
			e.tree = nil
		}
		e.mu.Unlock()
	}
}

// retain drops the cells not in keep (deleted from the notebook), freeing their trees: an
// editor gives every new cell a new ID, so without this a long session would keep every
// cell it ever saw.
func (c *Cache) retain(keep map[string]*CellFacts) {
	c.mu.Lock()
	var gone []string
	for id := range c.cells {
		if _, ok := keep[id]; !ok {
			gone = append(gone, id)
		}
	}
	c.mu.Unlock()
	for _, id := range gone {
		c.Forget(id)
	}
}

// Len returns the number of cells cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cells)
}

// inputEdit describes the change from old to new as one tree-sitter edit: the differing
// middle between their common prefix and common suffix.
func inputEdit(old, new []byte) sitter.EditInput {
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	return sitter.EditInput{
		StartIndex:  uint32(p),
		OldEndIndex: uint32(len(old) - s),
		NewEndIndex: uint32(len(new) - s),
		StartPoint:  point(old, p),
		OldEndPoint: point(old, len(old)-s),
		NewEndPoint: point(new, len(new)-s),
	}
}

// point returns tree-sitter's (row, byte column) of offset off.
func point(src []byte, off int) sitter.Point {
	var row, col uint32
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			row, col = row+1, 0
		} else {
			col++
		}
	}
	return sitter.Point{Row: row, Column: col}
}
