package repair

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Localisation. A crash often surfaces in the target cell but is caused where the code that
// raised was written: a forward or a helper defined in an earlier cell. The traceback of
// the failing run names that code only by IPython's file for the cell
// (/tmp/ipykernel_30210/820242742.py) and the line's text; the executed cell holding that
// text at that line is the site. Every family that repairs "the crash line" then runs
// again at that site, with the site's cell as the cell it edits, so the .view that must be
// .reshape, or the in_features that must be 800, is repaired where it was written.

// Site is an executed cell of the history where code on the crash's path was written,
// with the 0-based line the innermost notebook frame there raised at.
type Site struct {
	Cell Cell
	Line int
	// Func is the function the frame ran ("forward").
	Func string
}

// FrameSite returns the innermost traceback frame below the crashing cell's own frames
// that lies in an executed cell of the history: frames are outermost first, as
// facts.ShadowResult has them. ok is false when every frame below the cell is library code.
func FrameSite(frames []facts.Frame, history []Cell) (Site, bool) {
	for i := len(frames) - 1; i >= 0; i-- {
		fr := frames[i]
		if fr.InCell {
			return Site{}, false // the cell's own code raised: it is the site
		}
		if libraryFile(fr.File) || fr.Line < 1 {
			continue
		}
		want := strings.TrimSpace(fr.Text)
		if want == "" {
			continue
		}
		// Newest first: a cell run again after an edit holds the code the kernel has.
		for h := len(history) - 1; h >= 0; h-- {
			lines := analysis.SplitLines(history[h].Text)
			if fr.Line <= len(lines) && sameLine(lines[fr.Line-1], want) {
				return Site{Cell: history[h], Line: fr.Line - 1, Func: fr.Func}, true
			}
		}
	}
	return Site{}, false
}

// sameLine compares a cell's line with a traceback's text of it, which the inspector cuts
// at 300 characters.
func sameLine(line, text string) bool {
	line = strings.TrimSpace(strings.TrimRight(line, "\r"))
	if len(text) >= 300 {
		return strings.HasPrefix(line, text)
	}
	return line == text
}

// libraryFile reports whether a traceback file is installed code rather than a cell.
func libraryFile(f string) bool {
	return strings.Contains(f, "-packages/") || strings.Contains(f, "/lib/python3") || strings.HasPrefix(f, "<frozen")
}

// Where says where a site is for a finding's message: "cell 3, line 14 (forward)", with
// the cell numbered from 1 in page order, as messages number cells.
func (s Site) Where() string {
	w := fmt.Sprintf("cell %d, line %d", s.Cell.Index+1, s.Line+1)
	if s.Func != "" && s.Func != "<module>" {
		w += " (" + s.Func + ")"
	}
	return w
}

// at returns the input seen from site: the site's cell is the one edited, its line the
// crash line. The history is what ran before the site's cell; the crash facts there are
// the site frame's (SiteFacts), the crashing cell's frame's do not apply.
func (in *Input) at(s Site) *Input {
	sub := *in
	sub.Text = s.Cell.Text
	sub.Facts = s.Cell.Facts
	if sub.Facts == nil {
		sub.Facts = analysis.ParseCell(s.Cell.Text)
	}
	lines := analysis.SplitLines(s.Cell.Text)
	sub.Finding.Range = siteLineRange(lines, s.Line)
	sub.CrashFacts, sub.CrashKeys, sub.SiteFacts = in.SiteFacts, nil, nil
	var hist []Cell
	for _, h := range in.History {
		if h.ID == s.Cell.ID {
			break
		}
		hist = append(hist, h)
	}
	sub.History = hist
	sub.Site = nil
	sub.atSite = true
	return &sub
}

