package eval

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

const testCases = "../../testdata/junobench/cases"

// testOptions are `premortem eval`'s defaults for the given comma-separated settings and
// case ids, offline, as `premortem eval --cases testCases --quiet` would run them.
func testOptions(settings string, ids ...string) Options {
	o := Options{Cases: testCases, IDs: ids, Python: python.Path(), CaseTimeout: 5 * time.Minute, Shadow: judge.ShadowSafe}
	if settings != "" {
		o.Settings = strings.Split(settings, ",")
	} else {
		o.Settings = Settings
	}
	return o
}

func TestCrashLines(t *testing.T) {
	for _, tc := range []struct {
		target, snippet string
		want            string
	}{
		{"df['Installs']=df['Installs'].astype('int')", "df['Installs']=df['Installs'].astype('int')", "[1]"},
		{"import x\n\nfig, axs = plt.subplots(6, 3,\n    figsize=(7, 17))\nplt.show()", "fig, axs = plt.subplots(6, 3, figsize=(7, 17))", "[3 4]"},
		{"a = 1\nmodel.fit(X,\n  y)\n", "model.fit(X,", "[2 3]"},
		{"a = 1\nb = 2", "c = 3", "[]"},
		{"h = model.fit(x, y, epochs=2, verbose=1)", "h = model.fit(x, y, epochs=5, verbose=1)", "[1]"},
		{"fig = sm.qqplot(train['gravity'])", "fig = sm.qqplot(train['urea'],line=45,fit=True)", "[1]"},
		{"import numpy as np", "import pandas as pd, numpy", "[]"},
		{"x = 1", "", "[]"},
	} {
		got := fmt.Sprint(crashLines(tc.target, tc.snippet))
		if got != tc.want {
			t.Errorf("crashLines(%q, %q) = %s, want %s", tc.target, tc.snippet, got, tc.want)
		}
	}
}

