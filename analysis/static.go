package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// cellFindings computes the static findings of one cell against the flow.
func (fl *Flow) cellFindings(c *notebook.Cell, f *CellFacts, opts Options) []finding.Finding {
	for _, m := range f.Magics {
		if m.Kind == MagicCell && !m.PythonBody {
			return nil // %%bash, %%html...: not Python
		}
	}
	limits := limitFindings(c.ID, f)
	if len(f.Limits) > 0 && (f.Limits[0].Kind == LimitTooLarge || f.Limits[0].Kind == LimitNotebook || f.Limits[0].Kind == LimitBrackets) {
		return limits // not parsed: nothing else is known
	}
	if len(f.SyntaxErrors) > 0 {
		r := f.SyntaxErrors[0]
		if r.End.Line > r.Start.Line {
			// Mark the first line only: the error node often swallows the rest of the cell.
			r.End = finding.Position{Line: r.Start.Line, Character: 1 << 20}
			if line, ok := lineText(c.Text, r.Start.Line); ok {
				r.End.Character = UTF16Len(line)
			}
		}
		return append([]finding.Finding{{
			Cell: c.ID, Source: finding.SourceStatic, Severity: finding.SeverityError, Code: finding.SyntaxError,
			Exception: "SyntaxError", Message: "invalid syntax: the cell will not run at all",
			Range: r, Confidence: 0.9,
			Evidence: []string{fmt.Sprintf("tree-sitter could not parse line %d", f.SyntaxErrors[0].Start.Line+1)},
		}}, limits...)
	}
	fc := fl.cells[c.ID]
	var out []finding.Finding
	reported := map[string]bool{}
	for _, u := range f.Uses {
		// Each read is judged (a del in the cell changes the answer), but a name is
		// reported once: the first failing read is where the cell stops.
		if reported[u.Name] || u.Guarded || IsBuiltin(u.Name) {
			continue
		}
		if fd, ok := fl.judgeUse(fc, f, u, opts); ok {
			reported[u.Name] = true
			fd.Cell = c.ID
			fd.Source = finding.SourceStatic
			out = append(out, fd)
		}
	}
	out = append(out, fl.callFindings(fc, f, opts, reported)...)
	out = append(out, limits...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Range.Start.Before(out[j].Range.Start) })
	return out
}

// callFindings checks the cell's calls of functions that executed cells defined: the
// globals their bodies read must exist when this cell calls them.
func (fl *Flow) callFindings(fc *flowCell, f *CellFacts, opts Options, reported map[string]bool) []finding.Finding {
	var out []finding.Finding
	for _, call := range f.Calls {
		if strings.Contains(call.Callee, ".") {
			continue
		}
		if d, ok := lastDefBefore(f, call.Callee, call.Range.Start); ok && d.Kind != DefDelete {
			continue // the cell's own function: ParseCell resolved it
		}
		fn, def, ok := fl.executedFunction(call.Callee)
		if !ok {
			continue
		}
		at := call.Range
		if call.Expr != nil && call.Expr.Value != nil {
			at = call.Expr.Value.Range
		}
		fl.checkFunction(fc, f, fn, def, call.Range.Start, at, opts, reported, map[*Function]bool{}, &out)
	}
	return out
}

// executedFunction returns the function the kernel holds under name, when an executed
// cell's def bound it last.
func (fl *Flow) executedFunction(name string) (*Function, DefSite, bool) {
	site, ok := fl.LastDefinition(name)
	if !ok || site.Kind != DefFunction {
		return nil, DefSite{}, false
	}
	d := fl.facts[site.CellID]
	for i := range d.Functions {
		if fn := &d.Functions[i]; fn.Name == name && fn.Range == site.Range {
			return fn, site, true
		}
	}
	return nil, DefSite{}, false
}

