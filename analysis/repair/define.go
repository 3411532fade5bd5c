package repair

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Undefined name bound by another cell: the cell that binds it has not run (it sits below
// the target, or was skipped), or it ran but the binding did not survive (a later `del`, a
// run that raised before it). Renaming the use to another name would change the data, so
// the repair copies the binding: the defining statements of that cell — the backward slice
// of the binding, down to the names the kernel already holds — inserted before the first
// use, unchanged. What a user gets is the cell's value as if the defining cell had run.

func init() {
	register(family{name: "define-name", gen: defineGen})
}

const (
	// maxSliceStatements bounds the statements one definition copies; a longer slice is the
	// other cell's work, better run there.
	maxSliceStatements = 6
	// maxSliceLines bounds the lines copied.
	maxSliceLines = 16
	// maxSliceCells bounds the cells a slice reaches across (the defining cell and those
	// that bind what it reads).
	maxSliceCells = 3
)

func defineGen(in *Input) []Candidate {
	name, ok := undefinedName(in)
	if !ok {
		return nil
	}
	at, ok := firstUseStatement(in, name)
	if !ok {
		return nil
	}
	avail := availableAt(in, at)
	var out []Candidate
	for _, src := range definingCells(in, name) {
		sl := newSlicer(in, src.cells, avail)
		if !sl.need(name, 0, -1, 0) {
			continue
		}
		code, ok := sl.code()
		if !ok {
			continue
		}
		cell := src.cells[0]
		why := "has not run"
		if src.ran {
			why = "ran, but the kernel no longer holds " + name
		}
		out = append(out, Candidate{
			Fix: finding.Fix{
				Title: fmt.Sprintf("Define %s as in cell %d: `%s`", name, cell.Index+1, summarize(code)),
				Edits: []finding.Edit{insertBefore(in.Text, at, code)},
			},
			Keeps: fmt.Sprintf("cell %d binds %s and %s; its statements are copied unchanged", cell.Index+1, name, why),
		})
		if len(out) == 2 {
			break
		}
	}
	return out
}

// undefinedName is the name a NameError is about, when the kernel's namespace is known and
// lacks it.
func undefinedName(in *Input) (string, bool) {
	if in.exception() != "NameError" || in.Facts == nil || in.Inspection == nil || in.Inspection.Namespace == nil {
		return "", false
	}
	name := ""
	if m := nameErrorRE.FindStringSubmatch(in.message()); m != nil {
		name = m[1]
	} else if t := strings.TrimSpace(textOf(in.Text, in.Finding.Range)); isIdent(t) {
		// A static finding worded otherwise ("'x' is defined in cell 5, which has not run
		// yet") marks the name itself.
		name = t
	}
	if name == "" || in.inNamespace(name) || analysis.IsBuiltin(name) {
		return "", false
	}
	return name, true
}

// firstUseStatement returns the first line of the top-level statement of the cell that
// reads name first (or holds the crash, if earlier): a definition goes before it, at the
// statement's own indentation (top level).
func firstUseStatement(in *Input, name string) (int, bool) {
	first := in.crashLine()
	for _, u := range in.Facts.Uses {
		if u.Name == name && u.Range.Start.Line < first {
			first = u.Range.Start.Line
		}
	}
	for _, st := range in.Facts.Statements {
		if st != nil && st.Range.Start.Line <= first && first <= st.Range.End.Line {
			return st.Range.Start.Line, true
		}
	}
	if first == 0 || strings.TrimSpace(lineAt(in.Text, first)) != "" && indentOf(lineAt(in.Text, first)) == "" {
		return first, true
	}
	return 0, false
}

// availableAt are the names a statement inserted before line at may read: the kernel's
// namespace, and what the cell binds above that line.
func availableAt(in *Input, at int) map[string]bool {
	avail := map[string]bool{}
	for _, n := range in.Inspection.Namespace {
		avail[n] = true
	}
	for _, d := range in.Facts.Defs {
		if d.Range.Start.Line < at && !d.Conditional && d.Kind != analysis.DefDelete {
			avail[d.Name] = true
		}
	}
	return avail
}

// source is a cell that binds the missing name, first, and the cells its slice may reach.
type source struct {
	cells []Cell
	ran   bool
}

// definingCells returns the cells that bind name at top level, best first: cells that have
// not run (nearest above the target first: a skipped cell, then cells below it), then
// executed cells, the latest run first. Each comes with the other candidate cells behind
// it, where the slice may find what the defining cell reads.
func definingCells(in *Input, name string) []source {
	var unran, ran []Cell
	for _, c := range in.Unran {
		if bindsTop(c, name) {
			unran = append(unran, c)
		}
	}
	sort.SliceStable(unran, func(i, j int) bool { return unran[i].Index < unran[j].Index })
	for i := len(in.History) - 1; i >= 0; i-- {
		if bindsTop(in.History[i], name) {
			ran = append(ran, in.History[i])
		}
	}
	pool := append(append([]Cell(nil), in.Unran...), in.History...)
	with := func(c Cell) []Cell {
		cs := []Cell{c}
		for _, o := range pool {
			if o.ID != c.ID {
				cs = append(cs, o)
			}
		}
		return cs
	}
	var out []source
	for _, c := range unran {
		out = append(out, source{cells: with(c)})
	}
	for _, c := range ran {
		out = append(out, source{cells: with(c), ran: true})
	}
	return out
}

func bindsTop(c Cell, name string) bool {
	cf := c.Facts
	if cf == nil {
		cf = analysis.ParseCell(c.Text)
	}
	for _, d := range cf.Defs {
		if d.Name == name && d.Kind != analysis.DefDelete {
			return true
		}
	}
	return false
}

// slicer collects the statements a binding needs, across at most maxSliceCells cells.
type slicer struct {
	in     *Input
	cells  []Cell
	stmts  [][]analysis.StatementFacts // by index in cells, parsed on demand
	avail  map[string]bool
	picked map[[2]int]bool
	order  [][2]int // post-order: what a statement needs comes before it
	used   map[int]bool
}

func newSlicer(in *Input, cells []Cell, avail map[string]bool) *slicer {
	return &slicer{in: in, cells: cells, stmts: make([][]analysis.StatementFacts, len(cells)), avail: avail, picked: map[[2]int]bool{}, used: map[int]bool{}}
}

func (s *slicer) statements(ci int) []analysis.StatementFacts {
	if s.stmts[ci] == nil {
		s.stmts[ci] = analysis.CellStatements(s.cells[ci].Text)
		if s.stmts[ci] == nil {
			s.stmts[ci] = []analysis.StatementFacts{}
		}
	}
	return s.stmts[ci]
}

// need makes name available: from the kernel, from the statements of cell ci before index
// before (-1: anywhere in it), else from another cell. It reports whether it could.
func (s *slicer) need(name string, ci, before, depth int) bool {
	if s.avail[name] || analysis.IsBuiltin(name) {
		return true
	}
	if strings.HasPrefix(name, "_") {
		return false // the namespace listing leaves these out: whether the kernel has it is unknown
	}
	if k := s.lastBinding(ci, name, before); k >= 0 {
		return s.take(ci, k, name, depth)
	}
	if depth >= maxSliceCells-1 {
		return false
	}
	for oi := range s.cells {
		if oi == ci {
			continue
		}
		if k := s.lastBinding(oi, name, -1); k >= 0 {
			return s.take(oi, k, name, depth+1)
		}
	}
	return false
}

// lastBinding is the index of the last statement of cell ci before index before that binds
// name (unconditionally), -1 when none.
func (s *slicer) lastBinding(ci int, name string, before int) int {
	st := s.statements(ci)
	if before < 0 || before > len(st) {
		before = len(st)
	}
	for k := before - 1; k >= 0; k-- {
		for _, d := range st[k].Facts.Defs {
			if d.Name == name && d.Kind != analysis.DefDelete {
				return k
			}
		}
	}
	return -1
}

// take adds statement k of cell ci (which binds name) and what it needs, then the
// statements after it in that cell that change name in place (features.append(...),
// df['x'] = ...).
func (s *slicer) take(ci, k int, name string, depth int) bool {
	key := [2]int{ci, k}
	if s.picked[key] {
		return true
	}
	st := s.statements(ci)[k]
	if !movable(st) {
		return false
	}
	s.picked[key] = true
	s.used[ci] = true
	if len(s.picked) > maxSliceStatements || len(s.used) > maxSliceCells {
		return false
	}
	reads := append(append([]analysis.Use(nil), st.Facts.Uses...), st.MethodReads...)
	for _, u := range reads {
		if !s.need(u.Name, ci, k, depth) {
			return false
		}
	}
	s.order = append(s.order, key)
	stmts := s.statements(ci)
	for m := k + 1; m < len(stmts); m++ {
		if rebinds(stmts[m], name) {
			break
		}
		if mutates(stmts[m], name) {
			if !s.take(ci, m, name, depth) {
				return false
			}
		}
	}
	return true
}

// movable reports whether a statement can be copied into another cell: it parsed, writes
// nothing and binds names only at top level of its own (no return, no magic).
func movable(st analysis.StatementFacts) bool {
	f := st.Facts
	return f != nil && len(f.SyntaxErrors) == 0 && len(f.SideEffects) == 0 && len(f.Magics) == 0 && len(f.StarImports) == 0 && len(f.Globals) == 0
}

func rebinds(st analysis.StatementFacts, name string) bool {
	for _, d := range st.Facts.Defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// mutatorMethods change their object in place.
var mutatorMethods = map[string]bool{"append": true, "extend": true, "insert": true, "remove": true, "update": true,
	"add": true, "discard": true, "sort": true, "reverse": true, "clear": true, "setdefault": true}

// mutates reports whether a statement changes name in place without rebinding it: an
// assignment to name[...] or name.attr, a mutating method call, or inplace=True.
func mutates(st analysis.StatementFacts, name string) bool {
	for _, sub := range st.Facts.Subscripts {
		if sub.Object != nil && sub.Object.Kind == analysis.ExprName && sub.Object.Text == name && onTarget(st, sub.Range) {
			return true
		}
	}
	for _, c := range st.Facts.Calls {
		parts := strings.Split(c.Callee, ".")
		if len(parts) == 2 && parts[0] == name {
			if mutatorMethods[parts[1]] {
				return true
			}
			if c.Expr != nil {
				for _, kw := range c.Expr.Keywords {
					if kw.Name == "inplace" && kw.Value != nil && kw.Value.Text == "True" {
						return true
					}
				}
			}
		}
	}
	for _, a := range st.Facts.Attrs {
		if len(a.Parts) >= 2 && a.Parts[0] == name && !a.Called && onTarget(st, a.Range) {
			return true
		}
	}
	return false
}

// onTarget reports whether r lies inside an assignment target of the statement:
// df['x'] = ... and df.x = ... do, df['x'].mean() does not.
func onTarget(st analysis.StatementFacts, r finding.Range) bool {
	for _, d := range st.Facts.Statements {
		if d == nil || (d.Kind != analysis.StmtAssign && d.Kind != analysis.StmtAugAssign) {
			continue
		}
		for _, t := range d.Targets {
			if t != nil && !r.Start.Before(t.Range.Start) && !t.Range.End.Before(r.End) {
				return true
			}
		}
	}
	return false
}

// code is the slice's statements, in an order that runs: the cells in the order the slice
// reached them last to first (what a cell needs from another comes first), each cell's
// statements in their own order.
func (s *slicer) code() (string, bool) {
	if len(s.order) == 0 {
		return "", false
	}
	rank := map[int]int{}
	for _, key := range s.order {
		if _, ok := rank[key[0]]; !ok {
			rank[key[0]] = len(rank)
		}
	}
	keys := append([][2]int(nil), s.order...)
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return rank[keys[i][0]] < rank[keys[j][0]]
		}
		return keys[i][1] < keys[j][1]
	})
	var parts []string
	n := 0
	for _, key := range keys {
		st := s.statements(key[0])[key[1]]
		ls := lines(s.cells[key[0]].Text)
		if st.EndLine >= len(ls) {
			return "", false
		}
		body := strings.Join(ls[st.StartLine:st.EndLine+1], "\n")
		body = strings.TrimRight(body, " \t\r\n")
		if indentOf(ls[st.StartLine]) != "" {
			return "", false // a statement inside a block of its own cell: not top level
		}
		n += st.EndLine - st.StartLine + 1
		parts = append(parts, body)
	}
	if n > maxSliceLines {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// summarize shows code in a title: its statements joined with "; " when short, else its
// first line and an ellipsis.
func summarize(code string) string {
	ls := lines(code)
	one := strings.Join(ls, "; ")
	if len(ls) > 1 && (len(one) > 90 || strings.HasSuffix(strings.TrimSpace(ls[0]), ":")) {
		return strings.TrimSpace(ls[0]) + " …"
	}
	if r := []rune(one); len(r) > 90 {
		return string(r[:87]) + "…"
	}
	return one
}
