package analysis

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// TestLimits analyses a notebook with one cell past a bound (it ran) and, after it, a cell
// with an undefined name: the bounded cell gets its finding, naming the line, and the next
// cell is analysed as usual.
func TestLimits(t *testing.T) {
	big := "data = [" + strings.Repeat("1.5, ", MaxCellBytes/5) + "]"
	for _, tc := range []struct {
		name, cell     string
		code, severity string
		line           int
		msg            string
		// defines: the cell's name still counts as defined for the next cell.
		defines bool
	}{
		{"subscript chain", "a = [0]\nx = a" + strings.Repeat("[0]", 60000), finding.NotAnalysed, "info", 1, "line 2 nests more than 1000 levels deep", true},
		{"method chain", "x = s" + strings.Repeat(".m()", 50000), finding.NotAnalysed, "info", 0, "line 1 nests more than 1000 levels", true},
		{"long sum", "a = 0\nx = " + strings.Repeat("a + ", 20000) + "1", finding.NotAnalysed, "info", 1, "line 2 nests", true},
		{"nested calls", "x = " + strings.Repeat("f(", 30000) + "1" + strings.Repeat(")", 30000), finding.SyntaxError, "error", 0, "too many nested parentheses", false},
		{"nested lists", "x = 1\nx = " + strings.Repeat("[", 201) + strings.Repeat("]", 201), finding.SyntaxError, "error", 1, "too many nested parentheses", false},
		{"huge cell", "x = 1\n" + big, finding.NotAnalysed, "info", 0, "larger than the " + sizeText(MaxCellBytes) + " premortem analyses", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := &notebook.Notebook{URI: "limits.ipynb", Cells: []*notebook.Cell{
				{ID: "c0", Kind: notebook.Code, Language: "python", Text: tc.cell, ExecutionOrder: 1},
				{ID: "c1", Kind: notebook.Code, Language: "python", Text: "print(x)\nprint(not_defined_anywhere)"},
			}}
			var logs []string
			res, err := NewAnalyzer().Analyze(context.Background(), nb, Options{Log: func(m string) { logs = append(logs, m) }})
			if err != nil {
				t.Fatal(err)
			}
			fs := res.Findings["c0"]
			if len(fs) != 1 || fs[0].Code != tc.code || string(fs[0].Severity) != tc.severity || fs[0].Range.Start.Line != tc.line ||
				!strings.Contains(fs[0].Message+strings.Join(fs[0].Evidence, " "), tc.msg) {
				t.Fatalf("findings of the bounded cell: %+v; want one %s %s on line %d saying %q", fs, tc.severity, tc.code, tc.line, tc.msg)
			}
			var got []string
			for _, f := range res.Findings["c1"] {
				got = append(got, f.Message)
			}
			want := []string{"name 'not_defined_anywhere' is not defined"}
			if !tc.defines {
				want = []string{"name 'x' is not defined", "name 'not_defined_anywhere' is not defined"}
			}
			if tc.name == "huge cell" {
				want = nil // the huge cell may define anything, like a star import
			}
			if len(got) != len(want) {
				t.Fatalf("findings of the next cell: %q; want %q", got, want)
			}
			for i := range want {
				if !strings.HasPrefix(got[i], want[i]) {
					t.Errorf("finding %d of the next cell: %q; want %q", i, got[i], want[i])
				}
			}
			if len(logs) != 1 || !strings.Contains(logs[0], "cell 1 (c0)") {
				t.Errorf("log lines %q; want one naming cell 1 (c0)", logs)
			}
		})
	}
}

func TestBracketOverflow(t *testing.T) {
	deep := strings.Repeat("(", 201)
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"x = " + strings.Repeat("(", 200) + strings.Repeat(")", 200), -1},
		{"x = " + deep, 4 + 200},
		{"s = '" + deep + "'", -1},
		{`s = "\"` + deep + `"`, -1},
		{"s = '''\n" + deep + "\n'''", -1},
		{"# " + deep + "\nx = 1", -1},
		{"s = 'unterminated\n" + deep, 18 + 200},
		{strings.Repeat("()", 500), -1},
	} {
		if got := bracketOverflow([]byte(tc.src)); got != tc.want {
			t.Errorf("bracketOverflow(%.40q...) = %d, want %d", tc.src, got, tc.want)
		}
	}
}

// TestLineIndexLongLines checks the checkpointed UTF-16 columns against counting from the
// line start, on long lines of mixed scripts (pasted data).
func TestLineIndexLongLines(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	parts := []string{"a", "é", "中", "😀", "\n", "\r\n", ", ", "\xff"}
	var b strings.Builder
	for b.Len() < 20000 {
		p := parts[rng.Intn(len(parts))]
		if p == "\n" || p == "\r\n" {
			if rng.Intn(20) != 0 {
				continue // mostly long lines
			}
		}
		b.WriteString(p)
	}
	text := b.String()
	x := NewLineIndex(text)
	for i := 0; i < 3000; i++ {
		off := rng.Intn(len(text) + 1)
		got := x.Position(off)
		want := naivePosition(text, off)
		if got != want {
			t.Fatalf("Position(%d) = %v, want %v", off, got, want)
		}
	}
}