// checkFunction reports the globals fn reads that will not exist when cell fc calls it at
// pos (marking the call at at), following the functions fn calls.
func (fl *Flow) checkFunction(fc *flowCell, f *CellFacts, fn *Function, def DefSite, pos finding.Position, at finding.Range,
	opts Options, reported map[string]bool, visited map[*Function]bool, out *[]finding.Finding) {
	if visited[fn] {
		return
	}
	visited[fn] = true
	read := map[string]bool{}
	for _, r := range fn.Reads {
		read[r.Name] = true
		if r.Guarded || reported[r.Name] || IsBuiltin(r.Name) || opts.Namespace[r.Name] {
			continue
		}
		if d, ok := lastDefBefore(f, r.Name, pos); ok && d.Kind != DefDelete {
			continue
		}
		if _, ok := fl.LastDefinition(r.Name); ok {
			continue
		}
		if fl.star || starBefore(f, pos) || fl.notRunStar >= 0 && fl.notRunStar < fc.index {
			return
		}
		reported[r.Name] = true
		evidence := []string{fmt.Sprintf("%s() (cell %d, run %d) reads '%s' on line %d",
			fn.Name, def.Index+1, def.ExecutionOrder, r.Name, r.Range.Start.Line+1)}
		fd := finding.Finding{
			Cell: fc.id, Source: finding.SourceStatic, Code: finding.UndefinedName, Exception: "NameError", Range: at,
			Severity: finding.SeverityError, Confidence: 0.8,
			Message: fmt.Sprintf("name '%s' is not defined: %s() from cell %d reads it", r.Name, fn.Name, def.Index+1),
		}
		var above, below *DefSite
		pending := fl.pending(r.Name)
		for i, s := range pending {
			if s.Index < fc.index {
				above = &pending[i]
			} else if below == nil {
				below = &pending[i]
			}
		}
		switch {
		case above != nil:
			fd.Severity, fd.Code, fd.Confidence = finding.SeverityWarning, finding.NotRunDefinition, 0.5
			fd.Message = fmt.Sprintf("'%s', which %s() from cell %d reads, is defined in cell %d, which has not run yet",
				r.Name, fn.Name, def.Index+1, above.Index+1)
			evidence = append(evidence, fmt.Sprintf("'%s' is defined in cell %d, which has not run", r.Name, above.Index+1))
		case below != nil:
			fd.Message += fmt.Sprintf("; it is defined in cell %d, which has not run", below.Index+1)
			evidence = append(evidence, fmt.Sprintf("'%s' is defined in cell %d, below this one, which has not run", r.Name, below.Index+1))
		default:
			evidence = append(evidence, fmt.Sprintf("no cell defines '%s'", r.Name))
		}
		fd.Evidence = evidence
		*out = append(*out, fd)
	}
	for _, c := range fn.Calls {
		if !read[c] {
			continue // a parameter or local, not a global function
		}
		if d, ok := lastDefBefore(f, c, pos); ok && d.Kind != DefDelete {
			continue
		}
		if g, gdef, ok := fl.executedFunction(c); ok {
			fl.checkFunction(fc, f, g, gdef, pos, at, opts, reported, visited, out)
		}
	}
}

