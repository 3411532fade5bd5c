package analysis

import (
	"sort"
	"strings"

	"github.com/premortem/premortem/finding"
)

// ParseCell computes the facts of one cell's text. It never fails: IPython syntax is
// masked first, and whatever tree-sitter cannot parse is reported in SyntaxErrors while the
// rest still yields facts. Use a Cache to re-parse incrementally while the user types.
func ParseCell(text string) *CellFacts {
	if len(text) > MaxCellBytes {
		return tooLargeFacts(text)
	}
	m := maskCell(text)
	if off := bracketOverflow(m.src); off >= 0 {
		return bracketFacts(text, off)
	}
	tree, _ := parseTree(m.src, nil)
	root, deep := mirror(tree)
	// Free the tree now, on this goroutine, rather than in a finalizer.
	if tree != nil {
		tree.Close()
	}
	return buildFacts(text, m, root, deep)
}

// buildFacts derives every fact from the mirrored tree; deep is where the tree was cut at
// maxDepth (-1: nowhere).
func buildFacts(text string, m *masked, root *node, deep int) *CellFacts {
	idx := NewLineIndex(text)
	conv := &converter{text: text, idx: idx, mask: m, memo: map[*node]*Expr{}}
	f := &CellFacts{}
	if deep >= 0 {
		f.Limits = append(f.Limits, tooDeep(idx, deep))
	}
	for _, mg := range m.magics {
		f.Magics = append(f.Magics, Magic{
			Kind: mg.kind, Name: mg.name, Text: text[mg.start:mg.end],
			Range: idx.Range(mg.start, mg.end), PythonBody: mg.pythonBody,
		})
	}
	if !m.pythonBody {
		f.SideEffects = magicEffects(f.Magics)
		return f
	}
	f.Statements = conv.statements(root)
	f.SyntaxErrors = syntaxErrors(root, idx, m)
	w := newWalker(text, m, idx, conv, f)
	w.module(root)
	if m.noDefs {
		f.Defs = nil // %%timeit runs the body in its own namespace
	}
	for _, mg := range f.Magics {
		switch {
		case mg.Kind == MagicCell && mg.Name == "capture":
			// %%capture out binds out to the captured output.
			args := strings.Fields(strings.TrimPrefix(strings.TrimSpace(mg.Text), "%%capture"))
			for _, a := range args {
				if !strings.HasPrefix(a, "-") {
					i := strings.Index(mg.Text, a)
					start := idx.Offset(mg.Range.Start) + i
					f.Defs = append([]Def{{Name: a, Kind: DefAssign, Range: idx.Range(start, start+len(a))}}, f.Defs...)
					break
				}
			}
		case mg.Kind == MagicLine && (mg.Name == "run" || mg.Name == "store" && strings.Contains(mg.Text, "-r")):
			// %run script.py and %store -r bring names nobody can list statically.
			f.StarImports = append(f.StarImports, strings.TrimSpace(mg.Text))
		}
	}
	// Reads inside functions are recorded when the call is seen: put them in source order.
	sort.SliceStable(f.Uses, func(i, j int) bool { return f.Uses[i].Range.Start.Before(f.Uses[j].Range.Start) })
	f.SideEffects = append(magicEffects(f.Magics), findEffects(root, conv)...)
	sortEffects(f.SideEffects)
	return f
}

// syntaxErrors returns the outermost ERROR and MISSING nodes' ranges.
func syntaxErrors(root *node, idx *LineIndex, m *masked) []finding.Range {
	var out []finding.Range
	var walk func(n *node)
	walk = func(n *node) {
		switch n.typ {
		case "print_statement", "exec_statement":
			// Python 2 syntax the grammar accepts and Python 3 does not.
			out = append(out, idx.Range(n.start, n.end))
			return
		case "ERROR", "MISSING":
			end := n.end
			if end == n.start && end < idx.x.Len() {
				end++ // a missing token has no width; mark the next character
			}
			out = append(out, idx.Range(n.start, end))
			return
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	for _, off := range m.bad {
		out = append(out, idx.Range(off, off+1))
	}
	if root.typ == "TIMEOUT" && idx.x.Len() > 0 {
		out = append(out, idx.Range(0, idx.x.Len())) // the parse gave up
	}
	return out
}