// moveTo re-targets candidates made for a site's cell: their edits of "the cell" edit the
// site's cell, and the title says which cell to run again.
func moveTo(cs []Candidate, s Site) []Candidate {
	out := make([]Candidate, 0, len(cs))
	for _, c := range cs {
		edits := make([]finding.Edit, len(c.Fix.Edits))
		for i, e := range c.Fix.Edits {
			if e.Cell == "" {
				e.Cell = s.Cell.ID
			}
			edits[i] = e
		}
		c.Fix.Edits = edits
		if !strings.Contains(c.Fix.Title, "cell ") {
			c.Fix.Title += fmt.Sprintf(" in cell %d (then run it again)", s.Cell.Index+1)
		}
		out = append(out, c)
	}
	return out
}

// siteLineRange is the whole of line l (0-based) of lines, its indentation left out.
func siteLineRange(lines []string, l int) finding.Range {
	if l < 0 || l >= len(lines) {
		return finding.Range{}
	}
	s := lines[l]
	start := len(s) - len(strings.TrimLeft(s, " \t"))
	return finding.Range{Start: finding.Position{Line: l, Character: analysis.UTF16Len(s[:start])}, End: finding.Position{Line: l, Character: analysis.UTF16Len(s)}}
}

// editSite is a cell a repair may edit: the crashing cell itself (ID "" and Index -1, read
// up to its crash line, upto) or an executed cell (upto -1: all of it).
type editSite struct {
	Cell
	upto int
}

// editSites are the places a repair that edits where something was built looks, in the
// order it prefers them: the crashing cell, then the executed history newest first, so the
// nearest definition wins. Every site has its facts.
func (in *Input) editSites() []editSite {
	sites := []editSite{{Cell{ID: "", Index: -1, Text: in.Text, Facts: in.Facts}, in.crashLine()}}
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		if h.Facts == nil {
			h.Facts = analysis.ParseCell(h.Text)
		}
		sites = append(sites, editSite{h, -1})
	}
	return sites
}

// Binding sites. A crash line often reads a value that was built wrong a few lines or
// cells above it: X still holds the text column, the frame was filtered to nothing, the
// tensor was flattened to the wrong size. The place to repair is where that value was
// bound, so every family also runs there, with the binding line as its crash line. The
// dataflow gives those places: the statement's reads, and for each the last binding above
// it, in the crashing cell or else in the newest executed cell that binds it. One step
// further back (what those binding lines read, bound above them) is where the value's own
// ingredients were made: X_train is split from X, and X is where the text column was kept.

// maxBindingSites bounds the binding sites of one crash: each multiplies the families'
// candidates, and each candidate costs a shadow run (the search's budget runs the nearest
// sites' candidates first).
const maxBindingSites = 6

// bindingDepth is how many steps back the slice goes: the crash line's reads, then theirs.
const bindingDepth = 2

// bindingSite is a place that bound a name the crash line reads: a line of the crashing
// cell above the crash (inCell) or a line of an executed cell of the history. depth is 1
// for the crash line's own reads, 2 for what their binding lines read.
type bindingSite struct {
	Site
	name   string
	inCell bool
	depth  int
	hist   int // the History index of Cell; -1 in the crashing cell
}

// bindingSites returns the binding sites of the names the crash statement reads, then of
// the names those binding lines read, nearest first within each step: the crashing cell's
// own lines above the crash, then the history newest first. Imports, defs and classes are
// left out: an import has nothing to repair, and the code of a def that raised is the
// frame site.
func (in *Input) bindingSites() []bindingSite {
	if in.Facts == nil {
		return nil
	}
	hf := make([]*analysis.CellFacts, len(in.History)) // the history's facts, parsed once
	for i, h := range in.History {
		if hf[i] = h.Facts; hf[i] == nil {
			hf[i] = analysis.ParseCell(h.Text)
		}
	}
	reads, start := statementReads(in.Text, in.crashLine())
	level := in.bindersOf(hf, reads, -1, start, 1)
	out := dedupeSites(level)
	for d := 2; d <= bindingDepth && len(out) < maxBindingSites; d++ {
		var next []bindingSite
		for _, b := range level {
			r, st := statementReads(b.Cell.Text, b.Line)
			next = append(next, in.bindersOf(hf, r, b.hist, st, d)...)
		}
		out = dedupeSites(append(out, next...))
		level = next
	}
	if len(out) > maxBindingSites {
		out = out[:maxBindingSites]
	}
	return out
}

