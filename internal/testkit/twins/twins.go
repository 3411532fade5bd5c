// Package twins checks, for the scenario tests of analysis and analysis/rules, that every
// finding code is shown by a scenario and by its twin: the same scenario name ending in
// scenario.TwinSuffix, the nearby correct code, which must not produce that code.
package twins

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/internal/testkit/scenario"
)

// Missing returns, for each of codes, why it lacks a scenario pair, in the order of codes.
// scenarios maps a scenario's name (its file name without .txtar) to the codes its markers
// expect. A code has a pair when some scenario S expects it, S+scenario.TwinSuffix exists,
// and that twin does not: every directory names twins the same way, so the suffix is not
// the caller's choice.
func Missing(codes []string, scenarios map[string][]string) []string {
	suffix := scenario.TwinSuffix
	var out []string
	for _, code := range codes {
		var shown, twinned []string
		for name, got := range scenarios {
			if strings.HasSuffix(name, suffix) || !contains(got, code) {
				continue
			}
			shown = append(shown, name)
			if twin, ok := scenarios[name+suffix]; ok && !contains(twin, code) {
				twinned = append(twinned, name)
			}
		}
		sort.Strings(shown)
		switch {
		case len(shown) == 0:
			out = append(out, fmt.Sprintf("%s: no scenario expects it", code))
		case len(twinned) == 0:
			out = append(out, fmt.Sprintf("%s: none of %v has a twin %s that runs without it", code, shown, "<name>"+suffix))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
