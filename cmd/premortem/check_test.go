package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/premortem/premortem/internal/report"
	"github.com/premortem/premortem/internal/testkit/python"
)

var demoNotebook = filepath.Join("..", "..", "testdata", "demo", "demo.ipynb")

// checkRun runs `premortem check args...` in process.
func checkRun(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(append([]string{"check"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func checkNeedsKernel(t *testing.T) {
	t.Helper()
	python.Require(t, "ipykernel")
}

// TestCheckUsageErrors: exit 2, a message on stderr, nothing on stdout; no kernel needed.
func TestCheckUsageErrors(t *testing.T) {
	md := filepath.Join(t.TempDir(), "broken.ipynb")
	if err := os.WriteFile(md, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not regular files: refused before reading, so a FIFO cannot block and a device
	// cannot be read without end.
	fifo := filepath.Join(t.TempDir(), "fifo.ipynb")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(t.TempDir(), "zero.ipynb")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	dirNB := filepath.Join(t.TempDir(), "folder.ipynb")
	if err := os.Mkdir(dirNB, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"fifo notebook", []string{fifo, "--static"}, "is a FIFO (named pipe), not a regular file"},
		{"device notebook", []string{zero, "--static"}, "is a character device, not a regular file"},
		{"directory notebook", []string{dirNB, "--static"}, "is a directory, not a regular file"},
		{"no notebook", nil, "usage: premortem check"},
		{"two notebooks", []string{demoNotebook, "other.ipynb"}, "usage: premortem check"},
		{"unknown flag", []string{demoNotebook, "--frobnicate"}, "frobnicate"},
		{"bad format", []string{demoNotebook, "--format", "xml"}, `--format "xml"`},
		{"bad shadow mode", []string{demoNotebook, "--shadow", "sometimes"}, `--shadow "sometimes"`},
		{"bad cell value", []string{demoNotebook, "--cell", "two"}, "0-based cell index"},
		{"missing file", []string{"no/such/notebook.ipynb"}, "no such file"},
		{"unreadable notebook", []string{md}, "read"},
		{"cell out of range", []string{demoNotebook, "--cell", "99", "--static"}, "--cell 99"},
		{"markdown cell", []string{demoNotebook, "--cell", "0", "--static"}, "not a code cell"},
		{"llm without endpoint", []string{demoNotebook, "--llm", "--llm-base-url", "", "--llm-model", ""}, "--llm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := checkRun(tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
		})
	}
}

// TestCheckStatic runs the static layer only: the demo's NameError is certain from the
// text alone, so the exit code is 1 with no kernel at all.
func TestCheckStatic(t *testing.T) {
	code, stdout, stderr := checkRun(demoNotebook, "--static", "--format", "json", "--cell", "8")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "replaying") {
		t.Errorf("--static replayed cells: %s", stderr)
	}
	rep := decodeReport(t, stdout)
	if len(rep.Cells) != 1 || rep.Cells[0].Index != 8 || rep.Cells[0].Verdict != "crash" {
		t.Fatalf("cells = %+v", rep.Cells)
	}
	f := rep.Cells[0].Findings[0]
	if f.Source != "static" || f.Code != "undefined-name" || f.Line != 1 || f.Column != 7 || f.EndColumn != 14 {
		t.Errorf("finding = %+v", f)
	}
}

// TestCheckDemo is the README's first command, end to end with a real kernel, in every
// format: the right cell, line, marked expression, evidence and fix for each crash, and no
// false alarm on the clean cells.
func TestCheckDemo(t *testing.T) {
	checkNeedsKernel(t)
	code, stdout, stderr := checkRun(demoNotebook, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr %s", code, stderr)
	}
	for _, w := range []string{"replaying cell 2 (run 1) [1/3]", "judging cell 12"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("progress on stderr lacks %q:\n%s", w, stderr)
		}
	}
	checkJSONShape(t, stdout)
	rep := decodeReport(t, stdout)
	if rep.Kernel.Name != "python3" || !strings.HasPrefix(rep.Kernel.LanguageVersion, "3.") {
		t.Errorf("kernel = %+v", rep.Kernel)
	}
	type want struct {
		verdict, code, exception string
		line, column, endColumn  int
		fix                      string
	}
	wants := map[int]want{
		5:  {"crash", "missing-column", "KeyError", 1, 15, 20, "Use column 'Age' (verified: the cell runs)"},
		6:  {"crash", "not-fitted", "NotFittedError", 1, 15, 22, ""},
		7:  {"crash", "", "RuntimeError", 2, 0, 0, ""},
		8:  {"crash", "undefined-name", "NameError", 1, 7, 14, ""},
		9:  {"ok", "", "", 0, 0, 0, ""},
		10: {"crash", "", "KeyError", 1, 23, 30, ""},
		11: {"ok", "", "", 0, 0, 0, ""},
	}
	var got []int
	for _, c := range rep.Cells {
		got = append(got, c.Index)
		w, ok := wants[c.Index]
		if !ok {
			t.Errorf("judged cell %d, which has run", c.Index)
			continue
		}
		if c.Verdict != w.verdict {
			t.Errorf("cell %d: verdict %s, want %s (%+v)", c.Index, c.Verdict, w.verdict, c.Findings)
			continue
		}
		if w.verdict != "crash" {
			for _, f := range c.Findings {
				if f.Severity == "error" {
					t.Errorf("cell %d: false alarm %+v", c.Index, f)
				}
			}
			continue
		}
		f := c.Findings[0]
		if f.Source != "shadow" || f.Exception != w.exception || f.Line != w.line || (w.code != "" && f.Code != w.code) ||
			(w.column != 0 && (f.Column != w.column || f.EndColumn != w.endColumn)) {
			t.Errorf("cell %d: first finding %+v, want %+v", c.Index, f, w)
		}
		if len(f.Evidence) < 2 || !strings.Contains(f.Evidence[0], "shadow run") {
			t.Errorf("cell %d: evidence %q", c.Index, f.Evidence)
		}
		if w.fix != "" && (f.Fix == nil || f.Fix.Title != w.fix || len(f.Fix.Edits) != 1 || f.Fix.Edits[0].NewText != `"Age"`) {
			t.Errorf("cell %d: fix %+v, want %q", c.Index, f.Fix, w.fix)
		}
		for i, g := range c.Findings {
			for _, h := range c.Findings[i+1:] {
				if g.Line == h.Line && g.Exception == h.Exception && g.Exception != "" {
					t.Errorf("cell %d: the same crash twice: %+v and %+v", c.Index, g, h)
				}
			}
		}
	}
	if !sort.IntsAreSorted(got) || len(got) != len(wants) {
		t.Errorf("judged cells %v, want %d cells in order", got, len(wants))
	}
}

// TestCheckFormats covers text and SARIF output, --cell, --no-shadow and exit 0.
func TestCheckFormats(t *testing.T) {
	checkNeedsKernel(t)
	t.Run("text", func(t *testing.T) {
		code, stdout, stderr := checkRun(demoNotebook, "--cell", "5", "--cell", "11", "--quiet")
		if code != 1 || stderr != "" {
			t.Fatalf("exit %d, stderr %q (want 1 and silence with --quiet)", code, stderr)
		}
		for _, w := range []string{
			"2 cells judged, 1 will crash",
			"cell 6 (index 5): will crash",
			`       1 | mean_age = df["age"].mean()`,
			"         |               ^^^^^",
			"evidence: shadow run: KeyError at line 1",
			"fix: Use column 'Age'",
			`+ mean_age = df["Age"].mean()`,
			"cell 12 (index 11): no crash predicted",
		} {
			if !strings.Contains(stdout, w) {
				t.Errorf("text output lacks %q:\n%s", w, stdout)
			}
		}
	})
	t.Run("sarif no-shadow", func(t *testing.T) {
		code, stdout, stderr := checkRun(demoNotebook, "--cell", "6", "--no-shadow", "--format", "sarif")
		if code != 1 {
			t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
		}
		var log map[string]any
		if err := json.Unmarshal([]byte(stdout), &log); err != nil {
			t.Fatalf("SARIF is not JSON: %v\n%s", err, stdout)
		}
		if log["version"] != "2.1.0" || log["$schema"] == nil {
			t.Errorf("version/$schema = %v/%v", log["version"], log["$schema"])
		}
		runs, _ := log["runs"].([]any)
		if len(runs) != 1 {
			t.Fatalf("runs = %v", log["runs"])
		}
		r0 := runs[0].(map[string]any)
		driver := r0["tool"].(map[string]any)["driver"].(map[string]any)
		if driver["name"] != "premortem" {
			t.Errorf("driver = %v", driver)
		}
		results := r0["results"].([]any)
		if len(results) == 0 {
			t.Fatal("no results")
		}
		raw, err := os.ReadFile(demoNotebook)
		if err != nil {
			t.Fatal(err)
		}
		fileLines := strings.Split(string(raw), "\n")
		for _, x := range results {
			res := x.(map[string]any)
			msg := res["message"].(map[string]any)["text"].(string)
			if res["ruleId"] == "" || msg == "" || res["level"] != "error" {
				t.Errorf("result %v", res)
			}
			props := res["properties"].(map[string]any)
			if props["source"] == "shadow" {
				t.Errorf("--no-shadow result from the shadow layer: %v", res)
			}
			loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
			if loc["artifactLocation"].(map[string]any)["uri"] != demoNotebook {
				t.Errorf("artifact %v", loc["artifactLocation"])
			}
			reg := loc["region"].(map[string]any)
			l, c0, c1 := int(reg["startLine"].(float64)), int(reg["startColumn"].(float64)), int(reg["endColumn"].(float64))
			// The region points into the .ipynb file itself, at the marked expression.
			if l < 1 || l > len(fileLines) || c1 > len(fileLines[l-1])+1 || fileLines[l-1][c0-1:c1-1] != "predict" {
				t.Errorf("region %v does not mark 'predict' in the notebook file", reg)
			}
		}
	})
	t.Run("exit 0", func(t *testing.T) {
		code, stdout, stderr := checkRun(demoNotebook, "--cell", "9", "--cell", "11", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
		}
	})
	t.Run("unknown kernel", func(t *testing.T) {
		code, stdout, stderr := checkRun(demoNotebook, "--kernel", "no-such-kernel-premortem")
		if code != 2 || stdout != "" || !strings.Contains(stderr, "no-such-kernel-premortem") || !strings.Contains(stderr, "--kernel") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}

// TestCheckReplayTimeout: a replayed cell that runs too long is interrupted, the replay
// stops and says so, and the target is still judged.
func TestCheckReplayTimeout(t *testing.T) {
	checkNeedsKernel(t)
	dir := t.TempDir()
	nb := `{"cells": [
 {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["x = 1"]},
 {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": ["import time\n", "time.sleep(60)\n", "y = 2"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["print(x + 1)"]}
], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	path := filepath.Join(dir, "slow.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := checkRun(path, "--timeout", "2s", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	rep := decodeReport(t, stdout)
	if rep.Replay == nil || rep.Replay.Replayed != 1 || !strings.Contains(rep.Replay.Error, "cell 2 (run 2)") || !strings.Contains(rep.Replay.Error, "interrupted") {
		t.Errorf("replay = %+v", rep.Replay)
	}
	if len(rep.Cells) != 1 || rep.Cells[0].Verdict != "ok" {
		t.Errorf("cells = %+v", rep.Cells)
	}
	if !strings.Contains(stderr, "replay stopped at cell 2") {
		t.Errorf("stderr lacks the replay stop: %s", stderr)
	}
}

func decodeReport(t *testing.T, s string) report.JSONReport {
	t.Helper()
	var rep report.JSONReport
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, s)
	}
	return rep
}

// checkJSONShape holds the output to docs/check-json.md's contract: the documented keys with
// their JSON types (fields beyond them are additions the contract allows readers to ignore).
func checkJSONShape(t *testing.T, s string) {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal([]byte(s), &top); err != nil {
		t.Fatal(err)
	}
	need := func(obj map[string]any, where string, keys map[string]string) {
		for k, typ := range keys {
			v, ok := obj[k]
			if !ok {
				t.Errorf("%s: no %q", where, k)
				continue
			}
			got := reflect.TypeOf(v).Kind().String()
			switch v.(type) {
			case map[string]any:
				got = "object"
			case []any:
				got = "array"
			case float64:
				got = "number"
			}
			if got != typ {
				t.Errorf("%s.%s is %s, want %s", where, k, got, typ)
			}
		}
	}
	need(top, "report", map[string]string{"notebook": "string", "kernel": "object", "cells": "array"})
	need(top["kernel"].(map[string]any), "kernel", map[string]string{"name": "string", "language_version": "string"})
	for _, c := range top["cells"].([]any) {
		cell := c.(map[string]any)
		need(cell, "cell", map[string]string{"index": "number", "verdict": "string", "confidence": "number", "findings": "array"})
		if v := cell["verdict"]; v != "crash" && v != "ok" && v != "unknown" {
			t.Errorf("verdict %v", v)
		}
		for _, f := range cell["findings"].([]any) {
			fm := f.(map[string]any)
			need(fm, "finding", map[string]string{"source": "string", "severity": "string", "code": "string", "message": "string",
				"line": "number", "column": "number", "end_line": "number", "end_column": "number"})
			if fm["line"].(float64) < 1 || fm["column"].(float64) < 1 {
				t.Errorf("finding lines and columns are 1-based: %v", fm)
			}
			if fx, ok := fm["fix"].(map[string]any); ok {
				need(fx, "fix", map[string]string{"title": "string", "verified": "bool", "edits": "array"})
				for _, e := range fx["edits"].([]any) {
					need(e.(map[string]any), "edit", map[string]string{"cell": "number", "line": "number", "column": "number", "end_line": "number", "end_column": "number", "new_text": "string"})
				}
			}
		}
	}
}

// TestCheckReplayErrors: a replayed cell that raises stops the replay and is reported,
// unless its saved output shows it raised the same way when the user ran it (then the
// user went on, and so does the replay).
func TestCheckReplayErrors(t *testing.T) {
	checkNeedsKernel(t)
	write := func(outputs string) string {
		nb := `{"cells": [
 {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [` + outputs + `], "source": ["ratio = 1 / 0"]},
 {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": ["x = 5"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["print(x + 1)"]}
], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
		path := filepath.Join(t.TempDir(), "errors.ipynb")
		if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("unexpected error stops the replay", func(t *testing.T) {
		code, stdout, stderr := checkRun(write(""), "--format", "json", "--no-shadow")
		rep := decodeReport(t, stdout)
		if rep.Replay == nil || rep.Replay.Replayed != 1 || !strings.Contains(rep.Replay.Error, "cell 1 (run 1): ZeroDivisionError") {
			t.Errorf("replay = %+v", rep.Replay)
		}
		// x comes from a cell the replay never reached: no crash is claimed for the target.
		if code == 1 || len(rep.Cells) != 1 || rep.Cells[0].Verdict == "crash" {
			t.Errorf("exit %d, cells %+v\n%s", code, rep.Cells, stderr)
		}
	})
	t.Run("recorded error replays on", func(t *testing.T) {
		saved := `{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": []}`
		code, stdout, stderr := checkRun(write(saved), "--format", "json")
		rep := decodeReport(t, stdout)
		if code != 0 || rep.Replay == nil || rep.Replay.Replayed != 2 || rep.Replay.Error != "" || rep.Cells[0].Verdict != "ok" {
			t.Errorf("exit %d, replay %+v, cells %+v\n%s", code, rep.Replay, rep.Cells, stderr)
		}
		if !strings.Contains(stderr, "replay goes on") {
			t.Errorf("stderr %q", stderr)
		}
	})
}

// TestCheckForeignKernelspec: a notebook saved with another machine's kernelspec name is
// checked with python3, and stderr says so; an explicit --kernel is never replaced.
func TestCheckForeignKernelspec(t *testing.T) {
	checkNeedsKernel(t)
	nb := `{"cells": [
 {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["d = {'a': 1}"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["v = d['b']"]}
], "metadata": {"kernelspec": {"name": "conda-env-nowhere-py", "display_name": "Python [conda env:nowhere]", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	path := filepath.Join(t.TempDir(), "foreign.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := checkRun(path, "--format", "json", "--cell", "1", "--cell", "1")
	if code != 1 || !strings.Contains(stderr, `no kernelspec "conda-env-nowhere-py"`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	rep := decodeReport(t, stdout)
	if rep.Kernel.Name != "python3" || len(rep.Cells) != 1 || rep.Cells[0].Findings[0].Exception != "KeyError" {
		t.Errorf("kernel %+v, cells %+v", rep.Kernel, rep.Cells)
	}
}

// TestCheckLLM: --llm adds the LLM layer's prediction (here from a fake OpenAI-compatible
// endpoint), with its source, and its crash makes the exit code 1.
func TestCheckLLM(t *testing.T) {
	answer := `{"reasoning":"x has 3 columns, the layer wants 4","crash":true,"confidence":0.9,"line":2,"exception":"RuntimeError","category":"shape","explanation":"Linear(4, 1) on 3 features","fix":null}`
	var prompts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompts++
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	defer srv.Close()
	t.Setenv("PM_CHECK_TEST_KEY", "k")
	code, stdout, stderr := checkRun(demoNotebook, "--static", "--cell", "7", "--format", "json", "--llm",
		"--llm-base-url", srv.URL+"/v1", "--llm-model", "fake", "--llm-api-key-env", "PM_CHECK_TEST_KEY")
	if code != 1 || prompts != 1 {
		t.Fatalf("exit %d after %d prompts\n%s\n%s", code, prompts, stdout, stderr)
	}
	rep := decodeReport(t, stdout)
	f := rep.Cells[0].Findings
	if len(f) == 0 || f[0].Source != "llm" || f[0].Exception != "RuntimeError" || f[0].Line != 2 || f[0].Explanation == "" {
		t.Errorf("findings %+v", f)
	}
}

// TestCheckHelp: asking for help is not an error.
func TestCheckHelp(t *testing.T) {
	code, stdout, stderr := checkRun("-h")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "-shadow-timeout") || !strings.Contains(stderr, "count from 0") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestCheckSequential: a notebook saved with cleared outputs. Judged cell by cell against
// the empty kernel, every cell that needs an earlier one would crash; with --sequential the
// cells are met as a top-to-bottom run meets them, and only the real crash is reported.
func TestCheckSequential(t *testing.T) {
	checkNeedsKernel(t)
	nb := `{"cells": [
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["import numpy as np\n", "a = np.ones(3)"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["b = a * 2"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["c = b.reshape(2, 2)"]}
], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	path := filepath.Join(t.TempDir(), "cleared.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	verdicts := func(args ...string) []string {
		code, stdout, stderr := checkRun(append([]string{path, "--format", "json"}, args...)...)
		if code != 1 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		var out []string
		for _, c := range decodeReport(t, stdout).Cells {
			out = append(out, c.Verdict)
		}
		return out
	}
	if got := verdicts("--sequential", "--no-shadow"); !reflect.DeepEqual(got, []string{"ok", "ok", "crash"}) {
		t.Errorf("--sequential verdicts %v, want ok ok crash", got)
	}
	if got := verdicts(); !reflect.DeepEqual(got, []string{"ok", "crash", "crash"}) {
		t.Errorf("cell-by-cell verdicts %v, want ok crash crash", got)
	}
	// With every layer, the crash the rules predict gets the full judging: its fix is
	// proven in a copy of the kernel (the rules' own pass, without shadow runs, proves
	// nothing and must not count as the verification).
	renamed := `{"cells": [
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["import pandas as pd\n", "df = pd.DataFrame({'SalePrice': [1.0, 2.0], 'x': [3, 4]})"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["df = df.rename(columns={'SalePrice': 'price'})"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["p = df['SalePrice'].mean()"]}
], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	path = filepath.Join(t.TempDir(), "renamed.ipynb")
	if err := os.WriteFile(path, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := checkRun(path, "--format", "json", "--sequential")
	if code != 1 {
		t.Fatalf("--sequential: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cells := decodeReport(t, stdout).Cells
	var verified bool
	if len(cells) == 3 {
		for _, f := range cells[2].Findings {
			verified = verified || (f.Severity == "error" && f.Fix != nil && f.Fix.Verified)
		}
	}
	if len(cells) != 3 || cells[0].Verdict != "ok" || cells[1].Verdict != "ok" || cells[2].Verdict != "crash" || !verified {
		t.Errorf("--sequential with every layer: want ok, ok, crash with a verified fix; got\n%s", stdout)
	}
}

// TestCheckReplayTimeoutKernelStuck: a replayed cell past --timeout whose kernel ignores the
// interrupt leaves the kernel busy for good: no verdict can be reached, so exit 2 with the
// reason on stderr and nothing on stdout.
func TestCheckReplayTimeoutKernelStuck(t *testing.T) {
	checkNeedsKernel(t)
	nb := `{"cells": [
 {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["import signal, time\n", "signal.signal(signal.SIGINT, signal.SIG_IGN)\n", "time.sleep(60)"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["print(1)"]}
], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	path := filepath.Join(t.TempDir(), "stuck.ipynb")
	if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := checkRun(path, "--timeout", "1s")
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, want 2 and nothing\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "cell 1 (run 1) ran longer than 1s (--timeout) and the kernel was still busy") || !strings.Contains(stderr, "raise --timeout") {
		t.Errorf("stderr %s", stderr)
	}
}

// TestCheckSequentialTakeBack: under --sequential a cell runs for real as soon as the rules
// predict no crash; one that raises anyway is taken back (a new kernel replays what ran
// before it) and judged against the state before it, so the cells below see the state a
// run without it has, not what it changed before raising. A cell that kills the kernel is
// a crash, and the check goes on in a new kernel.
func TestCheckSequentialTakeBack(t *testing.T) {
	checkNeedsKernel(t)
	write := func(cells ...string) string {
		var src []string
		for _, c := range cells {
			b, _ := json.Marshal(c)
			src = append(src, `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": `+string(b)+`}`)
		}
		path := filepath.Join(t.TempDir(), "cleared.ipynb")
		nb := `{"cells": [` + strings.Join(src, ",") + `], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
		if err := os.WriteFile(path, []byte(nb), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	type cell struct {
		verdict, code string
		line          int
	}
	judged := func(path string) []cell {
		code, stdout, stderr := checkRun(path, "--sequential", "--format", "json")
		if code != 1 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		var out []cell
		for _, c := range decodeReport(t, stdout).Cells {
			got := cell{verdict: c.Verdict}
			for _, f := range c.Findings {
				if f.Severity == "error" {
					got.code, got.line = f.Code, f.Line
					break
				}
			}
			out = append(out, got)
		}
		return out
	}
	raised := write(
		"state = {'n': 0}",
		"import json\nstate['n'] += 1\njson.loads('{not json')",
		"assert state['n'] == 0, state\nm = 1",
		"z = m + state['n']",
	)
	if got, want := judged(raised), []cell{{"ok", "", 0}, {"crash", "json-decode-error", 3}, {"ok", "", 0}, {"ok", "", 0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("a cell that raised when run: got %v, want %v", got, want)
	}
	died := write(
		"x = 1",
		"import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
		"y = x + 1",
	)
	got := judged(died)
	if len(got) != 3 || got[0].verdict != "ok" || got[1].verdict != "crash" || got[2].verdict != "ok" {
		t.Errorf("a cell that killed the kernel: got %v, want ok, crash, ok", got)
	}
	// A real run past --timeout is interrupted: unknown for that reason, and the check goes on.
	slow := write("x = 1", "import time\ntime.sleep(60)", "y = x + 1")
	code, stdout, stderr := checkRun(slow, "--sequential", "--timeout", "2s", "--format", "json")
	if code != 0 {
		t.Fatalf("a cell past --timeout: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cells := decodeReport(t, stdout).Cells
	if len(cells) != 3 || cells[1].Verdict != "unknown" || !strings.Contains(cells[1].Reason, "--timeout") || cells[2].Verdict != "ok" {
		t.Errorf("a cell past --timeout: want ok, unknown (--timeout), ok; got\n%s", stdout)
	}
}
