package markers

import (
	"reflect"
	"testing"

	"github.com/premortem/premortem/finding"
)

func rng(line, start, end int) finding.Range {
	return finding.Range{Start: finding.Position{Line: line, Character: start}, End: finding.Position{Line: line, Character: end}}
}

func TestParse(t *testing.T) {
	syn := New(`(\S+)\s+(\S+)(?:\s+"(.*)")?\s*`)
	tests := []struct {
		name  string
		text  string
		cell  string
		marks []Marker
	}{
		{
			name:  "hash marker",
			text:  "print(tf_idf)\n#     ^^^^^^ undefined-name error \"name 'tf_idf'\"\n",
			cell:  "print(tf_idf)",
			marks: []Marker{{Range: rng(0, 6, 12), Groups: []string{"undefined-name", "error", "name 'tf_idf'"}}},
		},
		{
			name:  "caret at column 0, optional group absent",
			text:  "x\n^ undefined-name error\ny = 1",
			cell:  "x\ny = 1",
			marks: []Marker{{Range: rng(0, 0, 1), Groups: []string{"undefined-name", "error", ""}}},
		},
		{
			name: "two markers mark the lines above them, with marker lines removed",
			text: "a = b\n#   ^ undefined-name error\nc = d\n#   ^ undefined-name warning",
			cell: "a = b\nc = d",
			marks: []Marker{
				{Range: rng(0, 4, 5), Groups: []string{"undefined-name", "error", ""}},
				{Range: rng(1, 4, 5), Groups: []string{"undefined-name", "warning", ""}},
			},
		},
		{
			name: "a first-line marker and a comment that does not match stay in the cell",
			text: "# ^ undefined-name error\nx = 1\n# ^ note",
			cell: "# ^ undefined-name error\nx = 1\n# ^ note",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cell, marks := syn.Parse(tt.text)
			if cell != tt.cell {
				t.Errorf("cell = %q, want %q", cell, tt.cell)
			}
			if !reflect.DeepEqual(marks, tt.marks) {
				t.Errorf("markers = %+v, want %+v", marks, tt.marks)
			}
		})
	}
}