// judgeUse decides whether reading u.Name in cell fc is a problem.
func (fl *Flow) judgeUse(fc *flowCell, f *CellFacts, u Use, opts Options) (finding.Finding, bool) {
	name := u.Name
	where := ""
	if u.InFunction != "" {
		where = fmt.Sprintf(" (read in %s(), which this cell calls)", u.InFunction)
	}
	// Deleted earlier in this very cell.
	if d, ok := lastDefBefore(f, name, u.Range.Start); ok && d.Kind == DefDelete && !d.Conditional {
		return finding.Finding{
			Severity: finding.SeverityError, Code: finding.UndefinedName, Exception: "NameError", Range: u.Range,
			Message:    fmt.Sprintf("name '%s' is not defined: it is deleted on line %d of this cell", name, d.Range.Start.Line+1),
			Evidence:   []string{fmt.Sprintf("del %s on line %d", name, d.Range.Start.Line+1)},
			Confidence: 0.95,
		}, true
	}
	if opts.Namespace[name] {
		return fl.staleness(fc, name, u)
	}
	if _, ok := fl.LastDefinition(name); ok {
		return fl.staleness(fc, name, u)
	}
	if fl.star || starBefore(f, u.Range.Start) || fl.notRunStar >= 0 && fl.notRunStar < fc.index {
		return finding.Finding{}, false // a star import may define anything
	}
	// Bound only by cells that have not run.
	var above, below *DefSite
	pending := fl.pending(name)
	for i, s := range pending {
		if s.CellID == fc.id {
			continue
		}
		if s.Index < fc.index {
			above = &pending[i]
		} else if below == nil {
			below = &pending[i]
		}
	}
	var evidence []string
	if opts.Namespace != nil {
		evidence = append(evidence, fmt.Sprintf("the kernel namespace has no '%s'", name))
	}
	if above != nil {
		evidence = append(evidence, fmt.Sprintf("'%s' is defined in cell %d, which has not run", name, above.Index+1))
		return finding.Finding{
			Severity: finding.SeverityWarning, Code: finding.NotRunDefinition, Exception: "NameError", Range: u.Range,
			Message:    fmt.Sprintf("'%s' is defined in cell %d, which has not run yet%s", name, above.Index+1, where),
			Evidence:   evidence,
			Confidence: 0.5,
		}, true
	}
	msg := fmt.Sprintf("name '%s' is not defined%s", name, where)
	if deleted, ok := fl.deletedBy(name); ok && deleted.CellID == fc.id {
		msg += fmt.Sprintf(": this cell already deleted it (run %d)", deleted.ExecutionOrder)
		evidence = append(evidence, fmt.Sprintf("del %s in this cell's last run (run %d)", name, deleted.ExecutionOrder))
	} else if ok {
		msg += fmt.Sprintf(": cell %d (run %d) deleted it", deleted.Index+1, deleted.ExecutionOrder)
		evidence = append(evidence, fmt.Sprintf("del %s in cell %d, run %d", name, deleted.Index+1, deleted.ExecutionOrder))
	} else if below != nil {
		msg += fmt.Sprintf(": it is defined in cell %d, which has not run", below.Index+1)
		evidence = append(evidence, fmt.Sprintf("'%s' is defined in cell %d, below this one, which has not run", name, below.Index+1))
	} else {
		evidence = append(evidence, fmt.Sprintf("no cell defines '%s'", name))
	}
	fd := finding.Finding{
		Severity: finding.SeverityError, Code: finding.UndefinedName, Exception: "NameError", Range: u.Range,
		Message: msg, Evidence: evidence, Confidence: 0.9,
	}
	if opts.Namespace != nil {
		fd.Confidence = 0.99 // the kernel itself says the name is missing
	}
	if below == nil {
		if alt := fl.closestName(name, opts); alt != "" {
			fd.Fixes = []finding.Fix{{Title: fmt.Sprintf("Change '%s' to '%s'", name, alt), Preferred: true,
				Edits: []finding.Edit{{Range: u.Range, NewText: alt}}}}
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("'%s' is defined and differs by a letter or two", alt))
		}
	}
	return fd, true
}

