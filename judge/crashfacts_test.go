package judge

import (
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
)

// TestCrashFacts: the shadow run's crash-frame facts reach the repair input only when that
// run's crash is the finding's.
func TestCrashFacts(t *testing.T) {
	cf := map[string]facts.Value{"X": {Name: "X", Exists: true, Kind: facts.KindDataFrame}}
	failed := &facts.ShadowResult{Status: facts.ShadowError, Exception: "ValueError", CrashFacts: cf}
	tests := []struct {
		name string
		r    *facts.ShadowResult
		f    analysis.Finding
		want bool
	}{
		{"the same exception", failed, analysis.Finding{Exception: "ValueError"}, true},
		{"a module-qualified name of it", failed, analysis.Finding{Exception: "builtins.ValueError"}, true},
		{"another exception: other objects", failed, analysis.Finding{Exception: "KeyError"}, false},
		{"a clean run has none", &facts.ShadowResult{Status: facts.ShadowOK, CrashFacts: cf}, analysis.Finding{Exception: "ValueError"}, false},
		{"no run", nil, analysis.Finding{Exception: "ValueError"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := crashFacts(tc.r, tc.f)
			if (got != nil) != tc.want {
				t.Fatalf("crashFacts = %v, want facts: %v", got, tc.want)
			}
		})
	}
}
