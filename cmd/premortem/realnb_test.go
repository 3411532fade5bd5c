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
	python.Require(t, "statsmodels.api") // scripts/install-deps.sh installs it
	nbs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "realnb", "*", "*.ipynb"))
	if err != nil || len(nbs) == 0 {
		t.Fatalf("no notebooks under testdata/realnb: %v", err)
	}
	modes := []struct {
		name  string
		flags []string
	}{
		{"every layer", nil},
		{"rules alone", []string{"--no-shadow"}},
	}
	for _, nb := range nbs {
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
}
