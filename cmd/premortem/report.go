package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/judge"
)

// The `premortem check --format json` contract, documented field by field in
// docs/check-json.md (keep the two in step): lines and columns are 1-based within the cell;
// columns count UTF-16 code units, as LSP does; a fix says whether it was verified and each
// edit names the 0-based index of the cell it edits.
type jsonReport struct {
	Notebook string      `json:"notebook"`
	Kernel   jsonKernel  `json:"kernel"`
	Replay   *jsonReplay `json:"replay,omitempty"`
	Cells    []jsonCell  `json:"cells"`
}

type jsonKernel struct {
	Name            string `json:"name"`
	LanguageVersion string `json:"language_version,omitempty"`
}

type jsonReplay struct {
	Replayed int    `json:"replayed"`
	Error    string `json:"error,omitempty"`
}

type jsonCell struct {
	Index      int     `json:"index"`
	Verdict    string  `json:"verdict"`
	Confidence float64 `json:"confidence"`
	// Reason says why the verdict is unknown (which layer could not tell, and why).
	Reason   string        `json:"reason,omitempty"`
	Findings []jsonFinding `json:"findings"`
	Notes    []string      `json:"notes,omitempty"`
}

type jsonFinding struct {
	Source      string   `json:"source"`
	Severity    string   `json:"severity"`
	Code        string   `json:"code"`
	Exception   string   `json:"exception,omitempty"`
	Message     string   `json:"message"`
	Line        int      `json:"line"`
	Column      int      `json:"column"`
	EndLine     int      `json:"end_line"`
	EndColumn   int      `json:"end_column"`
	Evidence    []string `json:"evidence,omitempty"`
	Explanation string   `json:"explanation,omitempty"`
	Fix         *jsonFix `json:"fix,omitempty"`
	Confidence  float64  `json:"confidence,omitempty"`
}

type jsonFix struct {
	Title string `json:"title"`
	// Verified: the edited cell ran to its end in a copy of the kernel.
	Verified bool       `json:"verified"`
	Edits    []jsonEdit `json:"edits"`
}

type jsonEdit struct {
	// Cell is the 0-based index in the notebook's cells array of the cell the edit applies
	// to: the finding's cell, or an earlier cell where the root cause is.
	Cell      int    `json:"cell"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	NewText   string `json:"new_text"`
}

func toJSON(rep *judge.Report) jsonReport {
	out := jsonReport{Notebook: rep.Notebook, Kernel: jsonKernel{Name: rep.KernelName, LanguageVersion: rep.Kernel.LanguageVersion}, Cells: []jsonCell{}}
	if rep.Replayed > 0 || rep.ReplayError != nil {
		out.Replay = &jsonReplay{Replayed: rep.Replayed}
		if rep.ReplayError != nil {
			out.Replay.Error = rep.ReplayError.Error()
		}
	}
	for _, c := range rep.Cells {
		jc := jsonCell{Index: c.Index, Verdict: c.Verdict, Confidence: round2(c.Confidence), Reason: c.Reason, Findings: []jsonFinding{}, Notes: c.Notes}
		for _, f := range c.Findings {
			jf := jsonFinding{
				Source: string(f.Source), Severity: string(f.Severity), Code: f.Code, Exception: f.Exception,
				Message: f.Message, Evidence: f.Evidence, Explanation: f.Explanation, Confidence: round2(f.Confidence),
				Line: f.Range.Start.Line + 1, Column: f.Range.Start.Character + 1,
				EndLine: f.Range.End.Line + 1, EndColumn: f.Range.End.Character + 1,
			}
			if fix := preferredFix(f); fix != nil {
				jf.Fix = &jsonFix{Title: fix.Title, Verified: fix.Verified}
				for _, e := range fix.Edits {
					jf.Fix.Edits = append(jf.Fix.Edits, jsonEdit{
						Cell: editCellIndex(rep, c.Index, e),
						Line: e.Range.Start.Line + 1, Column: e.Range.Start.Character + 1,
						EndLine: e.Range.End.Line + 1, EndColumn: e.Range.End.Character + 1, NewText: e.NewText,
					})
				}
			}
			jc.Findings = append(jc.Findings, jf)
		}
		out.Cells = append(out.Cells, jc)
	}
	return out
}

// editCellIndex is the 0-based notebook index of the cell an edit applies to.
func editCellIndex(rep *judge.Report, finding int, e analysis.Edit) int {
	if e.Cell == "" || rep.Source == nil {
		return finding
	}
	if i := rep.Source.Index(e.Cell); i >= 0 {
		return i
	}
	return finding
}

// preferredFix is the fix a report shows: the preferred one (the best verified fix when
// verification ran), else the first.
func preferredFix(f analysis.Finding) *analysis.Fix {
	for i := range f.Fixes {
		if f.Fixes[i].Preferred {
			return &f.Fixes[i]
		}
	}
	if len(f.Fixes) > 0 {
		return &f.Fixes[0]
	}
	return nil
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

func writeJSON(w io.Writer, rep *judge.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(toJSON(rep))
}

// writeText prints what a person at a terminal wants: each target cell's verdict, and for
// each finding the line with the expression marked, the evidence and the fix. Cells are
// named as the findings' messages name them, from 1 in page order; the 0-based index that
// --cell and the JSON take is beside it.
func writeText(w io.Writer, rep *judge.Report) error {
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
		fmt.Fprintf(w, "%s: %s judged, %d will crash, %d unknown\n", rep.Notebook, plural(len(rep.Cells), "cell"), crashes, unknown)
	} else {
		fmt.Fprintf(w, "%s: %s judged, %d will crash\n", rep.Notebook, plural(len(rep.Cells), "cell"), crashes)
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
		lines := strings.Split(src[c.Index], "\n")
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
					if i := editCellIndex(rep, c.Index, fix.Edits[0]); i != c.Index {
						fmt.Fprintf(w, "         (in cell %d, index %d)\n", i+1, i)
						fixLines = strings.Split(src[i], "\n")
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
func fixPreview(lines []string, fix *analysis.Fix) []string {
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
	edits := append([]analysis.Edit(nil), fix.Edits...)
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

// offsetIn converts a line and UTF-16 column within text to a byte offset.
func offsetIn(text string, line, col int) (int, bool) {
	off := 0
	for i := 0; i < line; i++ {
		j := strings.IndexByte(text[off:], '\n')
		if j < 0 {
			return 0, false
		}
		off += j + 1
	}
	end := len(text)
	if j := strings.IndexByte(text[off:], '\n'); j >= 0 {
		end = off + j
	}
	u := 0
	for i, r := range text[off:end] {
		if u >= col {
			return off + i, true
		}
		u++
		if r >= 0x10000 {
			u++
		}
	}
	if u >= col {
		return end, true
	}
	return 0, false
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
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
func caret(line string, r analysis.Range) string {
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

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
