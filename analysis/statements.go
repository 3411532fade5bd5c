package analysis

// StatementFacts is one top-level statement of a cell (with its indented block, its
// decorators and its elif/else/except/finally clauses) and the facts of that statement
// alone, for consumers that reason statement by statement, such as the LLM prompt's
// dependency slicer. Statements sharing a line (a = 1; b = 2) form one StatementFacts, so
// every line belongs to at most one.
type StatementFacts struct {
	// StartLine and EndLine are the statement's first and last lines in the cell, 0-based,
	// inclusive.
	StartLine, EndLine int
	// Facts are what ParseCell would report for a cell holding only this statement, with
	// ranges in the whole cell, except that magics and what they imply stay with the
	// cell. Uses are free names of the statement: a name an earlier statement of the cell
	// binds is still a use here.
	Facts *CellFacts
	// MethodReads are the module names read by the bodies of the methods of classes the
	// statement defines (Facts.Functions covers module-level functions only): they are
	// read when the class is used, so whoever needs the class needs them.
	MethodReads []Use
}

// CellStatements parses text once and returns the facts of each top-level statement, in
// order. Magics, blank and comment-only lines belong to no statement; a cell whose body is
// not Python (%%bash) has none. Like ParseCell it never fails: unparsable parts come back as
// statements whose Facts carry SyntaxErrors.
func CellStatements(text string) []StatementFacts {
	if len(text) > MaxCellBytes {
		return nil // ParseCell reports the cell as too large to analyse
	}
	m := maskCell(text)
	if !m.pythonBody || bracketOverflow(m.src) >= 0 {
		return nil // not Python, or nested too deep to analyse (ParseCell says so)
	}
	tree, _ := parseTree(m.src, nil)
	// A cut at the depth limit is reported once, in the cell's own facts (ParseCell).
	root, _ := mirror(tree)
	if tree != nil {
		tree.Close()
	}
	idx := NewLineIndex(text)
	lineOf := func(off int) int { return idx.Position(off).Line }
	type group struct {
		start, end int
		kids       []*node
	}
	var groups []group
	for _, k := range root.kids {
		if !k.named || k.typ == "comment" || m.inMask(k.start) {
			continue
		}
		first, last := lineOf(k.start), lineOf(max(k.start, k.end-1))
		if n := len(groups); n > 0 && first <= groups[n-1].end {
			groups[n-1].kids = append(groups[n-1].kids, k)
			groups[n-1].end = max(groups[n-1].end, last)
			continue
		}
		groups = append(groups, group{start: first, end: last, kids: []*node{k}})
	}
	// Magics are lines of their own, not part of any statement: leave them (and the
	// bindings and effects ParseCell derives from them) to the cell's facts.
	bare := *m
	bare.magics = nil
	out := make([]StatementFacts, 0, len(groups))
	for _, g := range groups {
		// A module node holding only this statement's nodes: every fact extractor walks
		// from a module, and the offsets stay the cell's.
		sub := &node{typ: root.typ, start: g.kids[0].start, end: g.kids[len(g.kids)-1].end, named: true, kids: g.kids}
		f := buildFacts(text, &bare, sub, -1)
		st := StatementFacts{StartLine: g.start, EndLine: g.end, Facts: f}
		for _, fn := range methods(g.kids) {
			mf := buildFacts(text, &bare, &node{typ: root.typ, start: fn.start, end: fn.end, named: true, kids: []*node{fn}}, -1)
			for _, x := range mf.Functions {
				st.MethodReads = append(st.MethodReads, x.Reads...)
			}
		}
		out = append(out, st)
	}
	return out
}

// methods returns the method definitions (with their decorators) of the classes defined
// among nodes, nested classes included.
func methods(nodes []*node) []*node {
	var out []*node
	var class func(n *node)
	class = func(n *node) {
		for _, k := range n.child("body").namedKids() {
			def := k
			if k.typ == "decorated_definition" {
				def = k.child("definition")
			}
			switch {
			case def == nil:
			case def.typ == "function_definition":
				out = append(out, k)
			case def.typ == "class_definition":
				class(def)
			}
		}
	}
	for _, n := range nodes {
		if n.typ == "decorated_definition" {
			n = n.child("definition")
		}
		if n != nil && n.typ == "class_definition" {
			class(n)
		}
	}
	return out
}
