package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/internal/testkit/twins"
)

// TestEveryStaticCodeHasScenarios: every code registered for the static layer is expected
// by a scenario in testdata/scenarios/static whose twin (the same name ending in _ok,
// scenario.TwinSuffix) is the nearby correct notebook that must not produce it.
func TestEveryStaticCodeHasScenarios(t *testing.T) {
	scenarios := map[string][]string{}
	for _, f := range testkitscenario.Paths(t, staticDir(t), 25) {
		name := strings.TrimSuffix(filepath.Base(f), testkitscenario.Ext)
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
	for _, m := range twins.Missing(codes, scenarios) {
		t.Error(m)
	}
}
