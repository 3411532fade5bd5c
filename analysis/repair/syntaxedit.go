package repair

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Syntax slips the parser stops at, other than brackets (see brackets.go): a block header
// without its colon (for x in xs), Python 2's print statement (print x), an assignment
// where the condition compares (if x = 3:). The tree is broken there, so the lines around
// the error are read token by token (strings skipped); each repair is one token, and the
// shadow run proves the cell parses and runs.

func init() {
	register(family{name: "syntax-slip", gen: syntaxSlipGen})
}

// blockKeywords open a statement that ends its header with a colon.
var blockKeywords = []string{"if", "elif", "else", "for", "while", "def", "class", "try", "except", "finally", "with"}

func syntaxSlipGen(in *Input) []Candidate {
	if in.exception() != "SyntaxError" {
		return nil
	}
	ls := lines(in.Text)
	l := in.crashLine()
	var out []Candidate
	for _, i := range []int{l, l - 1, l + 1} {
		if i < 0 || i >= len(ls) {
			continue
		}
		out = append(out, slipsOn(ls[i], i)...)
	}
	return out
}

// slipsOn returns the one-token repairs of line (0-based l).
func slipsOn(line string, l int) []Candidate {
	code := strings.TrimRight(stripComment(line), " \t\r")
	trimmed := strings.TrimLeft(code, " \t")
	if trimmed == "" || bracketDelta(code) != 0 {
		return nil
	}
	word := trimmed
	if i := strings.IndexAny(trimmed, " \t:(["); i >= 0 {
		word = trimmed[:i]
	}
	at := func(col int) finding.Position {
		return finding.Position{Line: l, Character: analysis.UTF16Len(code[:col])}
	}
	var out []Candidate
	block := false
	for _, k := range blockKeywords {
		block = block || word == k
	}
	if block && !strings.HasSuffix(code, ":") {
		p := at(len(code))
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Add the colon that ends the " + word + " line", Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: ":"}}},
			Keeps: "the same statement; only the colon its header needs is added",
		})
	}
	if word == "print" && len(trimmed) > len("print ") && trimmed[len("print")] == ' ' && !strings.HasPrefix(strings.TrimLeft(trimmed[len("print"):], " "), "(") {
		start := len(code) - len(trimmed) + len("print")
		arg := strings.TrimSpace(code[start:])
		r := finding.Range{Start: at(start), End: at(len(code))}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Call print(" + arg + ") (print is a function in Python 3)", Edits: []finding.Edit{replaceAt(r, "("+arg+")")}},
			Keeps: "prints the same values",
		})
	}
	if word == "if" || word == "elif" || word == "while" {
		if col, ok := loneEquals(code); ok {
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: "Compare with == in the " + word + " condition, not assign with =", Edits: []finding.Edit{replaceAt(finding.Range{Start: at(col), End: at(col + 1)}, "==")}},
				Keeps: "the same condition, as the comparison it was meant to be",
			})
		}
	}
	return out
}

// loneEquals returns the byte offset of the only bare = of a condition line (not part of
// ==, !=, <=, >=, := and outside strings and brackets).
func loneEquals(code string) (int, bool) {
	found, n := -1, 0
	depth := 0
	scanCode(code, func(i int, c byte, inString bool) bool {
		if inString {
			return true
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '=':
			prev, next := byte(0), byte(0)
			if i > 0 {
				prev = code[i-1]
			}
			if i+1 < len(code) {
				next = code[i+1]
			}
			if depth == 0 && next != '=' && !strings.ContainsRune("=!<>:+-*/%&|^", rune(prev)) {
				found, n = i, n+1
			}
		}
		return true
	})
	return found, n == 1
}
