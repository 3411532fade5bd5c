package twins

import (
	"reflect"
	"testing"
)

func TestMissing(t *testing.T) {
	scenarios := map[string][]string{
		"drop":       {"missing-column"},
		"drop_ok":    nil,
		"loc":        {"missing-column", "not-fitted"},
		"loc_ok":     {"not-fitted"}, // the twin still shows not-fitted: no pair for it
		"fit_ok":     nil,            // a twin whose scenario is missing pairs nothing
		"typo":       {"undefined-name"},
		"typo-other": nil,
	}
	got := Missing([]string{"missing-column", "not-fitted", "undefined-name", "reshape-size"}, scenarios)
	want := []string{
		"not-fitted: none of [loc] has a twin <name>_ok that runs without it",
		"undefined-name: none of [typo] has a twin <name>_ok that runs without it",
		"reshape-size: no scenario expects it",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Missing = %q\nwant %q", got, want)
	}
}
