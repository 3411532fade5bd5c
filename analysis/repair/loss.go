package repair

import (
	"strings"

	"github.com/premortem/premortem/finding"
)

// Loss says what data a fix throws away, "" when it keeps every value: a conversion with
// errors='coerce' turns what does not parse into NaN, dropna and drop_duplicates drop rows
// (filling missing values is imputation, which a fix's title names as such). Such a fix may still be the right one,
// but the user must see it in the title, and any lossless fix that works ranks first
// (judge's ranking asks this for every candidate, whichever family or the LLM made it).
func Loss(f finding.Fix) string {
	var what []string
	for _, e := range f.Edits {
		t := strings.ReplaceAll(e.NewText, " ", "")
		switch {
		case strings.Contains(t, "errors='coerce'") || strings.Contains(t, `errors="coerce"`):
			what = appendOnce(what, "values that do not parse become NaN")
		case strings.Contains(t, ".dropna(") || strings.Contains(t, ".drop_duplicates("):
			what = appendOnce(what, "rows are dropped")
		}
	}
	return strings.Join(what, "; ")
}

// LossTitle is a fix's title with the data it loses said, unless the title says so already.
func LossTitle(f finding.Fix) string {
	l := Loss(f)
	if l == "" || strings.Contains(f.Title, "loses data") {
		return f.Title
	}
	return f.Title + " (loses data: " + l + ")"
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}
