package llm

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		wantErr    string // substring; "" = valid
		check      func(*Verdict) bool
	}{
		{"plain", `{"reasoning":"r","crash":true,"confidence":0.8,"line":2,"exception":"KeyError","category":"c","explanation":"e","fix":null}`, "",
			func(v *Verdict) bool { return v.Crash && v.Line == 2 && v.Exception == "KeyError" && v.Fix == nil }},
		{"no crash zeroes line", `{"crash":false,"confidence":0.1,"line":4,"exception":"KeyError"}`, "",
			func(v *Verdict) bool { return !v.Crash && v.Line == 0 && v.Exception == "" }},
		{"qualified exception", `{"crash":true,"confidence":0.7,"line":1,"exception":"pandas.errors.ParserError: bad"}`, "",
			func(v *Verdict) bool { return v.Exception == "ParserError" }},
		{"fence after prose", "Thinking...\n```json\n{\"crash\":true,\"confidence\":0.5,\"line\":1,\"exception\":\"ValueError\"}\n```", "",
			func(v *Verdict) bool { return v.Exception == "ValueError" }},
		{"fix end defaults to start", `{"crash":true,"confidence":0.5,"line":1,"exception":"E","fix":{"start_line":3,"replacement":"x"}}`, "",
			func(v *Verdict) bool { return v.Fix != nil && v.Fix.EndLine == 3 }},
		{"extra fields ignored", `{"crash":false,"confidence":0.2,"variables":["df"]}`, "", nil},
		{"empty", "  ", "empty", nil},
		{"no json", "The cell will crash.", "no JSON", nil},
		{"truncated", `{"reasoning": "the shape`, "invalid or truncated", nil},
		{"python literal", `{crash: True}`, "invalid", nil},
		{"trailing text", `{"crash":false,"confidence":0.1} and more`, "text follows", nil},
		{"crash missing", `{"confidence":0.9,"line":1}`, `"crash"`, nil},
		{"crash as string", `{"crash":"true","confidence":0.9,"line":1,"exception":"E"}`, "not the JSON", nil},
		{"confidence out of range", `{"crash":true,"confidence":90,"line":1,"exception":"E"}`, "outside [0,1]", nil},
		{"crash without line", `{"crash":true,"confidence":0.9,"exception":"E"}`, `"line"`, nil},
		{"crash without exception", `{"crash":true,"confidence":0.9,"line":2}`, `"exception"`, nil},
		{"negative line", `{"crash":true,"confidence":0.9,"line":-1,"exception":"E"}`, "negative", nil},
		{"bad fix range", `{"crash":true,"confidence":0.9,"line":1,"exception":"E","fix":{"start_line":3,"end_line":1,"replacement":""}}`, "1-based range", nil},
		{"fix not object", `{"crash":true,"confidence":0.9,"line":1,"exception":"E","fix":"use df.age"}`, `"fix" must be`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseAnswer(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil && !tc.check(v) {
				t.Errorf("verdict = %+v", v)
			}
		})
	}
}

func TestVerdictFindings(t *testing.T) {
	cell := "import numpy as np\nfor c in cols:\n    m = df['Age'].mean()  \n"
	v := Verdict{Crash: true, Confidence: 0.8, Line: 3, Exception: "KeyError", Explanation: "df has no column 'Age'.",
		Reasoning: "columns are age, fare", Fix: &FixSpec{StartLine: 3, EndLine: 3, Replacement: "    m = df['age'].mean()\n"},
		Samples: 5, Votes: 4, Model: "m"}
	fs := v.Findings("cell-7", cell)
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	f := fs[0]
	if f.Source != finding.SourceLLM || f.Severity != finding.SeverityWarning || f.Cell != "cell-7" || f.Exception != "KeyError" {
		t.Errorf("finding = %+v", f)
	}
	wantRange := finding.Range{Start: finding.Position{Line: 2, Character: 4}, End: finding.Position{Line: 2, Character: 24}}
	if f.Range != wantRange {
		t.Errorf("range = %+v, want %+v (line 3 without indentation and trailing blanks)", f.Range, wantRange)
	}
	if !strings.Contains(f.Message, "KeyError") || !strings.Contains(f.Explanation, "columns are age, fare") || f.Confidence != 0.8 {
		t.Errorf("message %q explanation %q", f.Message, f.Explanation)
	}
	if len(f.Evidence) != 1 || !strings.Contains(f.Evidence[0], "4 of 5") {
		t.Errorf("evidence = %v", f.Evidence)
	}
	if len(f.Fixes) != 1 || len(f.Fixes[0].Edits) != 1 {
		t.Fatalf("fixes = %+v", f.Fixes)
	}
	e := f.Fixes[0].Edits[0]
	wantEdit := finding.Range{Start: finding.Position{Line: 2}, End: finding.Position{Line: 2, Character: 26}}
	if e.Range != wantEdit || e.NewText != "    m = df['age'].mean()" {
		t.Errorf("edit = %+v, want range %+v", e, wantEdit)
	}

	// Out-of-cell lines are clamped; a fix outside the cell is dropped.
	v.Line, v.Fix = 40, &FixSpec{StartLine: 9, EndLine: 9, Replacement: "x"}
	f = v.Findings("c", cell)[0]
	if f.Range.Start.Line != 3 || len(f.Fixes) != 0 {
		t.Errorf("clamped finding = %+v", f)
	}
	// UTF-16 columns.
	v.Line, v.Fix = 1, nil
	f = v.Findings("c", "  s = '𝒳é'")[0]
	if f.Range.Start.Character != 2 || f.Range.End.Character != 11 {
		t.Errorf("utf16 range = %+v", f.Range)
	}
	if len((Verdict{Crash: false}).Findings("c", cell)) != 0 || len((Verdict{Unknown: true}).Findings("c", cell)) != 0 {
		t.Error("no-crash or unknown verdict yielded findings")
	}
}

func TestVoteTieMeansNoCrash(t *testing.T) {
	v := vote([]*Verdict{
		{Crash: true, Confidence: 0.9, Line: 1, Exception: "E"},
		{Crash: false, Confidence: 0.4},
		{Unknown: true, Reason: "bad"},
	})
	if v.Crash || v.Samples != 2 || v.Votes != 1 || v.Confidence != 0.4 {
		t.Errorf("vote = %+v", v)
	}
	if u := vote([]*Verdict{{Unknown: true, Reason: "why"}}); !u.Unknown || u.Reason != "why" {
		t.Errorf("all-unknown vote = %+v", u)
	}
}
