package judge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

func rng(line, c0, c1 int) finding.Range {
	return finding.Range{Start: finding.Position{Line: line, Character: c0}, End: finding.Position{Line: line, Character: c1}}
}

func mkFinding(src finding.Source, sev finding.Severity, code, exc string, line, c0, c1 int) finding.Finding {
	return finding.Finding{Cell: "c", Source: src, Severity: sev, Code: code, Exception: exc, Message: code + " message",
		Range: rng(line, c0, c1), Evidence: []string{string(src) + " evidence"}}
}

func withFix(f finding.Finding, title string) finding.Finding {
	f.Fixes = []finding.Fix{{Title: title, Preferred: true, Edits: []finding.Edit{{Range: f.Range, NewText: "x"}}}}
	return f
}

var (
	shadowKeyError = &facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'age'", Line: 2}
	shadowKeyFind  = finding.Finding{Cell: "c", Source: finding.SourceShadow, Severity: finding.SeverityError, Code: "key-error",
		Exception: "KeyError", Message: "KeyError: 'age'", Range: rng(1, 0, 20), Evidence: []string{"shadow run: KeyError at line 2"}, Confidence: 1}
)

// brief is what a test compares: source, severity, code, exception, 1-based line.
type brief struct {
	Source    finding.Source
	Severity  finding.Severity
	Code, Exc string
	Line      int
}

func briefs(fs []finding.Finding) []brief {
	out := []brief{}
	for _, f := range fs {
		out = append(out, brief{f.Source, f.Severity, f.Code, f.Exception, f.Range.Start.Line + 1})
	}
	return out
}

// shortLoop is a fast dev run that cut `for i in range(100)` at line 2 after 3 iterations.
var shortLoop = &facts.DevRun{Cap: 3, Shortened: true, Loops: []facts.DevLoop{{Line: 2, Kind: "for", Header: "i in range(100)", Entries: 1, Ran: 3, Shortened: true, Total: 100}}}

