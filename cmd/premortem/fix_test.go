package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/notebook"
)

// writeFixNotebook writes a notebook with executed cells (counts 1..n) and unrun targets.
func writeFixNotebook(t *testing.T, ran []string, targets ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "houses.ipynb")
	nb := notebook.NewPython(path)
	for i, src := range ran {
		nb.AddCode(src, i+1)
	}
	for _, src := range targets {
		nb.AddCode(src, 0)
	}
	b, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var fixNotebookCells = []string{
	"import pandas as pd\nhouses = pd.DataFrame({'town': ['a', 'b', 'a'], 'sqft': [70.0, 90.0, 110.0]})\nhouses = houses.rename(columns={'sqft': 'area'})",
	"import torch\nimport torch.nn as nn\nX = torch.randn(8, 3)",
	"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)\n\n    def forward(self, x):\n        return self.fc(x)",
	"model = Net()",
}

// TestFixCommand: `premortem fix` applies the verified fix of each crashing cell (one in the
// target, one in the earlier cell that defines a module), prints what it changed, writes
// the notebook with -o and leaves the input alone; the fixed notebook then checks clean.
func TestFixCommand(t *testing.T) {
	checkNeedsKernel(t)
	path := writeFixNotebook(t, fixNotebookCells, "print(houses.groupby('town')['sqft'].mean())", "out = model(X)\nprint(out.shape)")
	before, _ := os.ReadFile(path)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"fix", path, "--quiet"}, &stdout, &stderr); code != 0 {
		t.Fatalf("fix (dry run) exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "nothing written") {
		t.Errorf("dry run output lacks 'nothing written':\n%s", stdout.String())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a dry run changed the notebook")
	}

	out := filepath.Join(filepath.Dir(path), "fixed.ipynb")
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"fix", path, "-o", out, "--quiet"}, &stdout, &stderr); code != 0 {
		t.Fatalf("fix exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"2 will crash, 2 fixed with a verified fix", "Use column 'area' instead of 'sqft' (verified: the cell runs)",
		"Set in_features to 3 in cell 3", "edited cell 3 (index 2): run it again", "wrote " + out} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("fix output lacks %q:\n%s", want, stdout.String())
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("-o changed the input notebook")
	}
	nb, err := notebook.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := nb.Cells[4].Text; got != "print(houses.groupby('town')['area'].mean())" {
		t.Errorf("target cell now %q", got)
	}
	if got := nb.Cells[2].Text; !strings.Contains(got, "nn.Linear(3, 1)") {
		t.Errorf("module cell now %q", got)
	}
	if nb.Cells[2].ExecutionOrder != 3 || nb.Cells[4].ExecutionOrder != 0 {
		t.Errorf("execution counts changed: %d, %d", nb.Cells[2].ExecutionOrder, nb.Cells[4].ExecutionOrder)
	}
	// The fixed notebook, replayed from scratch: its first target runs clean. (The second
	// needs the edited module cell to run again; a replay does exactly that.)
	if code, so, se := checkRun(out, "--format", "json", "--quiet", "--cell", "4", "--cell", "5"); code != 0 {
		t.Errorf("check of the fixed notebook: exit %d\n%s\n%s", code, so, se)
	}
}

// TestCheckSARIFFixes: SARIF carries verified fixes as artifactChanges whose regions lie on
// the cell's line inside the .ipynb, with the replacement JSON-escaped.
func TestCheckSARIFFixes(t *testing.T) {
	checkNeedsKernel(t)
	path := writeFixNotebook(t, fixNotebookCells[:1], "print(houses.groupby('town')['sqft'].mean())")
	code, stdout, stderr := checkRun(path, "--format", "sarif", "--quiet")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Fixes []struct {
					Description     struct{ Text string }
					Properties      map[string]any
					ArtifactChanges []struct {
						ArtifactLocation struct{ URI string }
						Replacements     []struct {
							DeletedRegion   struct{ StartLine, StartColumn, EndLine, EndColumn int }
							InsertedContent struct{ Text string }
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 || len(log.Runs[0].Results[0].Fixes) == 0 {
		t.Fatalf("no SARIF fix:\n%s", stdout)
	}
	fx := log.Runs[0].Results[0].Fixes[0]
	if fx.Properties["verified"] != true || !strings.HasSuffix(fx.Description.Text, "(verified: the cell runs)") {
		t.Errorf("fix %+v, want a verified one", fx)
	}
	r := fx.ArtifactChanges[0].Replacements[0]
	raw, _ := os.ReadFile(path)
	lines := strings.Split(string(raw), "\n")
	line := lines[r.DeletedRegion.StartLine-1]
	if got := line[r.DeletedRegion.StartColumn-1 : r.DeletedRegion.EndColumn-1]; got != "'sqft'" || r.InsertedContent.Text != "'area'" {
		t.Errorf("replacement of %q by %q, want 'sqft' by 'area' (line %q)", got, r.InsertedContent.Text, line)
	}
}

// TestFixRunFlagsShared: check and fix take the same run flags, with the same defaults and the
// same checks of their values (one definition, runFlags); no kernel needed.
func TestFixRunFlagsShared(t *testing.T) {
	defaults := map[string]string{}
	for _, cmd := range []string{"check", "fix"} {
		var out, errb bytes.Buffer
		if code := run([]string{cmd, "-h"}, &out, &errb); code != 0 {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		// PrintDefaults prints each flag as "  -name type" then its indented help, which
		// ends with "(default V)" when V is not the zero value.
		blocks := map[string]string{}
		for _, b := range strings.Split(errb.String(), "\n  -")[1:] {
			name, _, _ := strings.Cut(strings.Fields(b)[0], "\n")
			blocks[name] = b
		}
		for _, name := range []string{"cell", "kernel", "timeout", "quiet", "shadow-timeout", "shadow-sandbox", "shadow-full-timeout", "fast-dev-run"} {
			b, ok := blocks[name]
			if !ok {
				t.Errorf("%s -h lacks -%s:\n%s", cmd, name, errb.String())
				continue
			}
			def := ""
			if _, after, ok := strings.Cut(b, "(default "); ok {
				def, _, _ = strings.Cut(after, ")")
			}
			if prev, ok := defaults[name]; ok && prev != def {
				t.Errorf("-%s: check's default %q, fix's %q", name, prev, def)
			}
			defaults[name] = def
		}
		for _, bad := range []struct {
			args []string
			want string
		}{
			{[]string{demoNotebook, "--shadow-sandbox", "none"}, `--shadow-sandbox "none": want auto or fallback`},
			{[]string{demoNotebook, "--fast-dev-run", "-1"}, "--fast-dev-run -1: want 0 (off)"},
			{[]string{demoNotebook, "--cell", "x"}, "0-based cell index"},
		} {
			var out, errb bytes.Buffer
			code := run(append([]string{cmd}, bad.args...), &out, &errb)
			if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), bad.want) {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q (want 2 and %q)", cmd, bad.args, code, out.String(), errb.String(), bad.want)
			}
		}
	}
	if defaults["shadow-timeout"] != "30s" || defaults["fast-dev-run"] != "3" || defaults["timeout"] != "10m0s" || defaults["shadow-sandbox"] != `"auto"` {
		t.Errorf("defaults %q", defaults)
	}
}
