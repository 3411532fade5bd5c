package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A Series used as if it were one value: df["City"].lower() ("'Series' object has no
// attribute 'lower'") means every value's lower(), which pandas spells .str.lower();
// df["date"].year means .dt.year. The other way, .dt on text dates ("Can only use .dt
// accessor with datetimelike values") parses them with pd.to_datetime first. The methods
// of str and the fields of a timestamp are Python's and pandas' own vocabulary, not cases.

func init() {
	register(family{name: "accessor", gen: accessorGen})
}

// strMethods are str's methods that pandas' .str accessor also has.
var strMethods = map[string]bool{"lower": true, "upper": true, "strip": true, "lstrip": true, "rstrip": true, "split": true,
	"rsplit": true, "replace": true, "startswith": true, "endswith": true, "find": true, "rfind": true, "title": true,
	"capitalize": true, "zfill": true, "isdigit": true, "isnumeric": true, "isalpha": true, "isalnum": true, "isspace": true,
	"islower": true, "isupper": true, "istitle": true, "isdecimal": true, "count": true, "center": true, "ljust": true,
	"rjust": true, "partition": true, "rpartition": true, "swapcase": true, "casefold": true, "join": true, "index": true,
	"rindex": true, "translate": true, "encode": true, "removeprefix": true, "removesuffix": true, "len": true, "contains": true}

// dtFields are the datetime fields and methods of pandas' .dt accessor.
var dtFields = map[string]bool{"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true,
	"dayofweek": true, "day_of_week": true, "weekday": true, "dayofyear": true, "day_of_year": true, "quarter": true,
	"date": true, "time": true, "is_month_start": true, "is_month_end": true, "days_in_month": true, "strftime": true,
	"month_name": true, "day_name": true, "normalize": true, "floor": true, "ceil": true, "round": true, "total_seconds": true,
	"days": true, "seconds": true, "tz_localize": true, "tz_convert": true, "to_period": true}

func accessorGen(in *Input) []Candidate {
	if in.exception() != "AttributeError" || in.Facts == nil {
		return nil
	}
	msg := in.message()
	if strings.Contains(msg, "Can only use .dt accessor with datetimelike values") && in.hasPandas() {
		return parseDates(in)
	}
	attr := quotedName(msg, "has no attribute ")
	if attr == "" || !strings.HasPrefix(msg, "'Series' object") {
		return nil
	}
	accessor := ""
	switch {
	case strMethods[attr]:
		accessor = ".str"
	case dtFields[attr]:
		accessor = ".dt"
	default:
		return nil
	}
	var out []Candidate
	for _, a := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprAttribute && e.Name == attr && e.Value != nil
	}) {
		p := a.Value.Range.End
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Use %s%s: %s applies to each value of the column", accessor, "."+attr, attr), Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: accessor}}},
			Keeps: fmt.Sprintf("the same %s, done on every value of %s", attr, a.Value.Text),
		})
	}
	return out
}

// parseDates wraps the object of each .dt on the crash line in pd.to_datetime.
func parseDates(in *Input) []Candidate {
	var out []Candidate
	for _, a := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprAttribute && e.Name == "dt" && e.Value != nil
	}) {
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Parse %s as dates with pd.to_datetime before .dt", a.Value.Text), Edits: []finding.Edit{replaceAt(a.Value.Range, "pd.to_datetime("+a.Value.Text+")")}},
			Keeps: fmt.Sprintf("the same dates, read from the text of %s", a.Value.Text),
		})
	}
	return out
}