func TestMerge(t *testing.T) {
	E, W, I := finding.SeverityError, finding.SeverityWarning, finding.SeverityInfo
	S, R, St, L := finding.SourceShadow, finding.SourceRules, finding.SourceStatic, finding.SourceLLM
	tests := []struct {
		name     string
		layers   Layers
		verdict  string
		conf     float64
		want     []brief
		wantNote string
		// wantReason is a substring of an unknown verdict's reason.
		wantReason string
	}{
		{
			// Nothing ran the cell: finding nothing proves nothing (issue 11.3).
			name:    "static only, nothing found: unknown",
			layers:  Layers{},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{}, wantReason: "no kernel",
		},
		{
			name:    "rules checked, nothing found: unknown",
			layers:  Layers{RuntimeChecked: true, NoShadow: "shadow runs are off"},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{}, wantReason: "shadow runs are off; the runtime rules found no crash",
		},
		{
			name:    "rule error without shadow",
			layers:  Layers{Rules: []finding.Finding{mkFinding(R, E, "missing-column", "KeyError", 1, 14, 19)}, RuntimeChecked: true},
			verdict: VerdictCrash, conf: 0.9, want: []brief{{R, E, "missing-column", "KeyError", 2}},
		},
		{
			name: "shadow confirms the rule: one finding, the rule's code, shadow source",
			layers: Layers{Rules: []finding.Finding{withFix(mkFinding(R, E, "missing-column", "KeyError", 1, 14, 19), "Use column 'Age'")},
				Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}, RuntimeChecked: true},
			verdict: VerdictCrash, conf: 1, want: []brief{{S, E, "missing-column", "KeyError", 2}},
		},
		{
			name: "shadow confirms rule and static on the same line: still one finding",
			layers: Layers{
				Static: []finding.Finding{mkFinding(St, E, "undefined-name", "KeyError", 1, 3, 5)},
				Rules:  []finding.Finding{withFix(mkFinding(R, E, "missing-column", "KeyError", 1, 14, 19), "Use column 'Age'")},
				Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}},
			verdict: VerdictCrash, conf: 1, want: []brief{{S, E, "missing-column", "KeyError", 2}},
		},
		{
			name: "shadow crash with a rule finding of another exception on the same line: both stand, shadow first",
			layers: Layers{Rules: []finding.Finding{mkFinding(R, W, "dtype", "TypeError", 1, 0, 3)},
				Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}},
			verdict: VerdictCrash, conf: 1, want: []brief{{S, E, "key-error", "KeyError", 2}, {R, W, "dtype", "TypeError", 2}},
		},
		{
			name: "shadow crash and a rule prediction on a later line: both stand",
			layers: Layers{Rules: []finding.Finding{mkFinding(R, E, "not-fitted", "NotFittedError", 4, 0, 3)},
				Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}},
			verdict: VerdictCrash, conf: 1, want: []brief{{S, E, "key-error", "KeyError", 2}, {R, E, "not-fitted", "NotFittedError", 5}},
		},
		{
			name: "clean shadow run dismisses crash predictions of every layer",
			layers: Layers{
				Static: []finding.Finding{mkFinding(St, E, "undefined-name", "NameError", 0, 0, 3)},
				Rules:  []finding.Finding{mkFinding(R, E, "missing-column", "KeyError", 1, 14, 19)},
				LLM:    []finding.Finding{mkFinding(L, W, "llm-crash", "ValueError", 2, 0, 3)},
				Shadow: &facts.ShadowResult{Status: facts.ShadowOK}, RuntimeChecked: true},
			verdict: VerdictOK, conf: 0.97, want: []brief{},
			wantNote: "3 crash predictions dismissed (1 rules, 1 static, 1 llm)",
		},
		{
			name: "clean shadow run keeps hazards that are not crashes",
			layers: Layers{
				Static: []finding.Finding{mkFinding(St, W, "stale-definition", "", 0, 0, 3)},
				Shadow: &facts.ShadowResult{Status: facts.ShadowOK}},
			verdict: VerdictOK, conf: 0.97, want: []brief{{St, W, "stale-definition", "", 1}},
		},
		{
			name:    "shadow timeout and no prediction: unknown",
			layers:  Layers{Shadow: &facts.ShadowResult{Status: facts.ShadowTimeout, Reason: "the cell ran longer than 3 s in the shadow run and was stopped; outcome unknown"}, RuntimeChecked: true},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{}, wantReason: "the cell ran longer than 3 s in the shadow run and was stopped",
		},
		{
			name: "a clean fast dev run that shortened a loop proves nothing: the rule warning is not dismissed",
			layers: Layers{Rules: []finding.Finding{mkFinding(R, W, "dtype", "TypeError", 3, 0, 3)},
				Shadow: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: shortLoop}, RuntimeChecked: true},
			verdict: VerdictCrash, conf: 0.6, want: []brief{{R, W, "dtype", "TypeError", 4}},
		},
		{
			name:    "a clean fast dev run that shortened a loop: unknown, saying what was shortened",
			layers:  Layers{Shadow: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: shortLoop}, RuntimeChecked: true},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{}, wantReason: "loops were shortened and ran clean (loops capped at 3 iterations, loops around loops at 2; line 2: for i in range(100) ran 3 of 100 iterations)",
		},
		{
			name:    "a fast dev run in which no loop reached the cap ran the whole cell: ok",
			layers:  Layers{Shadow: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: &facts.DevRun{Cap: 3, Loops: []facts.DevLoop{{Line: 2, Kind: "for", Header: "c in cols", Entries: 1, Ran: 2}}}}},
			verdict: VerdictOK, conf: 0.97, want: []brief{},
		},
		{
			name: "shadow timeout does not hide a certain rule",
			layers: Layers{Rules: []finding.Finding{mkFinding(R, E, "missing-column", "KeyError", 1, 14, 19)},
				Shadow: &facts.ShadowResult{Status: facts.ShadowTimeout}},
			verdict: VerdictCrash, conf: 0.9, want: []brief{{R, E, "missing-column", "KeyError", 2}},
		},
		{
			name:    "refused shadow run is no evidence either way: unknown",
			layers:  Layers{Shadow: &facts.ShadowResult{Status: facts.ShadowRefused, Refused: "open('out.csv', 'w')"}, RuntimeChecked: true},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{}, wantReason: "stopped before a side effect (open('out.csv', 'w'))",
		},
		{
			name: "LLM guesses the real run contradicts are dropped; its note on the crash line stays as info",
			layers: Layers{
				LLM:    []finding.Finding{mkFinding(L, E, "llm-crash", "KeyError", 1, 0, 3), mkFinding(L, W, "llm-crash", "ValueError", 3, 0, 3)},
				Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}},
			verdict: VerdictCrash, conf: 1, want: []brief{{S, E, "key-error", "KeyError", 2}, {L, I, "llm-crash", "KeyError", 2}},
		},
		{
			name: "a weak warning is listed but does not make a crash verdict",
			layers: Layers{LLM: []finding.Finding{func() finding.Finding {
				f := mkFinding(L, W, "llm-crash", "ValueError", 0, 0, 1)
				f.Confidence = 0.3
				return f
			}()}},
			verdict: VerdictUnknown, conf: 0.5, want: []brief{{L, W, "llm-crash", "ValueError", 1}},
		},
		{
			name: "rules and static predicting the same crash on a line are shown once",
			layers: Layers{
				Static:         []finding.Finding{mkFinding(St, E, "undefined-name", "NameError", 0, 6, 13)},
				Rules:          []finding.Finding{mkFinding(R, E, "undefined-name", "NameError", 0, 6, 13)},
				LLM:            []finding.Finding{mkFinding(L, W, "llm-crash", "builtins.NameError", 0, 0, 3)},
				RuntimeChecked: true},
			verdict: VerdictCrash, conf: 0.9, want: []brief{{R, E, "undefined-name", "NameError", 1}},
		},
		{
			name: "errors sort before warnings, shadow before rules before static",
			layers: Layers{
				Static: []finding.Finding{mkFinding(St, E, "undefined-name", "NameError", 0, 0, 3), mkFinding(St, W, "stale-definition", "", 0, 0, 3)},
				Rules:  []finding.Finding{mkFinding(R, E, "missing-column", "KeyError", 3, 0, 3)}},
			verdict: VerdictCrash, conf: 0.9,
			want: []brief{{R, E, "missing-column", "KeyError", 4}, {St, E, "undefined-name", "NameError", 1}, {St, W, "stale-definition", "", 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Merge("c", 7, tt.layers)
			if v.Index != 7 || v.CellID != "c" {
				t.Errorf("index/cell = %d/%q, want 7/c", v.Index, v.CellID)
			}
			if v.Verdict != tt.verdict || v.Confidence != tt.conf {
				t.Errorf("verdict = %s %.2f, want %s %.2f", v.Verdict, v.Confidence, tt.verdict, tt.conf)
			}
			if got := briefs(v.Findings); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings:\n got %+v\nwant %+v", got, tt.want)
			}
			if tt.wantReason != "" && !strings.Contains(v.Reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", v.Reason, tt.wantReason)
			}
			if v.Verdict == VerdictUnknown && v.Reason == "" {
				t.Errorf("unknown verdict without a reason")
			}
			if tt.wantNote != "" && !strings.Contains(strings.Join(v.Notes, "\n"), tt.wantNote) {
				t.Errorf("notes %q lack %q", v.Notes, tt.wantNote)
			}
		})
	}
}

