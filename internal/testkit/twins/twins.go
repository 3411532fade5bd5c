// Package twins checks, for the scenario tests of analysis and analysis/rules, that every
// finding code is shown by a scenario and by its twin: the same scenario name with an ok
// suffix, the nearby correct code, which must not produce that code.
package twins

import (
	"fmt"
	"sort"
	"strings"
)

// Missing returns, for each of codes, why it lacks a scenario pair, in the order of codes.
// scenarios maps a scenario's name (its file name without .txtar) to the codes its markers
// expect; suffix is the twin's ("-ok" for rules scenarios, "_ok" for static ones). A code
// has a pair when some scenario S expects it, S+suffix exists, and S+suffix does not.
func Missing(codes []string, scenarios map[string][]string, suffix string) []string {
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
