package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/internal/testkit/twins"
)

// TestEveryStaticCodeHasScenarios: every code registered for the static layer is expected
// by a scenario in testdata/scenarios/static whose twin (the same name ending in _ok, the
// directory's naming) is the nearby correct notebook that must not produce it.
func TestEveryStaticCodeHasScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "static", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	scenarios := map[string][]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		scenarios[name] = []string{}
		for _, w := range parseScenario(t, f).want {
			scenarios[name] = append(scenarios[name], w.code)
		}
	}
	var codes []string
	for _, r := range finding.Registry {
		if r.Has(finding.SourceStatic) {
			codes = append(codes, r.Code)
		}
	}
	if len(codes) < 5 {
		t.Fatalf("only %d static codes registered", len(codes))
	}
	for _, m := range twins.Missing(codes, scenarios, "_ok") {
		t.Error(m)
	}
}
