package rules_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	testkitscenario "github.com/premortem/premortem/internal/testkit/scenario"
	"github.com/premortem/premortem/internal/testkit/twins"
)

// TestEveryCodeHasScenarios: every code registered for the rules layer is expected by a
// scenario in testdata/scenarios/rules whose `_ok` twin (the same name ending in _ok,
// scenario.TwinSuffix) is
// the nearby correct cell or state, which must not produce it. Codes only other layers
// emit carry their reason in the registry (finding.Rule.NoScenario), checked there.
func TestEveryCodeHasScenarios(t *testing.T) {
	scenarios := map[string][]string{}
	for _, path := range scenarioFiles(t) {
		sc := parseScenario(t, path)
		if sc.facts == nil {
			continue // TestScenarios skips it, so it shows nothing yet
		}
		name := strings.TrimSuffix(filepath.Base(path), testkitscenario.Ext)
		scenarios[name] = []string{}
		for _, w := range sc.want {
			scenarios[name] = append(scenarios[name], w.code)
		}
	}
	var codes []string
	for _, r := range finding.Registry {
		if r.Has(finding.SourceRules) {
			codes = append(codes, r.Code)
		}
	}
	if len(codes) < 40 {
		t.Fatalf("only %d rules codes registered", len(codes))
	}
	for _, m := range twins.Missing(codes, scenarios) {
		t.Error(m)
	}
}
