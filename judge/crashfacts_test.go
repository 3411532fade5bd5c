package judge

import (
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// TestCrashFacts: the shadow run's crash-frame facts reach the repair input only when that
// run's crash is the finding's.
func TestCrashFacts(t *testing.T) {
	cf := map[string]facts.Value{"X": {Name: "X", Exists: true, Kind: facts.KindDataFrame}}
	failed := &facts.ShadowResult{Status: facts.ShadowError, Exception: "ValueError", CrashFacts: cf}
	tests := []struct {
		name string
		r    *facts.ShadowResult
		f    finding.Finding
		want bool
	}{
		{"the same exception", failed, finding.Finding{Exception: "ValueError"}, true},
		{"a module-qualified name of it", failed, finding.Finding{Exception: "builtins.ValueError"}, true},
		{"another exception: other objects", failed, finding.Finding{Exception: "KeyError"}, false},
		{"a clean run has none", &facts.ShadowResult{Status: facts.ShadowOK, CrashFacts: cf}, finding.Finding{Exception: "ValueError"}, false},
		{"no run", nil, finding.Finding{Exception: "ValueError"}, false},
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
