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
//
// Syntax trees are kept only for the cells being edited, at most maxTrees of them: a tree
// costs about a hundred times its text in C memory, so a tree per cell made a 15 MB
// notebook hold gigabytes, while a cell parsed once (opened, never edited) gains nothing
// from keeping one. A cell's first edit parses it from scratch; the edits after it are
// incremental.
type Cache struct {
	mu    sync.Mutex
	cells map[string]*cacheEntry
	// trees are the entries holding a tree, with the tick of their last parse; tick counts
	// parses that kept a tree.
	trees map[*cacheEntry]uint64
	tick  uint64
}

// maxTrees bounds the syntax trees one Cache keeps: the cells edited most recently.
const maxTrees = 16

type cacheEntry struct {
	mu     sync.Mutex
	text   string
	src    []byte // the masked text the tree was parsed from (nil without a tree)
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
	if e.parsed && e.text == text {
		f := e.facts
		e.mu.Unlock()
		return f
	}
	f, kept := e.parse(text)
	e.mu.Unlock()
	c.keptTree(e, kept)
	return f
}

// parse computes the entry's facts for text, re-using its tree when it has one, and
// reports whether it kept a tree: only an edit (a cell parsed before) keeps one. Callers
// hold e.mu.
func (e *cacheEntry) parse(text string) (*CellFacts, bool) {
	edited := e.parsed
	if len(text) > MaxCellBytes {
		e.forgetTree()
		e.facts, e.text, e.parsed = tooLargeFacts(text), text, true
		return e.facts, false
	}
	m := maskCell(text)
	if off := bracketOverflow(m.src); off >= 0 {
		e.forgetTree()
		e.facts, e.text, e.parsed = bracketFacts(text, off), text, true
		return e.facts, false
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
	e.text, e.parsed = text, true
	// Trees are freed here, explicitly, not by finalizers on another thread. Keep a fresh
	// copy: the walked tree caches every node it handed out.
	e.forgetTree()
	if tree != nil {
		if edited {
			e.tree, e.src, e.utf8 = tree.Copy(), m.src, utf8.Valid(m.src)
		}
		tree.Close()
	}
	return e.facts, e.tree != nil
}

// keptTree records that e kept a tree (or no longer has one) and frees the trees of the
// cells edited longest ago beyond maxTrees.
func (c *Cache) keptTree(e *cacheEntry, kept bool) {
	c.mu.Lock()
	if !kept {
		delete(c.trees, e)
		c.mu.Unlock()
		return
	}
	if c.trees == nil {
		c.trees = map[*cacheEntry]uint64{}
	}
	c.tick++
	c.trees[e] = c.tick
	var victims []*cacheEntry
	for len(c.trees) > maxTrees {
		var oldest *cacheEntry
		for v, t := range c.trees {
			if oldest == nil || t < c.trees[oldest] {
				oldest = v
			}
		}
		delete(c.trees, oldest)
		victims = append(victims, oldest)
	}
	c.mu.Unlock()
	for _, v := range victims {
		v.mu.Lock()
		v.forgetTree()
		v.mu.Unlock()
	}
}

// forgetTree frees the entry's tree (the next parse starts from scratch). Callers hold
// e.mu.
func (e *cacheEntry) forgetTree() {
	if e.tree != nil {
		e.tree.Close()
		e.tree = nil
	}
	e.src = nil
}

// Forget drops the cell id (deleted or closed).
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	e := c.cells[id]
	delete(c.cells, id)
	delete(c.trees, e)
	c.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.forgetTree()
		e.mu.Unlock()
	}
}

// Close drops every cell and frees their trees (the notebook was closed). The cache
// stays usable: a later Facts starts from scratch.
func (c *Cache) Close() {
	c.mu.Lock()
	cells := c.cells
	c.cells, c.trees = nil, nil
	c.mu.Unlock()
	for _, e := range cells {
		e.mu.Lock()
		e.forgetTree()
		e.facts = nil
		e.parsed = false
		e.mu.Unlock()
	}
}

// Trees returns the number of syntax trees the cache holds (at most maxTrees).
func (c *Cache) Trees() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.trees)
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
