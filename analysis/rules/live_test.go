package rules_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/kernel"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/kernelclient"
)

var update = flag.Bool("update", false, "rewrite the facts.json sections of scenarios with a setup.py from a real kernel")

// TestLiveScenarios runs the scenarios that carry a setup.py in one real kernel: reset,
// run the setup, inspect rules.Wanted(cell), check, and compare with the markers. Then it
// runs the cell itself: a scenario with an error marker must raise exactly that exception,
// and one without markers must run cleanly, so the expectations are the kernel's truth.
func TestLiveScenarios(t *testing.T) {
	k := kernel.Start(t, kernelclient.LaunchOptions{}, "pandas", "sklearn", "torch")
	// All live scenarios take minutes on a shared machine: by default every fourth one runs
	// (about 30); -update or PREMORTEM_LIVE_ALL=1 runs them all.
	all := *update || os.Getenv("PREMORTEM_LIVE_ALL") != ""
	ran, seen := 0, 0
	for _, path := range scenarioFiles(t) {
		sc := parseScenario(t, path)
		if sc.setup == "" {
			continue
		}
		seen++
		if !all && seen%4 != 1 {
			continue
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(path), testkitscenario.Ext), func(t *testing.T) {
			exec := func(code string) *kernelclient.ExecuteResult {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				res, err := k.Execute(ctx, code)
				if err != nil {
					t.Fatalf("execute: %v", err)
				}
				return res
			}
			exec("%reset -f")
			if res := exec(sc.setup); res.Status != "ok" {
				t.Fatalf("setup failed: %s: %s", res.Ename, res.Evalue)
			}
			cf := analysis.ParseCell(sc.cell)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			ins, err := k.Inspect(ctx, kernelclient.InspectRequest{Names: rules.Wanted(cf), Budget: 2 * time.Second, Namespace: true})
			cancel()
			if err != nil {
				t.Fatalf("inspect: %v", err)
			}
			if *update {
				ins.ElapsedMS = 0
				writeFacts(t, path, ins)
			}
			rules.SetPanicHook(func(r any) { t.Errorf("rule panic: %v", r) })
			compare(t, sc, rules.Check("cell", cf, sc.env.apply(envFrom(ins))))
			rules.SetPanicHook(nil)

			res := exec(sc.cell)
			wantExc := ""
			for _, w := range sc.want {
				if w.severity == finding.SeverityError {
					wantExc = w.exception
					break
				}
			}
			switch {
			case wantExc == "" && len(sc.want) == 0 && res.Status != "ok":
				t.Errorf("the cell predicted clean raised %s: %s", res.Ename, res.Evalue)
			case wantExc != "" && res.Ename != wantExc:
				t.Errorf("predicted %s, the kernel raised %q (%s)", wantExc, res.Ename, res.Evalue)
			}
		})
	}
	if ran < 10 {
		t.Errorf("only %d live scenarios; want at least 10", ran)
	}
}

// writeFacts replaces (or adds) the facts.json section of a scenario file.
func writeFacts(t *testing.T, path string, ins any) {
	t.Helper()
	file := testkitscenario.Load(t, path)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ins); err != nil {
		t.Fatal(err)
	}
	file.Set("facts.json", buf.Bytes())
	if err := os.WriteFile(path, file.Format(), 0o644); err != nil {
		t.Fatal(err)
	}
}
