package rules_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
)

// TestDebugScenario prints what Check finds for RULES_DEBUG=path (a development aid).
func TestDebugScenario(t *testing.T) {
	path := os.Getenv("RULES_DEBUG")
	if path == "" {
		t.Skip("set RULES_DEBUG to a scenario path")
	}
	sc := parseScenario(t, path)
	cf := analysis.ParseCell(sc.cell)
	t.Logf("wanted: %v", rules.Wanted(cf))
	b, _ := json.MarshalIndent(cf.Statements, "", " ")
	if os.Getenv("RULES_DEBUG_TREE") != "" {
		t.Logf("tree: %s", b)
	}
	rules.SetPanicHook(func(r any) { t.Errorf("rule panic: %v", r) })
	defer rules.SetPanicHook(nil)
	for _, f := range rules.Check("cell", cf, envFrom(sc.facts)) {
		j, _ := json.MarshalIndent(f, "", " ")
		t.Logf("%s", j)
	}
}