// statementReads returns the free names (outside functions it defines) of the top-level
// statement of text holding line, in order, and the statement's first line.
func statementReads(text string, line int) ([]string, int) {
	var reads []string
	seen := map[string]bool{}
	start := line
	for _, st := range analysis.CellStatements(text) {
		if line < st.StartLine || line > st.EndLine {
			continue
		}
		start = st.StartLine
		for _, u := range st.Facts.Uses {
			if !seen[u.Name] && u.InFunction == "" {
				seen[u.Name] = true
				reads = append(reads, u.Name)
			}
		}
	}
	return reads, start
}

// bindersOf returns, for each name, its last binding above line before in the cell at
// History index h (-1: the crashing cell), else in the newest history cell older than it
// that binds it; the cell's own lines bottom up first, then the history newest first. hf
// are the history's facts.
func (in *Input) bindersOf(hf []*analysis.CellFacts, names []string, h, before, depth int) []bindingSite {
	var own, older []bindingSite
	for _, name := range names {
		if h < 0 {
			if s, ok := lastBinding(in.Facts.Defs, name, before); ok {
				own = append(own, bindingSite{Site: Site{Cell: Cell{ID: "", Index: -1, Text: in.Text, Facts: in.Facts}, Line: s}, name: name, inCell: true, depth: depth, hist: -1})
				continue
			}
		} else if s, ok := lastBinding(hf[h].Defs, name, before); ok {
			c := in.History[h]
			c.Facts = hf[h]
			own = append(own, bindingSite{Site: Site{Cell: c, Line: s}, name: name, depth: depth, hist: h})
			continue
		}
		from := len(in.History) - 1
		if h >= 0 {
			from = h - 1
		}
		for i := from; i >= 0; i-- {
			c := in.History[i]
			c.Facts = hf[i]
			if s, ok := lastBinding(c.Facts.Defs, name, -1); ok {
				if in.Site == nil || in.Site.Cell.ID != c.ID || in.Site.Line != s {
					older = append(older, bindingSite{Site: Site{Cell: c, Line: s}, name: name, depth: depth, hist: i})
				}
				break
			}
		}
	}
	sort.SliceStable(own, func(a, b int) bool { return own[a].Line > own[b].Line })
	sort.SliceStable(older, func(a, b int) bool { return older[a].hist > older[b].hist })
	return append(own, older...)
}

// lastBinding returns the line of the last unconditional binding of name in defs above
// line before (-1: anywhere), skipping imports, defs and classes.
func lastBinding(defs []analysis.Def, name string, before int) (int, bool) {
	found, at := false, 0
	for _, d := range defs {
		if d.Name != name || (before >= 0 && d.Range.Start.Line >= before) {
			continue
		}
		switch d.Kind {
		case analysis.DefAssign, analysis.DefAugAssign, analysis.DefWalrus, analysis.DefWith, analysis.DefFor:
			found, at = true, d.Range.Start.Line
		case analysis.DefImport, analysis.DefFunction, analysis.DefClass, analysis.DefDelete:
			found = false // a later import or def shadows an earlier assignment
		}
	}
	return at, found
}

// dedupeSites drops a site whose cell and line an earlier one has (a, b = f(x) binds two).
func dedupeSites(ss []bindingSite) []bindingSite {
	seen := map[string]bool{}
	var out []bindingSite
	for _, s := range ss {
		k := fmt.Sprintf("%s:%d:%v", s.Cell.ID, s.Line, s.inCell)
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// atBinding returns the input seen from a binding site: its line is the crash line. In the
// crashing cell, the crash frame's facts still hold; in a history cell they do not, and
// the kernel's inspection speaks for the names (their values now, which that line built).
func (in *Input) atBinding(s bindingSite) *Input {
	if s.inCell {
		sub := *in
		sub.Finding.Range = siteLineRange(analysis.SplitLines(in.Text), s.Line)
		sub.Site = nil
		return &sub
	}
	sub := in.at(s.Site)
	sub.CrashFacts = nil
	sub.atSite = false
	return sub
}
