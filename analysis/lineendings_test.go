package analysis

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// TestLineEndings: Python ends a line at "\n", "\r\n" or a lone "\r", and so do LSP and
// every premortem position. The same cell written with each ending parses to the same
// facts at the same positions, with no SyntaxError (a lone "\r" was one, though Python
// runs the cell), and its findings are on the lines Python numbers.
func TestLineEndings(t *testing.T) {
	cells := []string{
		"a = 1\nb = 2\nprint(b)",
		"def f(x):\n    return x + y\n\nz = f(1)\nif z:\n    w = [1,\n         2]\nprint(w, nope)\n",
		"s = 'é😀'\nt = s + undefined_here\n",
		"%matplotlib inline\nimport numpy as np\nx = np.arange(3)\n!ls\nprint(x)\n",
	}
	for _, src := range cells {
		want := ParseCell(src)
		if len(want.SyntaxErrors) > 0 {
			t.Fatalf("%q: the \\n version has syntax errors %v", src, want.SyntaxErrors)
		}
		for _, nl := range []string{"\r\n", "\r"} {
			text := strings.ReplaceAll(src, "\n", nl)
			got := ParseCell(text)
			if !reflect.DeepEqual(got.Defs, want.Defs) || !reflect.DeepEqual(got.Uses, want.Uses) ||
				!reflect.DeepEqual(got.SyntaxErrors, want.SyntaxErrors) || !reflect.DeepEqual(got.Magics != nil, want.Magics != nil) {
				t.Errorf("%q: facts differ from the \\n version\n got defs %v uses %v syntax %v\nwant defs %v uses %v syntax %v",
					text, got.Defs, got.Uses, got.SyntaxErrors, want.Defs, want.Uses, want.SyntaxErrors)
			}
			for i := range want.Magics {
				if i >= len(got.Magics) || got.Magics[i].Range != want.Magics[i].Range || got.Magics[i].Name != want.Magics[i].Name {
					t.Errorf("%q: magics %+v, want %+v", text, got.Magics, want.Magics)
				}
			}
			var cache Cache
			cache.Facts("c", src)
			if inc := cache.Facts("c", text); !reflect.DeepEqual(inc, got) {
				t.Errorf("%q: re-parsed from the \\n version, facts differ from a fresh parse", text)
			}
		}
	}
	nb := &notebook.Notebook{URI: "cr.ipynb", Cells: []*notebook.Cell{
		{ID: "c0", Kind: notebook.Code, Language: "python", Text: "a = 1\rb = 2\rprint(b)\rprint(nope)"},
	}}
	res, err := NewAnalyzer().Analyze(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := res.Findings["c0"]; len(fs) != 1 || fs[0].Code != finding.UndefinedName || fs[0].Range != (finding.Range{Start: finding.Position{Line: 3, Character: 6}, End: finding.Position{Line: 3, Character: 10}}) {
		t.Errorf("findings of the issue's lone-CR cell: %+v; want undefined-name at 3:6-3:10 only", fs)
	}
}

// TestSplitLines: SplitLines and SplitLinesKeep number lines as LineIndex and Python do.
func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		text       string
		lines      []string
		keep       []string
		pythonRows int // lines as Python's tokenizer counts them (a final empty line counts here too)
	}{
		{"", []string{""}, nil, 1},
		{"a", []string{"a"}, []string{"a"}, 1},
		{"a\nb", []string{"a", "b"}, []string{"a\n", "b"}, 2},
		{"a\r\nb\r\n", []string{"a", "b", ""}, []string{"a\r\n", "b\r\n"}, 3},
		{"a\rb\rc", []string{"a", "b", "c"}, []string{"a\r", "b\r", "c"}, 3},
		{"a\r\rb", []string{"a", "", "b"}, []string{"a\r", "\r", "b"}, 3},
		{"a\n\rb\r\n\nc", []string{"a", "", "b", "", "c"}, []string{"a\n", "\r", "b\r\n", "\n", "c"}, 5},
		{"é\r😀", []string{"é", "😀"}, []string{"é\r", "😀"}, 2},
	} {
		if got := SplitLines(tc.text); !reflect.DeepEqual(got, tc.lines) {
			t.Errorf("SplitLines(%q) = %q, want %q", tc.text, got, tc.lines)
		}
		if got := SplitLinesKeep(tc.text); !reflect.DeepEqual(got, tc.keep) {
			t.Errorf("SplitLinesKeep(%q) = %q, want %q", tc.text, got, tc.keep)
		}
		idx := NewLineIndex(tc.text)
		if idx.Lines() != len(tc.lines) || len(tc.lines) != tc.pythonRows {
			t.Errorf("%q: LineIndex has %d lines, SplitLines %d, Python %d", tc.text, idx.Lines(), len(tc.lines), tc.pythonRows)
		}
		for l, line := range tc.lines {
			start := idx.Offset(finding.Position{Line: l})
			if end := idx.Offset(finding.Position{Line: l, Character: 1 << 20}); tc.text[start:end] != line {
				t.Errorf("%q line %d: LineIndex gives %q, SplitLines %q", tc.text, l, tc.text[start:end], line)
			}
			if off, err := notebook.OffsetOf(tc.text, l, 0); err != nil || off != start {
				t.Errorf("%q line %d: notebook.OffsetOf = %d (%v), LineIndex %d", tc.text, l, off, err, start)
			}
		}
	}
}
