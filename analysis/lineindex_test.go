package analysis

import (
	"testing"

	"github.com/premortem/premortem/finding"
)

func TestLineIndex(t *testing.T) {
	text := "é = 1\nx = '中文' + y\ns = '😀😀' + z\r\nlast"
	x := NewLineIndex(text)
	tests := []struct {
		off  int
		want finding.Position
	}{
		{0, finding.Position{Line: 0, Character: 0}},
		{2, finding.Position{Line: 0, Character: 1}}, // after é (2 bytes, 1 UTF-16 unit)
		{1, finding.Position{Line: 0, Character: 0}}, // inside é: start of the character
		{len("é = 1\n"), finding.Position{Line: 1, Character: 0}},
		{len("é = 1\nx = '中文' + "), finding.Position{Line: 1, Character: 11}},               // each CJK char is 3 bytes, 1 unit
		{len("é = 1\nx = '中文' + y\ns = '😀😀' + "), finding.Position{Line: 2, Character: 13}}, // each emoji is 4 bytes, 2 units
		{len("é = 1\nx = '中文' + y\ns = '😀😀' + z\r\n"), finding.Position{Line: 3, Character: 0}},
		{len(text), finding.Position{Line: 3, Character: 4}},
		{len(text) + 10, finding.Position{Line: 3, Character: 4}},
	}
	for _, tt := range tests {
		if got := x.Position(tt.off); got != tt.want {
			t.Errorf("Position(%d) = %v, want %v", tt.off, got, tt.want)
		}
		if tt.off <= len(text) && tt.off != 1 {
			if back := x.Offset(tt.want); back != tt.off {
				t.Errorf("Offset(%v) = %d, want %d", tt.want, back, tt.off)
			}
		}
	}
	// Clamping and surrogate halves.
	if got := x.Offset(finding.Position{Line: 2, Character: 6}); got != len("é = 1\nx = '中文' + y\ns = '") {
		t.Errorf("Offset in the middle of a surrogate pair = %d", got)
	}
	if got := x.Offset(finding.Position{Line: 0, Character: 99}); got != len("é = 1") {
		t.Errorf("Offset past line end = %d", got)
	}
	if got := x.Offset(finding.Position{Line: 2, Character: 99}); got != len("é = 1\nx = '中文' + y\ns = '😀😀' + z") {
		t.Errorf("Offset past CRLF line end = %d", got)
	}
	if got := x.Offset(finding.Position{Line: 9, Character: 0}); got != len(text) {
		t.Errorf("Offset past last line = %d", got)
	}
	if x.Lines() != 4 {
		t.Errorf("Lines = %d", x.Lines())
	}
	cr := NewLineIndex("a\rb")
	if got := cr.Position(2); got != (finding.Position{Line: 1, Character: 0}) {
		t.Errorf("lone CR: %v", got)
	}
}

func TestNonASCIIRanges(t *testing.T) {
	f := ParseCell("s = '😀' ; t = 'é'; print(zz)\n")
	var got *Use
	for i := range f.Uses {
		if f.Uses[i].Name == "zz" {
			got = &f.Uses[i]
		}
	}
	if got == nil {
		t.Fatal("no use of zz")
	}
	want := finding.Range{Start: finding.Position{Line: 0, Character: 26}, End: finding.Position{Line: 0, Character: 28}}
	if got.Range != want {
		t.Errorf("zz range = %v, want %v", got.Range, want)
	}
}
