package repair

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// The intent guard's reading of code, on the syntax tree: which identifiers a line uses
// (so an edit that comments out or deletes the failing statement is caught, while one that
// renames a keyword is not), and whether an edit added a construct that silences an error
// instead of repairing it. Where the crash line does not parse (a SyntaxError cell), the
// identifiers come from a token scan of the line, strings and comments skipped.

// silencers are the calls that hide an error: the warnings filter, contextlib.suppress and
// the exits that end the cell before it can fail.
var silencers = map[string]bool{"suppress": true, "filterwarnings": true, "simplefilter": true, "exit": true, "quit": true, "_exit": true}

// silences reports whether after holds more error-hiding constructs than before: try
// statements, pass, raise SystemExit, or calls that suppress warnings or exit.
func silences(before, after string) bool {
	return silencerCount(before) < silencerCount(after)
}

// silencerCount counts the error-hiding constructs of text.
func silencerCount(text string) int {
	f := analysis.ParseCell(text)
	n := 0
	walkStmts(f.Statements, false, func(s *analysis.Statement) {
		switch s.Kind {
		case analysis.StmtTry:
			n++
		case analysis.StmtOther:
			t := strings.TrimSpace(textOf(text, s.Range))
			if t == "pass" || strings.HasPrefix(t, "raise SystemExit") {
				n++
			}
		}
	})
	for _, c := range walkExprs(f.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && (e.Value.Kind == analysis.ExprName || e.Value.Kind == analysis.ExprAttribute)
	}) {
		if silencers[c.Value.Name] {
			n++
		}
	}
	return n
}

// lineIdentifiers returns the identifiers line l of the cell reads or names (names and
// attribute names), without keyword-argument names, which a repair of a call may rename.
func lineIdentifiers(text string, f *analysis.CellFacts, l int) []string {
	if f == nil {
		f = analysis.ParseCell(text)
	}
	for _, r := range f.SyntaxErrors {
		if r.Start.Line <= l && r.End.Line >= l {
			return scanIdentifiers(stripComment(lineAt(text, l)))
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range walkExprs(f.Statements, func(r finding.Range) bool { return r.Start.Line <= l && r.End.Line >= l }, func(e *analysis.Expr) bool {
		return (e.Kind == analysis.ExprName || e.Kind == analysis.ExprAttribute) && e.Range.Start.Line <= l && e.Range.End.Line >= l
	}) {
		n := e.Name
		if e.Kind == analysis.ExprAttribute && e.NameRange.Start.Line != l {
			continue
		}
		if e.Kind == analysis.ExprName && e.Range.Start.Line != l {
			continue
		}
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// cellIdentifiers returns every identifier the cell's code holds: the names its
// expressions read, attribute and keyword names, and the names it binds.
func cellIdentifiers(text string) map[string]bool {
	f := analysis.ParseCell(text)
	out := map[string]bool{}
	for _, d := range f.Defs {
		out[d.Name] = true
	}
	for _, e := range walkExprs(f.Statements, func(finding.Range) bool { return true }, func(*analysis.Expr) bool { return true }) {
		if e.Kind == analysis.ExprName || e.Kind == analysis.ExprAttribute {
			out[e.Name] = true
		}
		for _, k := range e.Keywords {
			out[k.Name] = true
		}
	}
	walkStmts(f.Statements, false, func(s *analysis.Statement) {
		if s.Name != "" {
			out[s.Name] = true
		}
	})
	if len(f.SyntaxErrors) > 0 {
		// The parts that do not parse still hold the user's code.
		for _, l := range lines(text) {
			for _, id := range scanIdentifiers(stripComment(l)) {
				out[id] = true
			}
		}
	}
	return out
}

// scanIdentifiers returns the identifiers of a line of code outside string literals.
func scanIdentifiers(line string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			id := line[start:end]
			if !(id[0] >= '0' && id[0] <= '9') && !keywords[id] {
				out = append(out, id)
			}
			start = -1
		}
	}
	scanCode(line, func(i int, c byte, inString bool) bool {
		if !inString && isIdentByte(c) {
			if start < 0 {
				start = i
			}
			return true
		}
		flush(i)
		return true
	})
	flush(len(line))
	return out
}