// TestMergeConfirmedKeepsRuleDetail checks what the user sees of a confirmed crash: the
// rule's precise range and fix, the shadow run's evidence first, each evidence line once.
func TestMergeConfirmedKeepsRuleDetail(t *testing.T) {
	rule := withFix(mkFinding(finding.SourceRules, finding.SeverityError, "missing-column", "KeyError", 1, 14, 19), "Use column 'Age'")
	rule.Evidence = []string{"df: DataFrame 891x11", "df was last set by cell 3"}
	static := mkFinding(finding.SourceStatic, finding.SeverityError, "other", "KeyError", 1, 0, 4)
	static.Evidence = []string{"df: DataFrame 891x11", "static evidence"}
	v := Merge("c", 0, Layers{Rules: []finding.Finding{rule}, Static: []finding.Finding{static},
		Shadow: shadowKeyError, ShadowFindings: []finding.Finding{shadowKeyFind}})
	if len(v.Findings) != 1 {
		t.Fatalf("got %d findings, want 1: %+v", len(v.Findings), v.Findings)
	}
	f := v.Findings[0]
	if f.Range != rule.Range || f.Message != rule.Message || f.Confidence != 1 {
		t.Errorf("confirmed finding lost the rule's range/message: %+v", f)
	}
	if len(f.Fixes) != 1 || f.Fixes[0].Title != "Use column 'Age'" {
		t.Errorf("fixes = %+v", f.Fixes)
	}
	want := []string{"shadow run: KeyError at line 2", "df: DataFrame 891x11", "df was last set by cell 3", "static evidence"}
	if !reflect.DeepEqual(f.Evidence, want) {
		t.Errorf("evidence = %q, want %q", f.Evidence, want)
	}
	// Merge must not write into the layers' slices: the LSP keeps them per cell.
	if rule.Source != finding.SourceRules || len(rule.Evidence) != 2 {
		t.Errorf("Merge changed its input: %+v", rule)
	}
}

