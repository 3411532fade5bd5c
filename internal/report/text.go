package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
)

// Text prints what a person at a terminal wants: each target cell's verdict, and for
// each finding the line with the expression marked, the evidence and the fix. Cells are
// named as the findings' messages name them, from 1 in page order; the 0-based index that
// --cell and the JSON take is beside it.
func Text(w io.Writer, rep *judge.Report) error {
	src := cellSources(rep)
	crashes := 0
	for _, c := range rep.Cells {
		if c.Verdict == judge.VerdictCrash {
			crashes++
		}
	}
	unknown := 0
	for _, c := range rep.Cells {
		if c.Verdict == judge.VerdictUnknown {
			unknown++
		}
	}
	if unknown > 0 {
		fmt.Fprintf(w, "%s: %s judged, %d will crash, %d unknown\n", rep.Notebook, Count(len(rep.Cells), "cell"), crashes, unknown)
	} else {
		fmt.Fprintf(w, "%s: %s judged, %d will crash\n", rep.Notebook, Count(len(rep.Cells), "cell"), crashes)
	}
	if rep.ReplayError != nil {
		fmt.Fprintf(w, "  note: %s\n", rep.ReplayError)
	}
	for _, c := range rep.Cells {
		if c.Verdict == judge.VerdictUnknown {
			// An unknown verdict has no confidence worth printing: what matters is why.
			fmt.Fprintf(w, "\ncell %d (index %d): unknown — %s\n", c.Index+1, c.Index, firstNonEmpty(c.Reason, "no layer could tell"))
		} else {
			fmt.Fprintf(w, "\ncell %d (index %d): %s (confidence %.2f)\n", c.Index+1, c.Index, verdictWord(c.Verdict), c.Confidence)
		}
		lines := analysis.SplitLines(src[c.Index])
		for _, f := range c.Findings {
			exc := ""
			if f.Exception != "" {
				exc = " " + f.Exception
			}
			fmt.Fprintf(w, "  %d:%d %s%s [%s/%s] %s\n", f.Range.Start.Line+1, f.Range.Start.Character+1, f.Severity, exc, f.Source, f.Code, f.Message)
			if l := f.Range.Start.Line; l >= 0 && l < len(lines) {
				fmt.Fprintf(w, "    %4d | %s\n", l+1, lines[l])
				fmt.Fprintf(w, "         | %s\n", caret(lines[l], f.Range))
			}
			for _, e := range f.Evidence {
				fmt.Fprintf(w, "      evidence: %s\n", e)
			}
			if fix := preferredFix(f); fix != nil {
				fmt.Fprintf(w, "      fix: %s\n", fix.Title)
				fixLines := lines
				if len(fix.Edits) > 0 {
					if i := EditCell(rep, c.Index, fix.Edits[0]); i != c.Index {
						fmt.Fprintf(w, "         (in cell %d, index %d)\n", i+1, i)
						fixLines = analysis.SplitLines(src[i])
					}
				}
				for _, l := range fixPreview(fixLines, fix) {
					fmt.Fprintf(w, "         %s\n", l)
				}
			}
			if f.Explanation != "" {
				fmt.Fprintf(w, "      why: %s\n", strings.ReplaceAll(strings.TrimSpace(f.Explanation), "\n", "\n           "))
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}

// fixPreview shows the lines a fix changes as they would read after it, "-"/"+" style; nil
// when the edits do not apply cleanly to the cell (they always should).
func fixPreview(lines []string, fix *finding.Fix) []string {
	if len(fix.Edits) == 0 {
		return nil
	}
	first, last := fix.Edits[0].Range.Start.Line, fix.Edits[0].Range.End.Line
	for _, e := range fix.Edits {
		first = min(first, e.Range.Start.Line)
		last = max(last, e.Range.End.Line)
	}
	if first < 0 || last >= len(lines) || last-first > 5 {
		return nil
	}
	before := strings.Join(lines[first:last+1], "\n")
	// Apply from the end so earlier offsets stay valid.
	edits := append([]finding.Edit(nil), fix.Edits...)
	sort.Slice(edits, func(i, j int) bool { return edits[j].Range.Start.Before(edits[i].Range.Start) })
	after := before
	for _, e := range edits {
		s, ok1 := offsetIn(after, e.Range.Start.Line-first, e.Range.Start.Character)
		t, ok2 := offsetIn(after, e.Range.End.Line-first, e.Range.End.Character)
		if !ok1 || !ok2 || t < s {
			return nil
		}
		after = after[:s] + e.NewText + after[t:]
	}
	var out []string
	for _, l := range strings.Split(before, "\n") {
		out = append(out, "- "+l)
	}
	for _, l := range strings.Split(after, "\n") {
		out = append(out, "+ "+l)
	}
	return out
}

func verdictWord(v string) string {
	switch v {
	case judge.VerdictCrash:
		return "will crash"
	case judge.VerdictOK:
		return "no crash predicted"
	}
	return "unknown"
}

// caret marks the range under the line; columns are UTF-16 units, so count runes with
// surrogate pairs as two.
func caret(line string, r finding.Range) string {
	start, end := r.Start.Character, r.End.Character
	if r.End.Line != r.Start.Line {
		end = analysis.UTF16Len(line)
	}
	if end <= start {
		end = start + 1
	}
	var b strings.Builder
	col := 0
	for _, ch := range line {
		if col >= start {
			break
		}
		if ch == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		if ch >= 0x10000 {
			col += 2
		} else {
			col++
		}
	}
	b.WriteString(strings.Repeat("^", end-start))
	return b.String()
}

// cellSources maps cell indexes to their text; the report carries findings only, so the
// text is read again from the notebook (already parsed once; cheap).
func cellSources(rep *judge.Report) map[int]string {
	out := map[int]string{}
	if rep.Source == nil {
		return out
	}
	for i, c := range rep.Source.Cells {
		out[i] = c.Text
	}
	return out
}