// staleness reports out-of-order hazards for a name that is defined. Both checks are
// about page order disagreeing with execution order; a notebook run top to bottom never
// triggers them.
func (fl *Flow) staleness(fc *flowCell, name string, u Use) (finding.Finding, bool) {
	last, ok := fl.LastDefinition(name)
	if !ok || last.CellID == fc.id {
		return finding.Finding{}, false
	}
	if fc.order == 0 {
		// About to run: the definition nearest above this cell is the one the user reads
		// as "the" x; the kernel may hold another.
		var near *DefSite
		for _, s := range fl.Definitions(name) {
			if s.Index < fc.index && (near == nil || s.Index > near.Index) {
				near = &s
			}
		}
		if near == nil || near.CellID == last.CellID {
			return finding.Finding{}, false
		}
		pos := "below"
		if last.Index < fc.index {
			pos = "above"
		}
		return finding.Finding{
			Severity: finding.SeverityWarning, Code: finding.StaleDefinition, Range: u.Range,
			Message: fmt.Sprintf("'%s' comes from cell %d (run %d), %s this cell, not from cell %d just above it",
				name, last.Index+1, last.ExecutionOrder, pos, near.Index+1),
			Evidence: []string{
				fmt.Sprintf("%s was last set by cell %d (run %d)", name, last.Index+1, last.ExecutionOrder),
				fmt.Sprintf("cell %d%s defines %s, nearer above this cell", near.Index+1, runText(near.ExecutionOrder), name),
			},
			Confidence: 0.3,
		}, true
	}
	// This cell ran, then a cell above it re-bound the name: what it showed is stale.
	if last.ExecutionOrder > fc.order && last.Index < fc.index {
		seen, ok := fl.lastBefore(name, fc.order, fc.id)
		if ok && (seen.CellID != last.CellID || last.Kind == DefAugAssign) {
			return finding.Finding{
				Severity: finding.SeverityWarning, Code: finding.StaleDefinition, Range: u.Range,
				Message: fmt.Sprintf("%s was last set by cell %d (run %d), after this cell (run %d) read it",
					name, last.Index+1, last.ExecutionOrder, fc.order),
				Evidence: []string{
					fmt.Sprintf("%s was last set by cell %d (run %d), after cell %d (run %d) read it",
						name, last.Index+1, last.ExecutionOrder, fc.index+1, fc.order),
					fmt.Sprintf("when cell %d ran, %s came from cell %d (run %d)", fc.index+1, name, seen.Index+1, seen.ExecutionOrder),
				},
				Confidence: 0.3,
			}, true
		}
	}
	return finding.Finding{}, false
}

func runText(order int) string {
	if order == 0 {
		return ", which has not run,"
	}
	return fmt.Sprintf(" (run %d)", order)
}

// deletedBy returns the executed deletion of name that left it undefined, if any.
func (fl *Flow) deletedBy(name string) (DefSite, bool) {
	sites := fl.exec(name)
	for i := len(sites) - 1; i >= 0; i-- {
		if sites[i].Kind == DefDelete && !sites[i].Conditional {
			return sites[i], true
		}
		if sites[i].Kind != DefDelete {
			break
		}
	}
	return DefSite{}, false
}

// lastDefBefore returns the cell's last binding of name before p.
func lastDefBefore(f *CellFacts, name string, p finding.Position) (Def, bool) {
	var last Def
	found := false
	for _, d := range f.Defs {
		if d.Name == name && d.Range.Start.Before(p) {
			last, found = d, true
		}
	}
	return last, found
}

// starBefore reports whether the cell star-imports before p (%run counts; exec() and
// globals() writes count anywhere in the cell).
func starBefore(f *CellFacts, p finding.Position) bool {
	for _, s := range f.StarImports {
		if s == "globals()" || s == "vars()" || strings.HasSuffix(s, ")") {
			return true
		}
	}
	for _, imp := range f.Imports {
		if imp.Star && imp.Range.Start.Before(p) {
			return true
		}
	}
	for _, m := range f.Magics {
		if m.Kind == MagicLine && (m.Name == "run" || m.Name == "store") && m.Range.Start.Before(p) {
			return true
		}
	}
	return false
}

// closestName returns a defined name one or two edits away from name (a likely typo), or
// "" when there is none or several tie. Answers are memoised until the defined names
// change.
func (fl *Flow) closestName(name string, opts Options) string {
	if len(name) < 4 {
		return "" // short names are too close to too many others
	}
	fl.usedTypo = true
	return fl.typo.closest(name)
}

// editDistance is the Levenshtein distance of a and b, or limit+1 when it exceeds limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	var buf [2 * 64]int
	var prev, cur []int
	if len(b) < 64 {
		prev, cur = buf[:len(b)+1], buf[64:64+len(b)+1]
	} else {
		prev, cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineText returns line i of text, without its terminator.
func lineText(text string, i int) (string, bool) {
	x := NewLineIndex(text)
	if i >= x.Lines() {
		return "", false
	}
	return text[x.x.LineStart(i):x.x.LineEnd(i)], true
}
