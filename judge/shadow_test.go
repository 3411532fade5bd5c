package judge

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

func TestShadowFindingsNarrow(t *testing.T) {
	tests := []struct {
		name, code string
		r          facts.ShadowResult
		wantCode   string
		want       finding.Range // 0-based
	}{
		{"missing key", "x = 1\nm = df[\"age\"].mean()\n",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'age'", Line: 2},
			"key-error", rng(1, 7, 12)},
		{"undefined name", "print(summary.head())",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "NameError", Message: "name 'summary' is not defined", Line: 1},
			"undefined-name", rng(0, 6, 13)},
		{"missing attribute", "a = 1\nb = df.Agee + a",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "AttributeError", Message: "'DataFrame' object has no attribute 'Agee'", Line: 2},
			"attribute-error", rng(1, 7, 11)},
		{"other exceptions mark the line without its indentation", "for i in range(3):\n    y = model.predict(X)",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "NotFittedError", Message: "not fitted", Line: 2},
			"not-fitted", rng(1, 4, 24)},
		{"line out of the cell falls back to line 1", "y = f(x)",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "ValueError", Message: "bad", Line: 9},
			"value-error", rng(0, 0, 8)},
		{"crash inside a function the cell defines marks the calling statement", "def f(d):\n    return d[\"k\"]\n\ny = f({})",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'k'", Line: 2, Frames: []facts.Frame{
				{File: "<premortem-cell>", Line: 4, Func: "<cell>", InCell: true, Text: "y = f({})"},
				{File: "<premortem-cell>", Line: 2, Func: "f", InCell: true, Text: "return d[\"k\"]"}}},
			"key-error", rng(3, 0, 9)},
		// Python numbers lines ending in "\r\n" or a lone "\r" as lines (compile() of
		// "a = 1\rb = 2\rraise ValueError(b)" raises at line 3).
		{"CRLF line endings", "x = 1\r\nm = df[\"age\"].mean()\r\n",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'age'", Line: 2},
			"key-error", rng(1, 7, 12)},
		{"lone CR line endings", "a = 1\rb = 2\rm = df[\"age\"].mean()\rprint(m)",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'age'", Line: 3},
			"key-error", rng(2, 7, 12)},
		{"lone CR, other exceptions mark the line", "a = 1\rfor i in range(3):\r    y = model.predict(X)\r",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "NotFittedError", Message: "not fitted", Line: 3},
			"not-fitted", rng(2, 4, 24)},
		{"UTF-16 columns", "s = \"😀\"; d[\"k\"]",
			facts.ShadowResult{Status: facts.ShadowError, Exception: "KeyError", Message: "'k'", Line: 1},
			"key-error", rng(0, 12, 15)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cf := analysis.ParseCell(tt.code)
			fs, notes := ShadowFindings("c", tt.code, cf, &tt.r)
			if len(fs) != 1 || len(notes) != 0 {
				t.Fatalf("got %d findings %q notes, want 1 finding", len(fs), notes)
			}
			f := fs[0]
			if f.Range != tt.want || f.Code != tt.wantCode || f.Source != finding.SourceShadow || f.Severity != finding.SeverityError || f.Exception != tt.r.Exception {
				t.Errorf("got %s %s %s %+v, want %s %+v", f.Source, f.Code, f.Exception, f.Range, tt.wantCode, tt.want)
			}
			if !strings.Contains(f.Message, tt.r.Exception) || len(f.Evidence) == 0 {
				t.Errorf("message %q / evidence %q", f.Message, f.Evidence)
			}
			if len(tt.r.Frames) > 1 && !strings.Contains(strings.Join(f.Evidence, "\n"), "raised inside f at line 2 of this cell: return d[\"k\"]") {
				t.Errorf("evidence %q does not say where inside the function it raised", f.Evidence)
			}
		})
	}
}

