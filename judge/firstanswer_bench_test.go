package judge_test

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/python"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/judge"
)

// BenchmarkFirstAnswer judges the first-answer development set (testdata/devset/firstanswer:
// slow library calls or training loops before a crash, each with a clean twin) at the
// editor's budget, 3 s for the shadow run and 3 s for the full run, and reports what the
// editor's first answer gets right: crashes found, false alarms (a crash-level finding on a
// clean twin), the share of unknown, and the time to the first answer (p50, p90). Run it with
// -benchtime 1x: each case starts a kernel and takes seconds.
func BenchmarkFirstAnswer(b *testing.B) {
	files := testkitscenario.Paths(b, testkitscenario.Dir(b, "devset", "firstanswer"), 1)
	python.Require(b, "ipykernel")
	var lat []time.Duration
	found, crashes, alarms, cleans, unknown := 0, 0, 0, 0, 0
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			parts := map[string]string{}
			for _, s := range testkitscenario.Load(b, f).Sections {
				parts[s.Name] = string(s.Data)
			}
			j := shadowBench(b, parts["ran.py"], 3*time.Second)
			j.Options.ShadowFullTimeout = 3 * time.Second
			for _, kind := range []string{"crash", "clean"} {
				code := strings.TrimSuffix(parts[kind+".py"], "\n")
				t0 := time.Now()
				r, err := j.ShadowRunStaged(context.Background(), code, analysis.ParseCell(code), nil)
				if err != nil {
					// a kernel too loaded to answer: no answer is an unknown one
					b.Logf("%s %s: %v", filepath.Base(f), kind, err)
					r = &facts.ShadowResult{Status: facts.ShadowDied, Reason: err.Error()}
				}
				lat = append(lat, time.Since(t0))
				fs, _ := judge.ShadowFindings("c", code, analysis.ParseCell(code), r)
				alarm := false
				for _, x := range fs {
					if x.Severity == finding.SeverityError || x.Severity == finding.SeverityWarning {
						alarm = true
					}
				}
				if !alarm && !judge.CleanShadow(r) {
					unknown++
				}
				if kind == "crash" {
					crashes++
					if alarm {
						found++
					}
				} else {
					cleans++
					if alarm {
						alarms++
						b.Logf("false alarm on %s: %s %s", filepath.Base(f), r.Exception, r.Message)
					}
				}
				b.Logf("%s %s: %s in %v%s", filepath.Base(f), kind, outcome(r, alarm), time.Since(t0).Round(time.Millisecond), reasonOf(r))
			}
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(float64(found)/float64(crashes), "found")
	b.ReportMetric(float64(alarms), "false-alarms")
	b.ReportMetric(float64(unknown)/float64(crashes+cleans), "unknown")
	b.ReportMetric(ms(lat[len(lat)/2]), "ms-p50")
	b.ReportMetric(ms(lat[len(lat)*9/10]), "ms-p90")
}

func outcome(r *facts.ShadowResult, alarm bool) string {
	switch {
	case alarm:
		return "crash " + r.Exception
	case judge.CleanShadow(r):
		return "ok"
	}
	return "unknown"
}

func reasonOf(r *facts.ShadowResult) string {
	if r.Reason == "" {
		return ""
	}
	return " (" + r.Reason + ")"
}
