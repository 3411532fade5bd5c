package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// testReport is a judged two-cell notebook written to a temporary folder: cell 0 ran,
// cell 1 is predicted to raise a KeyError on `"age"` with a verified fix that edits cell 0
// (where the column was renamed), cell 2 has an unknown verdict.
func testReport(t *testing.T) *judge.Report {
	t.Helper()
	nb := notebook.NewPython("")
	nb.AddCode("df = df.rename(columns={\"Age\": \"age2\"})", 1).ID = "c0"
	nb.AddCode("x = 1\nm = df[\"age\"].mean()", 0).ID = "c1"
	nb.AddCode("train(df)", 0).ID = "c2"
	data, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	age := finding.Range{Start: finding.Position{Line: 1, Character: 7}, End: finding.Position{Line: 1, Character: 12}}
	fix := finding.Fix{Title: "Keep column 'Age' (verified: the cell runs)", Verified: true, Preferred: true, Edits: []finding.Edit{{
		Cell: "c0", Range: finding.Range{Start: finding.Position{Character: 31}, End: finding.Position{Character: 37}}, NewText: `"age"`,
	}}}
	return &judge.Report{
		Notebook: path, KernelName: "python3", Source: nb, Replayed: 1,
		Cells: []*judge.CellVerdict{
			{Index: 1, CellID: "c1", Verdict: judge.VerdictCrash, Confidence: 0.987, Findings: []finding.Finding{{
				Cell: "c1", Source: finding.SourceShadow, Severity: finding.SeverityError, Code: "missing-column",
				Exception: "KeyError", Message: "column 'age' is not in df", Range: age,
				Evidence: []string{"shadow run: KeyError at line 2"}, Fixes: []finding.Fix{fix}, Confidence: 0.95,
				Related: []finding.Related{{Cell: "c0", Range: finding.Range{End: finding.Position{Character: 5}}, Message: "renamed in cell 1"}},
			}}},
			{Index: 2, CellID: "c2", Verdict: judge.VerdictUnknown, Reason: "the shadow run timed out"},
		},
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, testReport(t), "text", "test"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"2 cells judged, 1 will crash, 1 unknown",
		"cell 2 (index 1): will crash (confidence 0.99)",
		"  2:8 error KeyError [shadow/missing-column] column 'age' is not in df",
		`       2 | m = df["age"].mean()`,
		"         |        ^^^^^",
		"      evidence: shadow run: KeyError at line 2",
		"      fix: Keep column 'Age' (verified: the cell runs)",
		"         (in cell 1, index 0)",
		`         - df = df.rename(columns={"Age": "age2"})`,
		`         + df = df.rename(columns={"Age": "age"})`,
		"cell 3 (index 2): unknown — the shadow run timed out",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, testReport(t), "json", "test"); err != nil {
		t.Fatal(err)
	}
	var rep JSONReport
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kernel.Name != "python3" || rep.Replay == nil || rep.Replay.Replayed != 1 || len(rep.Cells) != 2 {
		t.Fatalf("report %+v", rep)
	}
	c := rep.Cells[0]
	if c.Index != 1 || c.Verdict != "crash" || c.Confidence != 0.99 || len(c.Findings) != 1 {
		t.Fatalf("cell %+v", c)
	}
	f := c.Findings[0]
	// 1-based lines and columns; the fix's edit names the cell it edits by index.
	if f.Line != 2 || f.Column != 8 || f.EndLine != 2 || f.EndColumn != 13 || f.Fix == nil || !f.Fix.Verified ||
		len(f.Fix.Edits) != 1 || f.Fix.Edits[0] != (JSONEdit{Cell: 0, Line: 1, Column: 32, EndLine: 1, EndColumn: 38, NewText: `"age"`}) {
		t.Errorf("finding %+v, fix %+v", f, f.Fix)
	}
	// A place in another cell the finding points at, by index, 1-based.
	if len(f.Related) != 1 || f.Related[0] != (JSONRelated{Cell: 0, Line: 1, Column: 1, EndLine: 1, EndColumn: 6, Message: "renamed in cell 1"}) {
		t.Errorf("related %+v", f.Related)
	}
	if u := rep.Cells[1]; u.Verdict != "unknown" || u.Reason != "the shadow run timed out" || len(u.Findings) != 0 || u.Findings == nil {
		t.Errorf("unknown cell %+v (findings must be [] not null)", u)
	}
}

// TestSARIF: regions and fix replacements point into the .ipynb file's own lines, in the
// cell each edit changes; an unknown verdict is a note.
func TestSARIF(t *testing.T) {
	rep := testReport(t)
	var b bytes.Buffer
	if err := Write(&b, rep, "sarif", "1.2.3"); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct{ Name, Version string }
			}
			Results []struct {
				RuleID, Level string
				Locations     []struct {
					PhysicalLocation struct {
						Region *struct{ StartLine, StartColumn, EndLine, EndColumn int }
					}
				}
				Fixes []struct {
					ArtifactChanges []struct {
						Replacements []struct {
							DeletedRegion   struct{ StartLine, StartColumn, EndLine, EndColumn int }
							InsertedContent struct{ Text string }
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Version != "1.2.3" || len(log.Runs[0].Results) != 2 {
		t.Fatalf("log %+v", log)
	}
	raw, err := os.ReadFile(rep.Notebook)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	at := func(l, c0, c1 int) string {
		if l < 1 || l > len(lines) || c0 < 1 || c1 > len(lines[l-1])+1 || c1 < c0 {
			return "<out of the file>"
		}
		return lines[l-1][c0-1 : c1-1]
	}
	res := log.Runs[0].Results[0]
	reg := res.Locations[0].PhysicalLocation.Region
	if res.RuleID != "missing-column" || res.Level != "error" || reg == nil || at(reg.StartLine, reg.StartColumn, reg.EndColumn) != `\"age\"` {
		t.Errorf("result %+v region %+v", res, reg)
	}
	if len(res.Fixes) != 1 {
		t.Fatalf("fixes %+v", res.Fixes)
	}
	r := res.Fixes[0].ArtifactChanges[0].Replacements[0]
	if got := at(r.DeletedRegion.StartLine, r.DeletedRegion.StartColumn, r.DeletedRegion.EndColumn); got != `\"age2\"` || r.InsertedContent.Text != `\"age\"` {
		t.Errorf("replacement of %q by %q, want \\\"age2\\\" by \\\"age\\\"", got, r.InsertedContent.Text)
	}
	if u := log.Runs[0].Results[1]; u.RuleID != "outcome-unknown" || u.Level != "note" {
		t.Errorf("unknown verdict result %+v", u)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, testReport(t), "xml", "test"); err == nil || b.Len() != 0 {
		t.Errorf("Write xml: err %v, wrote %q", err, b.String())
	}
}