func TestShadowFindingsOutcomes(t *testing.T) {
	tests := []struct {
		r        *facts.ShadowResult
		wantNote string
	}{
		{nil, ""},
		{&facts.ShadowResult{Status: facts.ShadowOK}, ""},
		{&facts.ShadowResult{Status: facts.ShadowRefused, Refused: "open('out.csv', 'w')"}, "open('out.csv', 'w')"},
		{&facts.ShadowResult{Status: facts.ShadowTimeout}, "timed out"},
		{&facts.ShadowResult{Status: facts.ShadowDied, Reason: "killed by signal 9"}, "signal 9"},
		{&facts.ShadowResult{Status: facts.ShadowSkipped, Reason: "the kernel uses CUDA"}, "CUDA"},
		{&facts.ShadowResult{Status: facts.ShadowOK, DevRun: &facts.DevRun{Cap: 3, Shortened: true, Loops: []facts.DevLoop{
			{Line: 1, Kind: "while", Header: "step < n", Entries: 1, Ran: 3, Shortened: true}}}}, "loops were shortened and ran clean (loops capped at 3 iterations, loops around loops at 2; line 1: while step < n ran 3 iterations)"},
		{&facts.ShadowResult{Status: facts.ShadowRunning, Reason: "the cell is still running after 3 s"}, "still running"},
	}
	for _, tt := range tests {
		fs, notes := ShadowFindings("c", "x = 1", analysis.ParseCell("x = 1"), tt.r)
		if len(fs) != 0 {
			t.Errorf("%+v: got findings %+v, want none (only a real exception is a finding)", tt.r, fs)
		}
		if got := strings.Join(notes, "\n"); (tt.wantNote == "") != (got == "") || !strings.Contains(got, tt.wantNote) {
			t.Errorf("%+v: notes %q, want one containing %q", tt.r, notes, tt.wantNote)
		}
	}
}

func TestFrameEvidence(t *testing.T) {
	frames := []facts.Frame{
		{File: "<cell>", Line: 1, Func: "<module>", InCell: true},
		{File: "/usr/lib/python3/dist-packages/pandas/core/frame.py", Line: 3807, Func: "__getitem__"},
		{File: "/usr/lib/python3/dist-packages/pandas/core/indexes/base.py", Line: 3804, Func: "get_loc"},
	}
	want := "raised in get_loc (pandas/core/indexes/base.py:3804), called through __getitem__ (pandas/core/frame.py:3807)"
	if got := frameEvidence(frames); got != want {
		t.Errorf("frameEvidence = %q, want %q", got, want)
	}
	if got := frameEvidence(frames[:1]); got != "" {
		t.Errorf("in-cell frames only: %q, want empty", got)
	}
	if got := shortPath("/home/u/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py"); got != "torch/nn/modules/linear.py" {
		t.Errorf("shortPath = %q", got)
	}
}

// fallbackView in TestScreen's table: the fallback with its private view of files.
const fallbackView = "fallback+view"

func TestScreen(t *testing.T) {
	tests := []struct {
		code, mode string
		longRunOK  bool
		sandbox    string
		want       string // substring of the reason; "" = may shadow
	}{
		{"for e in range(epochs):\n    model.fit(X, y, epochs=5)", ShadowSafe, false, "", "run long"},
		{"for e in range(epochs):\n    model.fit(X, y, epochs=5)", ShadowSafe, true, "", ""},
		{"y = df['a'].mean()", ShadowSafe, false, "", ""},
		{"df.to_csv('out.csv')", ShadowSafe, false, "", "side effect"},
		{"df.to_csv('out.csv')", ShadowSafe, false, facts.SandboxFallback, "side effect"},
		{"df.to_csv('out.csv')", ShadowAlways, false, "", ""},
		{"x = x.cuda()", ShadowAlways, false, "", "CUDA"},
		{"x = x.cuda()", ShadowSafe, false, "", "CUDA"},
		{"device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", ShadowSafe, false, "", ""},
		{"import os\nos.system('ls')", ShadowSafe, false, "", "side effect"},
		// The namespace sandbox contains writes, deletes, processes and the network: safe mode
		// runs those cells; CUDA and long runs are still screened.
		{"df.to_csv('out.csv')\nback = pd.read_csv('out.csv')", ShadowSafe, false, facts.SandboxNamespaces, ""},
		{"import os\nos.remove('a.csv')\nos.rename('b', 'c')", ShadowSafe, false, facts.SandboxNamespaces, ""},
		{"import os\nos.system('ls')", ShadowSafe, false, facts.SandboxNamespaces, ""},
		{"import urllib.request\nurllib.request.urlopen('http://x')", ShadowSafe, false, facts.SandboxNamespaces, ""},
		{"x = x.cuda()", ShadowSafe, false, facts.SandboxNamespaces, "CUDA"},
		{"for e in range(epochs):\n    model.fit(X, y, epochs=5)", ShadowSafe, false, facts.SandboxNamespaces, "run long"},
		// The fallback with its private view of files: writes, deletes, moves and mkdir run;
		// the network and processes are still screened.
		{"df.to_csv('out.csv')\nback = pd.read_csv('out.csv')", ShadowSafe, false, fallbackView, ""},
		{"import os\nos.makedirs('out')\nos.remove('a.csv')\nos.rename('b', 'c')", ShadowSafe, false, fallbackView, ""},
		{"import torch\ntorch.save(m.state_dict(), 'm.pt')\nplt.savefig('f.png')", ShadowSafe, false, fallbackView, ""},
		{"import os\nos.system('ls')", ShadowSafe, false, fallbackView, "side effect"},
		{"import urllib.request\nurllib.request.urlopen('http://x')", ShadowSafe, false, fallbackView, "side effect"},
		{"df.to_csv('out.csv')\nimport subprocess\nsubprocess.run(['ls'])", ShadowSafe, false, fallbackView, "side effect"},
		{"x = x.cuda()", ShadowSafe, false, fallbackView, "CUDA"},
	}
	for _, tt := range tests {
		info := facts.SandboxInfo{Sandbox: tt.sandbox}
		if tt.sandbox == fallbackView {
			info = facts.SandboxInfo{Sandbox: facts.SandboxFallback, Emulated: []string{facts.EmulatedFiles}}
		}
		got := screen(analysis.ParseCell(tt.code), tt.code, tt.mode, tt.longRunOK, info, facts.TensorsReal)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("screen(%q, %s, sandbox %q) = %q, want %q", tt.code, tt.mode, tt.sandbox, got, tt.want)
		}
	}
}