// naivePosition is LineIndex.Position without checkpoints.
func naivePosition(text string, off int) finding.Position {
	for off > 0 && off < len(text) && (text[off]&0xC0) == 0x80 {
		off--
	}
	if off > 0 && off < len(text) && text[off-1] == '\r' && text[off] == '\n' {
		off-- // between "\r" and "\n": the end of the line, as notebook.PositionOf says
	}
	x := NewLineIndex(text).x
	line := 0
	for i := range x.Lines() {
		if x.LineStart(i) <= off {
			line = i
		}
	}
	return finding.Position{Line: line, Character: UTF16Len(text[x.LineStart(line):off])}
}

// TestTooLargeCellCostsNothing: the facts of a cell past MaxCellBytes hold no copy of it.
func TestTooLargeCellCostsNothing(t *testing.T) {
	text := strings.Repeat("x = 1\n", MaxCellBytes/6+1)
	f := ParseCell(text)
	if len(f.Limits) != 1 || f.Limits[0].Kind != LimitTooLarge || len(f.Statements)+len(f.Uses)+len(f.Defs) != 0 {
		t.Fatalf("facts of a %d-byte cell: %+v", len(text), f)
	}
	if !strings.Contains(f.Limits[0].Message, sizeText(len(text))) || !strings.Contains(sizeText(5<<20), "5.0 MB") {
		t.Errorf("message %q does not give the size", f.Limits[0].Message)
	}
}

// TestNotebookBudget: the cells of a notebook past MaxNotebookBytes of code are not
// parsed: each gets the info finding, is logged once, and names they may define count as
// defined; the cells before the budget, a cell too large to parse (which does not count)
// and the markdown are as usual; growing an earlier cell moves the bound on the next pass.
func TestNotebookBudget(t *testing.T) {
	// A cell is 100 KB: five fit in 512 KB, the sixth does not.
	const cellBytes = 100 << 10
	body := strings.Repeat("v = 1\n", cellBytes/6)
	var cells []*notebook.Cell
	add := func(kind notebook.Kind, text string) {
		cells = append(cells, &notebook.Cell{ID: fmt.Sprint("c", len(cells)), Kind: kind, Language: "python", Text: text})
	}
	add(notebook.Code, "print(undefined_0)\n"+body)
	add(notebook.Code, "data = ["+strings.Repeat("1.5, ", MaxCellBytes/5)+"]")
	for i := 1; i < 7; i++ {
		add(notebook.Markup, strings.Repeat("# text\n", cellBytes/7))
		add(notebook.Code, fmt.Sprintf("print(undefined_%d)\n", i)+body)
	}
	nb := &notebook.Notebook{URI: "budget.ipynb", Cells: cells}
	a := NewAnalyzer()
	var logs []string
	opts := Options{Log: func(m string) { logs = append(logs, m) }}
	res, err := a.Analyze(context.Background(), nb, opts)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(res *Result) []string {
		var out []string
		for _, c := range nb.Cells {
			for _, f := range res.Findings[c.ID] {
				out = append(out, fmt.Sprintf("%s:%s@%d", c.ID, f.Code, f.Range.Start.Line))
			}
		}
		return out
	}
	// The huge cell may define anything, so no undefined name after it is certain; the
	// first cell's is. c3, c5, ..., c13 are the code cells of 100 KB after it: with c0,
	// c3 to c9 fit (500 KB), c11 and c13 do not.
	want := []string{"c0:undefined-name@0", "c1:not-analysed@0", "c11:not-analysed@0", "c13:not-analysed@0"}
	if got := summary(res); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %q, want %q", got, want)
	}
	f := res.Findings["c11"][0]
	if !strings.Contains(f.Message, "over the 512 KB premortem analyses") || !strings.Contains(strings.Join(f.Evidence, " "), "first 512 KB") {
		t.Errorf("budget finding %q %q", f.Message, f.Evidence)
	}
	over := 0
	for _, l := range logs {
		if strings.Contains(l, "over the 512 KB") {
			over++
		}
	}
	if over != 1 {
		t.Errorf("%d log lines about the budget, want 1: %q", over, logs)
	}
	// Growing the first cell by another 100 KB pushes c9 out too.
	grown := *nb
	grown.Cells = slices.Clone(nb.Cells)
	c0 := *nb.Cells[0]
	c0.Text += body
	grown.Cells[0] = &c0
	nb = &grown
	res, err = a.Analyze(context.Background(), nb, opts)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"c0:undefined-name@0", "c1:not-analysed@0", "c9:not-analysed@0", "c11:not-analysed@0", "c13:not-analysed@0"}
	if got := summary(res); !reflect.DeepEqual(got, want) {
		t.Fatalf("after growing c0: findings %q, want %q", got, want)
	}
	if n := a.Cache().Len(); n != 5 {
		t.Errorf("after growing c0: %d cells cached, want 5 (c0, c1, c3, c5, c7: nothing past the budget)", n)
	}
}
