package llm

import (
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
)

// SliceDependencies returns the indexes into executed (ascending) of the cells the target
// depends on, transitively: walking back in execution order, a statement is kept when it
// binds or changes in place a name still needed, and then the names it reads are needed too;
// an unconditional top-level rebinding stops the search for earlier definitions of that
// name. It reads cells with analysis's tree-sitter facts (per statement) and errs on the side
// of keeping a cell.
func SliceDependencies(executed []CellText, target string) []int {
	return sliceStatements(executed, target, nil).cells
}

// statement is one top-level statement of a cell (with its indented block, decorators and
// else/except/finally clauses): physical lines start..end, inclusive.
type statement struct {
	start, end int
	names      *cellNames
}

// slice is the result of statement-level slicing.
type slice struct {
	// cells are the indexes of the executed cells with at least one kept statement.
	cells []int
	// depth is each kept cell's distance from the target (1 = binds a name the target
	// reads directly; larger = less relevant).
	depth map[int]int
	// kept lists, per kept cell, which of its statements are needed (by position in
	// statements(cell)); all of them when the whole cell is needed.
	kept map[int][]bool
	// stmts are the statements of each kept cell.
	stmts map[int][]statement
}

// splitStatements cuts a cell into top-level statements with analysis's tree-sitter
// front end. Magics, shell lines, blank and comment-only lines belong to no statement.
func splitStatements(src string) []statement {
	sts := cellStatements(src)
	out := make([]statement, len(sts))
	for i, st := range sts {
		out[i] = statement{start: st.StartLine, end: st.EndLine, names: mergeNames(src, sts[i:i+1])}
	}
	return out
}

// alwaysKept are statements that change how later code runs without binding a name.
func alwaysKept(text string) bool {
	return strings.Contains(text, "os.chdir") || strings.Contains(text, "sys.path")
}

// sliceStatements walks the executed cells' statements backwards from the target. Names in
// known have runtime facts: the statements that (re)bind or change them are kept, but what
// those statements read is not followed further back, since the facts describe the result.
func sliceStatements(executed []CellText, target string, known map[string]bool) slice {
	tn := analyzeCell(target)
	need := map[string]int{}
	for _, n := range tn.uses {
		need[n] = 0
	}
	for n := range tn.mutates {
		if _, ok := need[n]; !ok {
			need[n] = 0
		}
	}
	sl := slice{depth: map[int]int{}, kept: map[int][]bool{}, stmts: map[int][]statement{}}
	for i := len(executed) - 1; i >= 0; i-- {
		stmts := splitStatements(executed[i].Text)
		var kept []bool
		for j := len(stmts) - 1; j >= 0; j-- {
			cn := stmts[j].names
			best := -1
			for n, d := range need {
				if cn.binds[n] || cn.mutates[n] || cn.star {
					if best < 0 || d < best {
						best = d
					}
				}
			}
			if best < 0 && alwaysKept(executed[i].Text) {
				lines := analysis.SplitLines(executed[i].Text)
				if alwaysKept(strings.Join(lines[stmts[j].start:stmts[j].end+1], "\n")) {
					best = len(executed)
				}
			}
			if best < 0 {
				continue
			}
			if kept == nil {
				kept = make([]bool, len(stmts))
			}
			kept[j] = true
			d := best + 1
			if old, ok := sl.depth[i]; !ok || d < old {
				sl.depth[i] = d
			}
			summarised := onlyKnown(cn, need, known)
			for n := range cn.killed {
				if _, ok := need[n]; ok && !cn.used[n] {
					delete(need, n)
				}
			}
			if !summarised {
				for _, n := range cn.uses {
					if old, ok := need[n]; !ok || d < old {
						need[n] = d
					}
				}
			}
			for n := range cn.mutates {
				if old, ok := need[n]; !ok || d < old {
					need[n] = d
				}
			}
		}
		if kept != nil {
			sl.cells = append(sl.cells, i)
			sl.kept[i] = kept
			sl.stmts[i] = stmts
		}
	}
	sort.Ints(sl.cells)
	return sl
}

// onlyKnown reports whether every needed name the statement binds or changes has runtime
// facts.
func onlyKnown(cn *cellNames, need map[string]int, known map[string]bool) bool {
	if len(known) == 0 {
		return false
	}
	hit := false
	for n := range need {
		if cn.binds[n] || cn.mutates[n] {
			if !known[n] {
				return false
			}
			hit = true
		}
	}
	return hit && !cn.star
}

// excerpt returns the text of cell i restricted to its kept statements, and whether
// anything was left out. Cells the slice did not keep are returned whole.
func (sl slice) excerpt(i int, text string) (string, bool) {
	kept, ok := sl.kept[i]
	if !ok {
		return text, false
	}
	lines := analysis.SplitLines(text)
	var b strings.Builder
	partial := false
	for j, st := range sl.stmts[i] {
		if !kept[j] {
			partial = true
			continue
		}
		for _, l := range lines[st.start : st.end+1] {
			if strings.TrimSpace(l) == "" {
				continue
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if !partial {
		return text, false
	}
	return strings.TrimRight(b.String(), "\n"), true
}

// importCellsFor returns the indexes of executed cells whose imports bind one of names.
func importCellsFor(executed []CellText, names map[string]bool) []int {
	var out []int
	for i, c := range executed {
		cn := analyzeCell(c.Text)
		for n := range cn.ports {
			if names[n] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}