// TestShadowFindingsDevRun: a fast dev run's crash is confirmed (an error) unless its line
// reads what a shortened loop produced; then it is a warning of DevRunLikelyConfidence whose
// evidence says which loop was shortened and how far it ran.
func TestShadowFindingsDevRun(t *testing.T) {
	text := "losses = []\nfor i in range(100):\n    losses.append(i)\nlast = losses[99]"
	loops := []facts.DevLoop{{Line: 2, Kind: "for", Header: "i in range(100)", Entries: 1, Ran: 3, Shortened: true, Total: 100}}
	crash := func(likely bool) *facts.ShadowResult {
		return &facts.ShadowResult{Status: facts.ShadowError, Exception: "IndexError", Message: "list index out of range", Line: 4,
			Frames: []facts.Frame{{File: "<premortem-cell>", Line: 4, Func: "<cell>", InCell: true}},
			DevRun: &facts.DevRun{Cap: 3, Shortened: true, Loops: loops, CrashLine: 4, Likely: likely, Reads: map[bool][]string{true: {"losses"}}[likely]}}
	}
	for _, tt := range []struct {
		likely   bool
		severity finding.Severity
		conf     float64
		evidence string
	}{
		{true, finding.SeverityWarning, DevRunLikelyConfidence, "the loops were shortened (loops capped at 3 iterations, loops around loops at 2; line 2: for i in range(100) ran 3 of 100 iterations); the crash line reads losses"},
		{false, finding.SeverityError, 1, "the crash line reads nothing the shortened loops produced"},
	} {
		fs, _ := ShadowFindings("c", text, analysis.ParseCell(text), crash(tt.likely))
		if len(fs) != 1 {
			t.Fatalf("likely=%v: findings %+v", tt.likely, fs)
		}
		f := fs[0]
		if f.Severity != tt.severity || f.Confidence != tt.conf || f.Range.Start.Line != 3 || f.Exception != "IndexError" {
			t.Errorf("likely=%v: %s %.2f line %d %s", tt.likely, f.Severity, f.Confidence, f.Range.Start.Line+1, f.Exception)
		}
		if !strings.Contains(strings.Join(f.Evidence, "\n"), tt.evidence) {
			t.Errorf("likely=%v: evidence %q lacks %q", tt.likely, f.Evidence, tt.evidence)
		}
		v := Merge("c", 0, Layers{Shadow: crash(tt.likely), ShadowFindings: fs})
		if v.Verdict != VerdictCrash || v.Confidence != tt.conf {
			t.Errorf("likely=%v: verdict %s %.2f, want crash %.2f", tt.likely, v.Verdict, v.Confidence, tt.conf)
		}
	}
}
