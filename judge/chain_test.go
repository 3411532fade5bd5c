package judge

import (
	"testing"

	"github.com/premortem/premortem/finding"
)

func TestComposeTitle(t *testing.T) {
	got := composeTitle([]string{"Add `import torch` (verified: the cell runs)", "Define X_test as in cell 7: `X_test = X / 255`", "X_train reshaped"})
	want := "Add `import torch`; define X_test as in cell 7: `X_test = X / 255`; X_train reshaped"
	if got != want {
		t.Errorf("composeTitle = %q, want %q", got, want)
	}
}

func TestMapLine(t *testing.T) {
	at := func(l int) finding.Range {
		return finding.Range{Start: finding.Position{Line: l}, End: finding.Position{Line: l}}
	}
	tests := []struct {
		name  string
		edits []finding.Edit
		want  int
	}{
		{"an import above", []finding.Edit{{Range: at(0), NewText: "import numpy as np\n"}}, 4},
		{"two lines before the crash line itself", []finding.Edit{{Range: at(3), NewText: "a = 1\nb = 2\n"}}, 5},
		{"an edit below", []finding.Edit{{Range: at(5), NewText: "x = 1\n"}}, 3},
		{"a change within the line", []finding.Edit{{Range: finding.Range{Start: finding.Position{Line: 3, Character: 4}, End: finding.Position{Line: 3, Character: 6}}, NewText: "y"}}, 3},
		{"an edit of another cell", []finding.Edit{{Cell: "c1", Range: at(0), NewText: "z = 0\n"}}, 3},
	}
	for _, tc := range tests {
		if got := mapLine(3, tc.edits); got != tc.want {
			t.Errorf("%s: mapLine = %d, want %d", tc.name, got, tc.want)
		}
	}
}
