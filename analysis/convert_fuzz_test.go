package analysis

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

// deepCells are generated-code and pasted-data shapes: deep nesting and long chains,
// around and past maxDepth and maxBrackets.
func deepCells() []string {
	return []string{
		"x = " + strings.Repeat("f(", 200) + "1" + strings.Repeat(")", 200),
		"x = " + strings.Repeat("f(", 30000) + "1" + strings.Repeat(")", 30000),
		"a = [0]\nx = a" + strings.Repeat("[0]", 100000),
		"x = s" + strings.Repeat(".m()", 50000),
		"x = " + strings.Repeat("a + ", 20000) + "1",
		"x = " + strings.Repeat("not ", 5000) + "y",
		"x = " + strings.Repeat("lambda: ", 3000) + "y",
		"x = " + strings.Repeat("(", 150) + "y" + strings.Repeat(")", 150) + "\nprint(undefined_name)",
		"d = {" + strings.Repeat("'k': {", 190) + "1" + strings.Repeat("}", 190) + "}",
		"s = '" + strings.Repeat("(", 5000) + "'\n# " + strings.Repeat("[", 300) + "\nok = 1",
	}
}

// FuzzConvert checks the expression converter and fact extraction on any text: no panic,
// every expression tree no deeper than the syntax tree walk allows, every range inside the
// cell, and a re-parse through the cache agreeing with a fresh parse.
func FuzzConvert(f *testing.F) {
	for _, s := range deepCells() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > MaxCellBytes+1 {
			return
		}
		cf := ParseCell(text)
		idx := NewLineIndex(text)
		inCell := func(r finding.Range) {
			if r.End.Before(r.Start) || r.End.Line >= idx.Lines() {
				t.Fatalf("range %v outside the cell %q", r, text)
			}
		}
		var depth func(e *Expr, d int)
		depth = func(e *Expr, d int) {
			if e == nil {
				return
			}
			if d > maxDepth+1 {
				t.Fatalf("expression deeper than %d in %q", maxDepth, text)
			}
			inCell(e.Range)
			depth(e.Value, d+1)
			depth(e.Index, d+1)
			for _, a := range e.Args {
				depth(a, d+1)
			}
			for _, k := range e.Keywords {
				depth(k.Value, d+1)
			}
		}
		var stmts func(ss []*Statement)
		stmts = func(ss []*Statement) {
			for _, s := range ss {
				inCell(s.Range)
				depth(s.Value, 0)
				for _, e := range s.Targets {
					depth(e, 0)
				}
				stmts(s.Body)
			}
		}
		stmts(cf.Statements)
		for _, c := range cf.Calls {
			depth(c.Expr, 0)
		}
		for _, u := range cf.Uses {
			inCell(u.Range)
		}
		for _, l := range cf.Limits {
			inCell(l.Range)
		}
		var c Cache
		c.Facts("c", "x = 1")
		if got := c.Facts("c", text); len(got.Uses) != len(cf.Uses) || len(got.Limits) != len(cf.Limits) {
			t.Fatalf("cached parse of %q differs from a fresh one", text)
		}
	})
}