// TestCrashLinesOnCases checks that the recorded crash line of most development cases is
// found in the buggy target (the rest are scored on the exception alone).
func TestCrashLinesOnCases(t *testing.T) {
	cases, err := loadCases(testCases, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, c := range cases {
		if len(crashLines(c.Versions[versionBuggy].Target.Code, c.CrashLine)) == 0 {
			missing = append(missing, c.ID)
		}
	}
	t.Logf("%d of %d cases' crash lines found in the target; not found: %v", len(cases)-len(missing), len(cases), missing)
	if len(missing) > len(cases)/4 {
		t.Errorf("crash line not found in %d of %d cases: %v", len(missing), len(cases), missing)
	}
}

func TestLoadCases(t *testing.T) {
	cases, err := loadCases(testCases, "", "", []string{"pandas_10", "NBspecific_12"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].ID != "NBspecific_12" || cases[1].ID != "pandas_10" {
		t.Fatalf("cases = %v", cases)
	}
	c := cases[1]
	if c.Group != "pandas" || c.RootCause != "data confusion" || c.Ename != "valueerror" || c.DataGen == "" {
		t.Errorf("pandas_10 = %+v", c)
	}
	if got := c.Crane["gpt5"]; got.BuggyRT == "" || got.FixedRT == "" {
		t.Errorf("CRANE labels = %+v", c.Crane)
	}
	if len(c.Versions[versionBuggy].Executed) != 4 {
		t.Errorf("executed cells = %d", len(c.Versions[versionBuggy].Executed))
	}
	if _, err := loadCases(testCases, "", "", []string{"nope_1"}); err == nil {
		t.Error("unknown case id accepted")
	}
}

func TestParseCrane(t *testing.T) {
	got := parseCrane("gemini:C>C;qwen:W>PC;gpt5:RW>C", "gemini:W>C;qwen:C>C;gpt5:C>W")
	want := map[string]craneLabels{
		"gemini": {"C", "C", "W", "C"},
		"qwen":   {"W", "PC", "C", "C"},
		"gpt5":   {"RW", "C", "C", "W"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseCrane = %v, want %v", got, want)
	}
}

func TestScoreAndMetrics(t *testing.T) {
	c := &evalCase{ID: "x", Group: "pandas", RootCause: "data confusion", Ename: "keyerror", CrashLine: "df['Age'].mean()",
		Versions: map[string]*caseVersion{versionBuggy: {}}}
	c.Versions[versionBuggy].Target.Code = "import numpy as np\nm = df['Age'].mean()"
	ss := []scored{
		score(c, outcome{Version: versionBuggy, Crash: true, Exception: "KeyError", Line: 2}),    // TP, diagnosed
		score(c, outcome{Version: versionBuggy, Crash: true, Exception: "KeyError", Line: 1}),    // TP, wrong line
		score(c, outcome{Version: versionBuggy, Crash: true, Exception: "TypeError", Line: 2}),   // TP, wrong exception
		score(c, outcome{Version: versionBuggy, Unknown: true}),                                  // FN
		score(c, outcome{Version: versionFixed, Crash: true, Exception: "KeyError", Line: 2}),    // FP
		score(c, outcome{Version: versionFixed, PromptTokens: 100}),                              // TN
		score(c, outcome{Version: versionFixed, PromptTokens: 300}),                              // TN
		score(c, outcome{Version: versionFixed, Unknown: true, PromptTokens: 200, Kernel: true}), // TN
	}
	m := computeMetrics(ss)
	if m.N != 8 || m.TP != 3 || m.FN != 1 || m.FP != 1 || m.TN != 3 {
		t.Fatalf("confusion = %+v", m)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(m.Accuracy, 6.0/8) || !near(m.P, 3.0/4) || !near(m.R, 3.0/4) || !near(m.F1, 0.75) {
		t.Errorf("detection = %v %v %v %v", m.Accuracy, m.P, m.R, m.F1)
	}
	// Diagnosis: one TP, three FN among the buggy; FP and TN as detection.
	if m.DiagTP != 1 || m.DiagFN != 3 || !near(m.DiagAccuracy, 4.0/8) || !near(m.DiagP, 0.5) || !near(m.DiagR, 0.25) || !near(m.DiagF1, 1.0/3) {
		t.Errorf("diagnosis = %+v", m)
	}
	if m.TokensN != 3 || m.TokensMean != 200 || m.TokensMed != 200 || m.KernelN != 1 || m.UnknownN != 2 {
		t.Errorf("tokens/kernel/unknown = %+v", m)
	}
}

func TestCraneOutcomes(t *testing.T) {
	cases := []*evalCase{
		{ID: "a", Group: "g", Crane: map[string]craneLabels{"gpt5": {"W", "C", "W", "C"}}},
		{ID: "b", Group: "g", Crane: map[string]craneLabels{"gpt5": {"C", "RW", "C", "W"}}},
	}
	m := computeMetrics(craneOutcomes(cases, "gpt5", true))
	// +RT: a buggy C (TP, diagnosed), a fixed C (TN); b buggy RW (TP, misdiagnosed), b fixed W (FP).
	if m.TP != 2 || m.TN != 1 || m.FP != 1 || m.DiagTP != 1 || m.Accuracy != 0.75 || m.DiagAccuracy != 0.5 {
		t.Errorf("+RT = %+v", m)
	}
	m = computeMetrics(craneOutcomes(cases, "gpt5", false))
	if m.TP != 1 || m.FN != 1 || m.TN != 1 || m.FP != 1 {
		t.Errorf("-RT = %+v", m)
	}
}

// fakeLLM answers like a model that knows two cases: a crash with the recorded exception
// and line for the buggy targets, no crash for the fixed ones.
func fakeLLM(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		user := req.Messages[1].Content
		mu.Lock()
		prompts = append(prompts, user)
		mu.Unlock()
		target := user[strings.Index(user, "# Target cell"):]
		answer := `{"reasoning":"fine","crash":false,"confidence":0.2,"line":0,"exception":"","category":"other","explanation":"ok","fix":null}`
		switch {
		case strings.Contains(target, "1| df['Installs']=df['Installs'].astype('int')"):
			answer = `{"reasoning":"'10,000+' is not an int","crash":true,"confidence":0.9,"line":1,"exception":"ValueError","category":"data value","explanation":"x","fix":null}`
		case strings.Contains(target, "zip(numvars"):
			// Right exception, wrong line: detected but not diagnosed.
			answer = `{"reasoning":"numvars undefined","crash":true,"confidence":0.8,"line":2,"exception":"NameError","category":"undefined name","explanation":"x","fix":null}`
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &prompts
}

// TestEvalCodeSettingWithEndpoint runs `premortem eval --setting code` against a fake
// OpenAI-compatible endpoint and checks the table, the CSV and the prompts sent.
func TestEvalCodeSettingWithEndpoint(t *testing.T) {
	srv, prompts := fakeLLM(t)
	t.Setenv("PM_EVAL_TEST_KEY", "k")
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "m.csv")
	instPath := filepath.Join(dir, "i.csv")
	var stdout bytes.Buffer
	o := testOptions("code", "pandas_10", "NBspecific_12")
	o.CSV, o.Instances = csvPath, instPath
	o.Model = "fake"
	o.NewClient = func() (*llm.Client, error) {
		on := true
		return llm.New(llm.Config{Enabled: &on, BaseURL: srv.URL + "/v1", Model: "fake", APIKeyEnv: "PM_EVAL_TEST_KEY", Samples: 1, Timeout: time.Minute})
	}
	if err := Run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	// 4 instances: 2 TP (one diagnosed), 2 TN -> det acc 100, det+diag acc 75.
	if !strings.Contains(out, "| premortem code | 4 | 0 | 0 | 100.0 | 100.0 | 100.0 | 100.0 | 75.0 | 100.0 | 50.0 | 66.7 |") {
		t.Errorf("overall row missing:\n%s", out)
	}
	for _, want := range []string{"CRANE gpt5 +RT", "### per library", "| pandas | 2 |", "### per root cause", "o200k_base"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(*prompts) != 4 {
		t.Errorf("%d prompts sent, want 4", len(*prompts))
	}
	rows := readCSV(t, csvPath)
	if rows[0][0] != "scope" || len(rows) < 5 {
		t.Fatalf("csv = %v", rows)
	}
	found := false
	for _, r := range rows {
		if r[0] == "overall" && r[2] == "premortem code" {
			found = true
			if r[8] != "1.0000" || r[14] != "0.7500" || r[18] == "" {
				t.Errorf("overall csv row = %v", r)
			}
		}
	}
	if !found {
		t.Error("no overall row for premortem code in the CSV")
	}
	inst := readCSV(t, instPath)
	if len(inst) != 1+4+4*len(craneModels)*2 {
		t.Errorf("%d instance rows", len(inst))
	}
}

// TestEvalOfflineCodeSettingPredictsNothing: without an endpoint the code setting builds
// prompts (to count tokens) and predicts no crash.
func TestEvalOfflineCodeSettingPredictsNothing(t *testing.T) {
	var stdout bytes.Buffer
	if err := Run(context.Background(), testOptions("code", "pandas_10"), &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "| premortem code | 2 | 0 | 2 | 50.0 | 0.0 | 0.0 | 0.0 | 50.0 |") {
		t.Errorf("offline row:\n%s", stdout.String())
	}
}

// TestEvalJudgeSettingsUseTheRunner replaces the notebook judge (no kernel here) and checks
// that the runtime and all settings build notebooks and read the verdict's top finding.
func TestEvalJudgeSettingsUseTheRunner(t *testing.T) {
	python.Require(t) // it runs replay.py
	t.Setenv("PREMORTEM_LLM_BASE_URL", "")
	t.Setenv("PREMORTEM_LLM_MODEL", "")
	old := notebookJudge
	t.Cleanup(func() { notebookJudge = old })
	var mu sync.Mutex
	var seen []string
	notebookJudge = func(ctx context.Context, path string, opts judge.CheckOptions) (*judge.Report, error) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s kernel=%v rules=%v shadow=%s", filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), !opts.NoKernel, opts.Rules, opts.Shadow))
		mu.Unlock()
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
		v := &judge.CellVerdict{Verdict: judge.VerdictOK}
		if strings.HasSuffix(path, "buggy.ipynb") {
			v = &judge.CellVerdict{Verdict: judge.VerdictCrash, Findings: []finding.Finding{{Source: finding.SourceShadow, Exception: "ValueError",
				Range: finding.Range{Start: finding.Position{Line: 0}}}}}
		}
		return &judge.Report{Cells: []*judge.CellVerdict{v}}, nil
	}
	var stdout bytes.Buffer
	if err := Run(context.Background(), testOptions("runtime,all", "pandas_10", "NBspecific_1"), &stdout); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	// pandas_10 has synthetic data: judged in a kernel, buggy diagnosed. NBspecific_1 has
	// none: runtime falls back to the (offline) LLM on code, all to the static layer.
	if !strings.Contains(out, "| premortem runtime | 4 | 2 | 2 | 75.0 |") {
		t.Errorf("runtime row:\n%s", out)
	}
	if !strings.Contains(out, "| premortem all | 4 | 2 | 0 | 100.0 |") {
		t.Errorf("all row:\n%s", out)
	}
	joined := strings.Join(seen, "\n")
	for _, want := range []string{"pandas_10/buggy.ipynb kernel=true rules=true shadow=off", "pandas_10/fixed.ipynb kernel=true rules=true shadow=safe",
		"NBspecific_1/buggy.ipynb kernel=false"} {
		if !strings.Contains(joined, want) {
			t.Errorf("judged %s; want %q", joined, want)
		}
	}
}

// TestPromptSizeVsCrane measures premortem's sliced code prompt against CRANE-LLM's exact
// prompt bodies over the development cases and prints the table (go test -v -run
// TestPromptSizeVsCrane ./internal/eval/).
func TestPromptSizeVsCrane(t *testing.T) {
	cases, err := loadCases(testCases, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := measurePromptSizes(cases, filepath.Join(filepath.Dir(testCases), "crane_prompts"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writePromptSizes(&b, sizes)
	t.Log("\n" + b.String())
	ours, crane := 0, 0
	for _, s := range sizes {
		if s.OursUser <= 0 || s.Crane <= 0 || s.CraneRT < s.Crane {
			t.Errorf("implausible sizes %+v", s)
		}
		ours += s.OursUser
		crane += s.Crane
	}
	// Regression guard: slicing must keep the user message well under CRANE-LLM's body.
	if float64(ours) > 0.85*float64(crane) {
		t.Errorf("sliced prompts total %d tokens, %.0f%% of CRANE-LLM's %d", ours, 100*float64(ours)/float64(crane), crane)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return rows
}

// TestRuntimePromptSizes runs the runtime prompt measurement with a stand-in judge that asks
// the (loopback stub) LLM like the real one does, with facts, and checks the table.
func TestRuntimePromptSizes(t *testing.T) {
	python.Require(t) // it runs replay.py
	old := notebookJudge
	t.Cleanup(func() { notebookJudge = old })
	notebookJudge = func(ctx context.Context, path string, opts judge.CheckOptions) (*judge.Report, error) {
		if opts.LLM == nil || opts.NoKernel || !opts.Rules {
			return nil, fmt.Errorf("runtime measurement without LLM, kernel or rules: %+v", opts)
		}
		in := llm.Input{
			Executed: []llm.CellText{{ExecutionOrder: 1, Text: "import pandas as pd"}, {ExecutionOrder: 2, Text: "df = pd.read_csv('x.csv')\ndf.head()"}},
			Target:   llm.CellText{Text: "df['Installs'].astype('int')"},
			Facts: map[string]facts.Value{"df": {Name: "df", Exists: true, Type: "pandas.core.frame.DataFrame", Shape: []int{3, 1},
				Columns: []facts.Column{{Name: "Installs", Dtype: "object"}}}},
			Dependencies: []int{0, 1},
		}
		v, err := opts.LLM.Predict(ctx, in)
		if err != nil || v.Crash {
			return nil, fmt.Errorf("stub answered %+v, %v", v, err)
		}
		return &judge.Report{Cells: []*judge.CellVerdict{{Verdict: judge.VerdictOK}}}, nil
	}
	var stdout bytes.Buffer
	o := testOptions("", "pandas_10", "NBspecific_1")
	o.PromptSizeRuntime = true
	if err := Run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"(2 instances run in a kernel)", "| premortem user message (sliced cells, facts, numbered target) |",
		"| premortem runtime (static+rules, no LLM) | 2 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDumpPromptReportsFailure: --dump-prompts into a place that cannot hold a folder is an
// error the user sees, not a run that silently writes nothing.
func TestDumpPromptReportsFailure(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dumpPrompt(filepath.Join(blocker, "sub"), "a.txt", "x"); err == nil || !strings.Contains(err.Error(), "--dump-prompts") {
		t.Fatalf("dumpPrompt under a file: %v", err)
	}
	if err := dumpPrompt(filepath.Join(dir, "ok"), "a.txt", "x"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ok", "a.txt")); err != nil || string(b) != "x" {
		t.Fatalf("dumped %q %v", b, err)
	}
}

// TestPlainNotebook: the notebook built for judging without a kernel reads back as the
// case: executed cells in order with their run counts, then the target, never run.
func TestPlainNotebook(t *testing.T) {
	cases, err := loadCases(testCases, "", "", []string{"pandas_10"})
	if err != nil || len(cases) != 1 {
		t.Fatalf("loadCases: %v %v", cases, err)
	}
	h := &harness{work: t.TempDir()}
	path, err := h.plainNotebook(cases[0], versionBuggy)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := notebook.ParseIpynb(b, path)
	if err != nil {
		t.Fatal(err)
	}
	v := cases[0].Versions[versionBuggy]
	if len(nb.Cells) != len(v.Executed)+1 || nb.KernelName() != "python3" {
		t.Fatalf("%d cells, kernel %q; want %d cells, python3", len(nb.Cells), nb.KernelName(), len(v.Executed)+1)
	}
	for i, e := range v.Executed {
		if c := nb.Cells[i]; c.Text != e.Code || c.ExecutionOrder != i+1 || c.Kind != notebook.Code {
			t.Errorf("cell %d = %q run %d, want %q run %d", i, c.Text, c.ExecutionOrder, e.Code, i+1)
		}
	}
	if last := nb.Cells[len(v.Executed)]; last.Text != v.Target.Code || last.Executed() {
		t.Errorf("target cell = %q run %d, want %q never run", last.Text, last.ExecutionOrder, v.Target.Code)
	}
}
