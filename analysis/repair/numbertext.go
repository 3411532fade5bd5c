package repair

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Numbers written as text with symbols ("$36,945 ", "1,250", "12 %"), converted where the
// conversion fails: the value the message quotes says which characters stand in the way,
// and once they are removed it must parse as a number, or nothing is proposed (a repeated
// header row "Age" is no number with symbols). The conversion's operand is cleaned of
// exactly those characters first: pd.to_numeric(s) and s.astype(float) get
// s.str.replace(r"[$, ]", "", regex=True). errors='coerce', which the message suggests,
// would turn every such value into NaN: it is never proposed.

func init() {
	register(family{name: "number-text", gen: numberTextGen})
}

var quotedValueRE = regexp.MustCompile(`(?:Unable to parse string|could not convert string to float:|invalid literal for int\(\) with base 10:|strings such as)\s*["']([^"']*)["']`)

func numberTextGen(in *Input) []Candidate {
	if e := in.exception(); e != "ValueError" && e != "TypeError" {
		return nil
	}
	var sample string
	for _, msg := range []string{in.message(), in.Finding.Message} {
		if m := quotedValueRE.FindStringSubmatch(msg); m != nil {
			sample = m[1]
			break
		}
	}
	junk, ok := junkChars(sample)
	if !ok {
		return nil
	}
	class := charClass(junk)
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && e.Value != nil }) {
		callee, _ := e.Value.Chain()
		var operand *analysis.Expr
		switch {
		case strings.HasSuffix(callee, "to_numeric") && len(e.Args) > 0:
			operand = e.Args[0]
		case e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "astype" && e.Value.Value != nil:
			operand = e.Value.Value
		default:
			continue
		}
		if !in.maybeSeries(operand) {
			continue
		}
		text := operand.Text
		if operand.Kind != analysis.ExprName && operand.Kind != analysis.ExprAttribute && operand.Kind != analysis.ExprSubscript && operand.Kind != analysis.ExprCall {
			text = "(" + text + ")"
		}
		out = append(out, Candidate{
			Fix: finding.Fix{Title: fmt.Sprintf("Remove %s from %s before converting (values such as %q)", describeChars(junk), strings.TrimSpace(operand.Text), sample),
				Edits: []finding.Edit{replaceAt(operand.Range, text+`.str.replace(r"`+class+`", "", regex=True)`)}},
			Keeps: fmt.Sprintf("every value keeps its number: %q reads %s once %s go", sample, strings.Map(func(r rune) rune {
				if strings.ContainsRune(junk, r) {
					return -1
				}
				return r
			}, sample), describeChars(junk)),
		})
	}
	return out
}

// junkChars returns the characters of s that stand between it and a number ("$, " of
// "$36,945 "); ok only when s is a number once they are removed.
func junkChars(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var junk, kept strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+':
			kept.WriteRune(r)
		case strings.ContainsRune("$€£¥,% \t_'", r):
			if !strings.ContainsRune(junk.String(), r) {
				junk.WriteRune(r)
			}
		default:
			return "", false // letters: not a number with symbols
		}
	}
	if junk.Len() == 0 {
		return "", false
	}
	if _, err := strconv.ParseFloat(kept.String(), 64); err != nil {
		return "", false
	}
	return junk.String(), true
}

// charClass is a regular expression class of the characters in junk.
func charClass(junk string) string {
	var b strings.Builder
	b.WriteByte('[')
	for _, r := range junk {
		switch r {
		case ' ', '\t':
			if !strings.Contains(b.String(), `\s`) {
				b.WriteString(`\s`)
			}
		case '\\', ']', '^', '-':
			b.WriteRune('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// describeChars names the characters for a title: "'$', ',' and spaces".
func describeChars(junk string) string {
	var parts []string
	space := false
	for _, r := range junk {
		if r == ' ' || r == '\t' {
			space = true
			continue
		}
		parts = append(parts, "'"+string(r)+"'")
	}
	if space {
		parts = append(parts, "spaces")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// maybeSeries reports whether e may be a pandas Series: a column subscript, or a value the
// facts know as a Series; false for what the facts know is anything else.
func (in *Input) maybeSeries(e *analysis.Expr) bool {
	if e == nil {
		return false
	}
	if name, ok := e.Chain(); ok {
		if v, ok := in.value(name); ok {
			return v.Kind == facts.KindSeries
		}
		return false
	}
	return e.Kind == analysis.ExprSubscript
}
