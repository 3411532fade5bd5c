package report

import (
	"encoding/json"
	"io"

	"github.com/premortem/premortem/judge"
)

// JSONReport is the `premortem check --format json` contract, documented field by field in
// docs/check-json.md (keep the two in step): lines and columns are 1-based within the cell;
// columns count UTF-16 code units, as LSP does; a fix says whether it was verified and each
// edit names the 0-based index of the cell it edits.
type JSONReport struct {
	Notebook string      `json:"notebook"`
	Kernel   JSONKernel  `json:"kernel"`
	Replay   *JSONReplay `json:"replay,omitempty"`
	Cells    []JSONCell  `json:"cells"`
}

// JSONKernel is the kernel the notebook was judged in.
type JSONKernel struct {
	Name            string `json:"name"`
	LanguageVersion string `json:"language_version,omitempty"`
}

// JSONReplay says how many executed cells were replayed and, when one stopped the replay,
// which and how.
type JSONReplay struct {
	Replayed int    `json:"replayed"`
	Error    string `json:"error,omitempty"`
}

// JSONCell is one target cell's verdict and the findings behind it.
type JSONCell struct {
	Index      int     `json:"index"`
	Verdict    string  `json:"verdict"`
	Confidence float64 `json:"confidence"`
	// Reason says why the verdict is unknown (which layer could not tell, and why).
	Reason   string        `json:"reason,omitempty"`
	Findings []JSONFinding `json:"findings"`
	Notes    []string      `json:"notes,omitempty"`
}

// JSONFinding is one layer's finding in a cell, with the fix a report shows for it.
type JSONFinding struct {
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
	Fix         *JSONFix `json:"fix,omitempty"`
	Confidence  float64  `json:"confidence,omitempty"`
	// Related are places in other cells the finding points at: the line of an earlier
	// cell whose code raised.
	Related []JSONRelated `json:"related,omitempty"`
}

// JSONRelated is a place in another cell: its 0-based index in the cells array, 1-based
// lines and UTF-16 columns within it, and what it is.
type JSONRelated struct {
	Cell      int    `json:"cell"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	Message   string `json:"message"`
}

// JSONFix is a fix as edits to the notebook's cells.
type JSONFix struct {
	Title string `json:"title"`
	// Verified: the edited cell ran to its end in a copy of the kernel.
	Verified bool       `json:"verified"`
	Edits    []JSONEdit `json:"edits"`
}

// JSONEdit replaces one range of a cell's text.
type JSONEdit struct {
	// Cell is the 0-based index in the notebook's cells array of the cell the edit applies
	// to: the finding's cell, or an earlier cell where the root cause is.
	Cell      int    `json:"cell"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	NewText   string `json:"new_text"`
}

// ToJSON converts a report to the JSON contract's shape.
func ToJSON(rep *judge.Report) JSONReport {
	out := JSONReport{Notebook: rep.Notebook, Kernel: JSONKernel{Name: rep.KernelName, LanguageVersion: rep.Kernel.LanguageVersion}, Cells: []JSONCell{}}
	if rep.Replayed > 0 || rep.ReplayError != nil {
		out.Replay = &JSONReplay{Replayed: rep.Replayed}
		if rep.ReplayError != nil {
			out.Replay.Error = rep.ReplayError.Error()
		}
	}
	for _, c := range rep.Cells {
		jc := JSONCell{Index: c.Index, Verdict: c.Verdict, Confidence: round2(c.Confidence), Reason: c.Reason, Findings: []JSONFinding{}, Notes: c.Notes}
		for _, f := range c.Findings {
			jf := JSONFinding{
				Source: string(f.Source), Severity: string(f.Severity), Code: f.Code, Exception: f.Exception,
				Message: f.Message, Evidence: f.Evidence, Explanation: f.Explanation, Confidence: round2(f.Confidence),
				Line: f.Range.Start.Line + 1, Column: f.Range.Start.Character + 1,
				EndLine: f.Range.End.Line + 1, EndColumn: f.Range.End.Character + 1,
			}
			for _, r := range f.Related {
				if rep.Source == nil || rep.Source.Index(r.Cell) < 0 {
					continue
				}
				jf.Related = append(jf.Related, JSONRelated{Cell: rep.Source.Index(r.Cell), Line: r.Range.Start.Line + 1, Column: r.Range.Start.Character + 1,
					EndLine: r.Range.End.Line + 1, EndColumn: r.Range.End.Character + 1, Message: r.Message})
			}
			if fix := preferredFix(f); fix != nil {
				jf.Fix = &JSONFix{Title: fix.Title, Verified: fix.Verified}
				for _, e := range fix.Edits {
					jf.Fix.Edits = append(jf.Fix.Edits, JSONEdit{
						Cell: EditCell(rep, c.Index, e),
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

// round2 rounds a confidence to two decimals, so the JSON does not claim more precision
// than the layers have.
func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

// JSON writes rep as one indented JSON object (JSONReport).
func JSON(w io.Writer, rep *judge.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToJSON(rep))
}
