package repair

import (
	"slices"
	"testing"
)

// TestQuoteScanners: the line helpers built on scanCode see through strings, escapes and
// comments alike.
func TestQuoteScanners(t *testing.T) {
	tests := []struct {
		line, stripped string
		delta          int
	}{
		{`x = f(a, "b # (")  # g(`, `x = f(a, "b # (")  `, 0},
		{`s = 'it\'s (' + t[`, `s = 'it\'s (' + t[`, 1},
		{`d = {"a": "\\"} # }`, `d = {"a": "\\"} `, 0},
		{`open('x` + "\\", `open('x` + "\\", 1},
		{`# (`, ``, 0},
	}
	for _, tt := range tests {
		if got := stripComment(tt.line); got != tt.stripped {
			t.Errorf("stripComment(%q) = %q, want %q", tt.line, got, tt.stripped)
		}
		if got := bracketDelta(tt.line); got != tt.delta {
			t.Errorf("bracketDelta(%q) = %d, want %d", tt.line, got, tt.delta)
		}
	}
	var names []string
	for _, p := range params(`(x, y, s=None, *, sep=", ", fmt='(%s)', data={"a": [1, 2]}, **kwargs) -> None`) {
		names = append(names, p.name)
	}
	if want := []string{"x", "y", "s", "sep", "fmt", "data", "kwargs"}; !slices.Equal(names, want) {
		t.Errorf("params = %v, want %v", names, want)
	}
}