// TestKebab: exception names become finding codes, an acronym one word.
func TestKebab(t *testing.T) {
	for in, want := range map[string]string{"KeyError": "key-error", "sklearn.exceptions.NotFittedError": "not-fitted-error", "": "runtime-error", "ValueError": "value-error",
		"json.decoder.JSONDecodeError": "json-decode-error", "OSError": "os-error", "HTTPError": "http-error", "CUDAOutOfMemory": "cuda-out-of-memory"} {
		if got := kebab(in); got != want {
			t.Errorf("kebab(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFoldSameCrashKeepsEvidence: the finding kept for a crash several layers predict carries
// every layer's evidence once, the first fix and the LLM's explanation.
func TestFoldSameCrashKeepsEvidence(t *testing.T) {
	rules := mkFinding(finding.SourceRules, finding.SeverityError, "undefined-name", "NameError", 0, 6, 13)
	static := withFix(mkFinding(finding.SourceStatic, finding.SeverityError, "undefined-name", "NameError", 0, 6, 13), "Run cell 10 first")
	static.Evidence = append(static.Evidence, "rules evidence")
	llm := mkFinding(finding.SourceLLM, finding.SeverityWarning, "llm-crash", "NameError", 0, 0, 3)
	llm.Explanation = "summary is made in a later cell"
	v := Merge("c", 0, Layers{Rules: []finding.Finding{rules}, Static: []finding.Finding{static}, LLM: []finding.Finding{llm}})
	if len(v.Findings) != 1 {
		t.Fatalf("got %d findings: %+v", len(v.Findings), v.Findings)
	}
	f := v.Findings[0]
	want := []string{"rules evidence", "static evidence", "llm evidence"}
	if f.Source != finding.SourceRules || !reflect.DeepEqual(f.Evidence, want) || len(f.Fixes) != 1 || f.Explanation != llm.Explanation {
		t.Errorf("kept %+v", f)
	}
	if len(rules.Evidence) != 1 {
		t.Errorf("Merge changed its input: %+v", rules)
	}
}

// TestMergeLibraryShortened: a clean fast dev run that shortened only library work through
// the structure-keeping table, or cut loops that the capped child found to stand for the
// full run, stands as "no crash" at a lower confidence and dismisses crash predictions, as a
// whole clean run does; with a loop of the cell cut that does not stand, or a reason why
// the full work could fail where the shortened work did not, it proves nothing.
func TestMergeLibraryShortened(t *testing.T) {
	lib := []string{"GridSearchCV.fit: 1 of 12 candidates, cv 5 -> 2"}
	rule := mkFinding(finding.SourceRules, finding.SeverityError, "missing-attribute", "AttributeError", 2, 0, 3)
	for _, tc := range []struct {
		name       string
		dev        *facts.DevRun
		verdict    string
		conf       float64
		findings   int
		wantReason string
	}{
		{"library only", &facts.DevRun{Cap: 3, Shortened: true, Library: lib}, VerdictOK, DevRunLibraryOKConfidence, 0, ""},
		{"library only, a loop within the cap", &facts.DevRun{Cap: 3, Shortened: true, Library: lib,
			Loops: []facts.DevLoop{{Line: 1, Kind: "for", Entries: 1, Ran: 2}}}, VerdictOK, DevRunLibraryOKConfidence, 0, ""},
		{"library and a loop cut", &facts.DevRun{Cap: 3, Shortened: true, Library: lib, Loops: shortLoop.Loops},
			VerdictCrash, 0.9, 1, ""},
		{"library, unsure", &facts.DevRun{Cap: 3, Shortened: true, Library: lib,
			LibraryUnsure: []string{"GridSearchCV has error_score='raise' and the candidates it skipped were never fitted"}},
			VerdictCrash, 0.9, 1, ""},
		{"loops cut that stand", &facts.DevRun{Cap: 3, Shortened: true, Loops: shortLoop.Loops, LoopsStand: true},
			VerdictOK, DevRunLoopsOKConfidence, 0, ""},
		{"library and loops that stand", &facts.DevRun{Cap: 3, Shortened: true, Library: lib, Loops: shortLoop.Loops, LoopsStand: true},
			VerdictOK, DevRunLoopsOKConfidence, 0, ""},
		{"loops that stand after unsure library work", &facts.DevRun{Cap: 3, Shortened: true, Library: lib, Loops: shortLoop.Loops,
			LoopsStand: true, LibraryUnsure: []string{"the loop at line 4 started after the shortened library work and may go over what it produced"}},
			VerdictCrash, 0.9, 1, ""},
		{"loops cut, unsure", &facts.DevRun{Cap: 3, Shortened: true, Loops: shortLoop.Loops,
			LoopsUnsure: []string{"line 3 never ran in the shortened iterations"}},
			VerdictCrash, 0.9, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Layers{Rules: []finding.Finding{rule}, RuntimeChecked: true, Shadow: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: tc.dev}}
			v := Merge("c", 0, l)
			if v.Verdict != tc.verdict || v.Confidence != tc.conf || len(v.Findings) != tc.findings {
				t.Fatalf("got %s %.2f with %d findings, want %s %.2f with %d", v.Verdict, v.Confidence, len(v.Findings), tc.verdict, tc.conf, tc.findings)
			}
			// without the rule's prediction, what remains is the shadow run's own answer
			l.Rules = nil
			v = Merge("c", 0, l)
			if tc.verdict == VerdictOK {
				if v.Verdict != VerdictOK {
					t.Fatalf("no rule: got %s, want ok", v.Verdict)
				}
				return
			}
			if v.Verdict != VerdictUnknown {
				t.Fatalf("no rule: got %s, want unknown", v.Verdict)
			}
			if u := append(append([]string(nil), tc.dev.LibraryUnsure...), tc.dev.LoopsUnsure...); len(u) > 0 && !strings.Contains(v.Reason, u[0]) {
				t.Errorf("reason %q does not say why the clean run does not stand: %q", v.Reason, u[0])
			}
		})
	}
}
