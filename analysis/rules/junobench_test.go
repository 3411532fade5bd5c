package rules_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/kernelclient"
)

// TestJunoBenchDev measures the rules alone on the JunoBench development cases that can run
// offline (testdata/junobench/data/<id>/make_data.py): for the buggy and the fixed version,
// replay the executed cells in a real kernel, inspect rules.Wanted(target), check, and count
// crashes caught (an error or warning finding naming the recorded exception) and false
// alarms on the fixed twins. It is a measurement, not a gate: set PREMORTEM_JUNOBENCH=1.
func TestJunoBenchDev(t *testing.T) {
	if os.Getenv("PREMORTEM_JUNOBENCH") == "" {
		t.Skip("set PREMORTEM_JUNOBENCH=1 to measure the rules on the JunoBench development cases")
	}
	python.Require(t, "ipykernel")
	root := filepath.Join("..", "..", "testdata", "junobench")
	truth := readTruth(t, filepath.Join(root, "desc.csv"))
	ids, _ := filepath.Glob(filepath.Join(root, "data", "*", "make_data.py"))
	sort.Strings(ids)
	var caught, anyFinding, falseAlarm, ran int
	for _, p := range ids {
		id := filepath.Base(filepath.Dir(p))
		if only := os.Getenv("PREMORTEM_JUNOBENCH_CASE"); only != "" && only != id {
			continue
		}
		want := strings.ToLower(truth[id])
		buggy, err1 := runCase(t, root, id, "buggy")
		fixed, err2 := runCase(t, root, id, "fixed")
		if err1 != nil || err2 != nil {
			t.Logf("%-16s skipped: %v %v", id, err1, err2)
			continue
		}
		ran++
		hit := false
		for _, f := range buggy {
			if strings.ToLower(f.Exception) == want || strings.HasSuffix(want, strings.ToLower(f.Exception)) {
				hit = true
			}
		}
		if hit {
			caught++
		}
		if len(buggy) > 0 {
			anyFinding++
		}
		var alarms []string
		for _, f := range fixed {
			if f.Severity == finding.SeverityError {
				alarms = append(alarms, summary(f))
			}
		}
		if len(alarms) > 0 {
			falseAlarm++
		}
		var got []string
		for _, f := range buggy {
			got = append(got, summary(f))
		}
		t.Logf("%-16s want %-14s caught=%-5v buggy: %s | fixed alarms: %s", id, want, hit, strings.Join(got, "; "), strings.Join(alarms, "; "))
	}
	t.Logf("JunoBench dev (rules only): %d cases replayed, %d crashes caught with the right exception, %d with any finding, %d false alarms on fixed twins",
		ran, caught, anyFinding, falseAlarm)
	t.Logf("executed cells checked before running: %d, error findings on cells that then ran cleanly: %d", jbCells, jbCellAlarms)
}

func summary(f finding.Finding) string {
	return fmt.Sprintf("%s/%s/%s@%d: %.90s", f.Code, f.Severity, f.Exception, f.Range.Start.Line+1, f.Message)
}

func readTruth(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows[1:] {
		out[r[0]] = r[6]
	}
	return out
}

type jbCase struct {
	Executed []struct {
		Code string `json:"code"`
	} `json:"executed"`
	Target struct {
		Code string `json:"code"`
	} `json:"target"`
}

// jbCells and jbCellAlarms count the executed cells checked before they ran, and the error
// findings on those that then ran cleanly.
var jbCells, jbCellAlarms int

// runCase replays one version of a case and returns the rules' findings on its target.
func runCase(t *testing.T, root, id, version string) ([]finding.Finding, error) {
	data, err := os.ReadFile(filepath.Join(root, "cases", id, version+".json"))
	if err != nil {
		return nil, err
	}
	var c jbCase
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	work := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join(root, "data", id, "make_data.py"))
	mk := exec.Command(python.Path(), abs)
	mk.Dir = work
	if out, err := mk.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("make_data: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k, err := kernel.Launch(ctx, kernelclient.LaunchOptions{Cwd: work})
	if err != nil {
		return nil, err
	}
	defer kernel.Stop(k)
	if _, err := k.Execute(ctx, "import matplotlib; matplotlib.use('Agg')"); err != nil {
		return nil, err
	}
	for i, cell := range c.Executed {
		// Every executed cell ran without error in the original notebook: an error finding
		// on one (with the state just before it) is a false alarm.
		var predicted []finding.Finding
		if version == "fixed" {
			cf := analysis.ParseCell(cell.Code)
			ictx, icancel := context.WithTimeout(context.Background(), 30*time.Second)
			ins, err := k.Inspect(ictx, kernelclient.InspectRequest{Names: rules.Wanted(cf), Budget: 200 * time.Millisecond, Namespace: true})
			icancel()
			if err == nil {
				for _, f := range rules.Check(id, cf, envFrom(ins)) {
					if f.Severity == finding.SeverityError {
						predicted = append(predicted, f)
					}
				}
			}
			jbCells++
		}
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		res, err := k.Execute(ctx, cell.Code)
		cancel()
		if err != nil {
			return nil, err
		}
		if res.Status == "ok" && len(predicted) > 0 {
			jbCellAlarms++
			t.Logf("FALSE ALARM %s executed cell %d: %s", id, i, summary(predicted[0]))
		}
		if res.Status != "ok" {
			return nil, fmt.Errorf("%s executed cell %d: %s: %.80s", version, i, res.Ename, res.Evalue)
		}
	}
	cf := analysis.ParseCell(c.Target.Code)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	ins, err := k.Inspect(ctx2, kernelclient.InspectRequest{Names: rules.Wanted(cf), Budget: 200 * time.Millisecond, Namespace: true})
	if err != nil {
		return nil, err
	}
	if dump := os.Getenv("PREMORTEM_JUNOBENCH_DUMP"); dump != "" {
		b, _ := json.MarshalIndent(ins, "", " ")
		os.WriteFile(filepath.Join(dump, id+"-"+version+".json"), b, 0o644)
	}
	return rules.Check(id, cf, envFrom(ins)), nil
}
