package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/finding"
)

// A date format the data is not written in: pd.to_datetime(s, format="%m/%d/%Y") on
// "25/03/2021" ("time data '25/03/2021' does not match format '%m/%d/%Y'"). The message
// quotes the format; the literal on the crash line that holds it is rewritten with the
// day and month swapped, or the year's two and four digits swapped, and the run keeps the
// one the whole column parses with. Every date is still read; none becomes NaT.

func init() {
	register(family{name: "date-format", gen: dateFormatGen})
}

func dateFormatGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "ValueError" || !strings.Contains(msg, "does not match format") {
		return nil
	}
	var out []Candidate
	for _, lit := range in.exprsOnLine(in.crashLine(), isPlainString) {
		f, _ := lit.Const.(string)
		if !strings.Contains(f, "%") || !strings.Contains(msg, "'"+f+"'") {
			continue
		}
		q := lit.Text[:1]
		for _, alt := range []string{swapDirectives(f, "%d", "%m"), swapDirectives(f, "%Y", "%y")} {
			if alt == f || strings.Contains(alt, q) {
				continue
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Read the dates as %s (the data is not written %s)", alt, f), Edits: []finding.Edit{replaceAt(lit.Range, q+alt+q)}},
				Keeps: fmt.Sprintf("every date is parsed, in the order its text is written (%s)", alt),
			})
		}
	}
	return out
}

// swapDirectives exchanges two strftime directives in a format.
func swapDirectives(f, a, b string) string {
	const hold = "\x00"
	return strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(f, a, hold), b, a), hold, b)
}
