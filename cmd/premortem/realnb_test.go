package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/internal/report"
	"github.com/premortem/premortem/internal/testkit/python"
)

// TestRealNotebooks is the real-notebook false-alarm suite (testdata/realnb): documentation
// notebooks that run clean, judged top to bottom as a user who runs them meets them, with
// every layer and with the rules alone. A crash predicted for any cell is a false alarm.
func TestRealNotebooks(t *testing.T) {
	checkNeedsKernel(t)
	libs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "realnb", "*", "*.ipynb"))
	if err != nil || len(libs) == 0 {
		t.Fatalf("no notebooks under testdata/realnb: %v", err)
	}
	byLib := map[string][]string{}
	var order []string
	for _, nb := range libs {
		dir := filepath.Dir(nb)
		if _, ok := byLib[dir]; !ok {
			order = append(order, dir)
		}
		byLib[dir] = append(byLib[dir], nb)
	}
	for _, dir := range order {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// Each library's folder says what its notebooks import (scripts/install-deps.sh
			// installs it), so a machine without one library still judges the others.
			python.Require(t, libRequires(t, dir)...)
			for _, nb := range byLib[dir] {
				judgeRealNotebook(t, nb)
			}
		})
	}
}

// libRequires reads the modules a library folder's notebooks need from its REQUIRES file
// (one module a line, # comments); without the file, the folder's name is the module.
func libRequires(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "REQUIRES"))
	if os.IsNotExist(err) {
		return []string{filepath.Base(dir)}
	}
	if err != nil {
		t.Fatalf("read %s/REQUIRES: %v", dir, err)
	}
	var mods []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			mods = append(mods, line)
		}
	}
	return mods
}

// judgeRealNotebook checks one notebook top to bottom in both modes; a crash predicted for
// any cell is a false alarm.
func judgeRealNotebook(t *testing.T, nb string) {
	t.Helper()
	modes := []struct {
		name  string
		flags []string
	}{
		{"every layer", nil},
		{"rules alone", []string{"--no-shadow"}},
	}
	for _, m := range modes {
		t.Run(filepath.Base(nb)+"/"+m.name, func(t *testing.T) {
			// --sequential runs the cells for real: in a copy, so testdata stays as it is.
			dir := t.TempDir()
			data, err := os.ReadFile(nb)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.Base(nb))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"check", path, "--sequential", "--format", "json", "--quiet"}, m.flags...)
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != 0 && code != 1 {
				t.Fatalf("exit %d: %s", code, strings.TrimSpace(stderr.String()))
			}
			var rep report.JSONReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("decode report: %v", err)
			}
			if len(rep.Cells) == 0 {
				t.Fatal("no cell judged")
			}
			for _, c := range rep.Cells {
				if c.Verdict != "crash" {
					continue
				}
				for _, f := range c.Findings {
					if f.Severity == "error" {
						t.Errorf("false alarm on cell %d (it runs clean): %s: %s", c.Index, f.Code, f.Message)
					}
				}
			}
			if code != 0 {
				t.Errorf("exit %d: a crash predicted on a notebook that runs clean", code)
			}
		})
	}
}
