package repair

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// maxDiffCells bounds the line-by-line comparison Diff makes (old lines × new lines); past
// it the changed middle between the common first and last lines is one edit.
const maxDiffCells = 1 << 20

// Diff returns the edits that turn old into new, line by line: each run of changed lines is
// one edit (a pure insertion has an empty range), so a fix composed of several steps (an
// import at the top, a definition before line 5) is offered as the few edits a user would
// have made, not as one rewrite of the cell. Applying them to old with ApplyEdits gives new.
func Diff(old, new string) []finding.Edit {
	if old == new {
		return nil
	}
	a, b := splitKeep(old), splitKeep(new)
	// Common first and last lines never change.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	type hunk struct{ a0, a1, b0, b1 int } // lines [a0,a1) of old become [b0,b1) of new
	var hunks []hunk
	if len(ma)*len(mb) > maxDiffCells || len(ma) == 0 || len(mb) == 0 {
		hunks = append(hunks, hunk{p, p + len(ma), p, p + len(mb)})
	} else {
		// Longest common subsequence of the middle lines; the gaps between matches are hunks.
		n, m := len(ma), len(mb)
		l := make([][]int32, n+1)
		for i := range l {
			l[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					l[i][j] = l[i+1][j+1] + 1
				} else {
					l[i][j] = max(l[i+1][j], l[i][j+1])
				}
			}
		}
		i, j := 0, 0
		start := hunk{a0: 0, b0: 0}
		flush := func() {
			if start.a0 != i || start.b0 != j {
				hunks = append(hunks, hunk{p + start.a0, p + i, p + start.b0, p + j})
			}
		}
		for i < n && j < m {
			switch {
			case ma[i] == mb[j]:
				flush()
				i++
				j++
				start = hunk{a0: i, b0: j}
			case l[i+1][j] >= l[i][j+1]:
				i++
			default:
				j++
			}
		}
		i, j = n, m
		flush()
	}
	x := analysis.NewLineIndex(old)
	offs := make([]int, len(a)+1)
	for i, ln := range a {
		offs[i+1] = offs[i] + len(ln)
	}
	var out []finding.Edit
	for _, h := range hunks {
		out = append(out, finding.Edit{
			Range:   finding.Range{Start: x.Position(offs[h.a0]), End: x.Position(offs[h.a1])},
			NewText: strings.Join(b[h.b0:h.b1], ""),
		})
	}
	return out
}

// splitKeep splits text into lines that keep their terminator ("\n", "\r\n" or a lone
// "\r", as Python and LSP number lines; the last may have none).
func splitKeep(text string) []string { return analysis.SplitLinesKeep(text) }
