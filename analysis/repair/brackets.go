package repair

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A bracket never closed ("'(' was never closed", or "invalid syntax" on the line after):
// the closer goes at the end of the line that opened it, before any comment. Python reads
// on past the line end inside brackets, so the error surfaces later; the tokens say where
// the bracket opened. Closers that do not match their opener are left to the user.

func init() {
	register(family{name: "unclosed-bracket", gen: bracketGen})
}

func bracketGen(in *Input) []Candidate {
	if in.exception() != "SyntaxError" {
		return nil
	}
	open, ok := unclosed(in.Text)
	if !ok || len(open) == 0 {
		return nil
	}
	ls := lines(in.Text)
	closers := map[int]string{}
	var order []int
	for i := len(open) - 1; i >= 0; i-- {
		o := open[i]
		if _, seen := closers[o.line]; !seen {
			order = append(order, o.line)
		}
		closers[o.line] += string(match[o.char])
	}
	var edits []finding.Edit
	for _, l := range order {
		code := strings.TrimRight(stripComment(ls[l]), " \t\r")
		p := finding.Position{Line: l, Character: analysis.UTF16Len(code)}
		edits = append(edits, finding.Edit{Range: finding.Range{Start: p, End: p}, NewText: closers[l]})
	}
	what := ""
	for _, o := range open {
		what += string(o.char)
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: "Close the bracket opened on line " + itoa(open[len(open)-1].line+1) + " (" + what + " never closed)", Edits: edits},
		Keeps: "the statement is unchanged; only its missing closing bracket is added",
	}}
}

var match = map[byte]byte{'(': ')', '[': ']', '{': '}'}

// opener is an open bracket: its 0-based line and the bracket.
type opener struct {
	line int
	char byte
}

// unclosed returns the brackets still open at the end of the text, outermost first, skipping
// strings and comments; ok is false when a closer does not match its opener (another
// mistake than a missing closer).
func unclosed(text string) ([]opener, bool) {
	var stack []opener
	line := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			line++
		case c == '#':
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			q := string(c)
			if strings.HasPrefix(text[i:], q+q+q) {
				q = q + q + q
			}
			j := i + len(q)
			for j < len(text) && !strings.HasPrefix(text[j:], q) {
				if text[j] == '\\' {
					j++
				} else if text[j] == '\n' {
					if len(q) == 1 {
						break // an unterminated one-line string: another mistake
					}
					line++
				}
				j++
			}
			if j >= len(text) || text[j] == '\n' && len(q) == 1 {
				return nil, false
			}
			i = j + len(q) - 1
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, opener{line, c})
		case c == ')' || c == ']' || c == '}':
			if len(stack) == 0 || match[stack[len(stack)-1].char] != c {
				return nil, false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return stack, true
}
