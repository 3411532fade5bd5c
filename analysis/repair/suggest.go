package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// The names that exist where one was missing, as the failing run saw them: dir() of the
// object an attribute was looked up on, the crash frame's namespace for a name
// (facts.ShadowResult.Suggestions, what Python 3.12's "Did you mean" reads). The misspelled
// attribute or name on the crash line becomes each of them, nearest first; the run decides.
// An object the cell built itself, a module (np.arrange), a fitted estimator, the globals
// of a helper an earlier cell defines: whatever the run held. For any other exception that
// quotes a value the library refused, they are the valid values near it in the table the
// code that raised holds (the string literal becomes each).

func init() {
	register(family{name: "suggested-name", gen: suggestGen})
}

func suggestGen(in *Input) []Candidate {
	var out []Candidate
	exc := in.exception()
	s := in.Suggestions
	if s == nil || s.Name == "" || len(s.Candidates) == 0 {
		return nil
	}
	// A keyword the callee's object has no property for (matplotlib's fontweigth=):
	// the keyword becomes each property near it.
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		for _, k := range c.Keywords {
			if k.Name != s.Name {
				continue
			}
			r := finding.Range{Start: k.Range.Start, End: finding.Position{Line: k.Range.Start.Line, Character: k.Range.Start.Character + len(k.Name)}}
			for _, cand := range s.Candidates {
				if !isIdent(cand) {
					continue
				}
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Rename the keyword %s to %s (a property the object has)", s.Name, cand), Edits: []finding.Edit{replaceAt(r, cand)}},
					Keeps: fmt.Sprintf("the same value, given to %s, the property spelled nearest to %s", cand, s.Name),
				})
			}
		}
	}
	switch exc {
	case "AttributeError":
		for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprAttribute && e.Name == s.Name }) {
			obj := "the object"
			if e.Value != nil {
				obj = e.Value.Text
			}
			for _, c := range s.Candidates {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use %s.%s (%s has no attribute %s)", obj, c, obj, s.Name), Edits: []finding.Edit{replaceAt(e.NameRange, c)}},
					Keeps: fmt.Sprintf("%s is the attribute of %s spelled nearest to %s", c, obj, s.Name),
				})
			}
			break
		}
	default:
		// A value the library refused, and the valid ones near it from the table the code
		// that raised holds (sklearn's scorers for scoring="acc"): the string literal
		// holding the refused value becomes each.
		for _, e := range in.exprsOnLine(in.crashLine(), isPlainString) {
			if v, _ := e.Const.(string); v != s.Name {
				continue
			}
			q := e.Text[:1]
			for _, c := range s.Candidates {
				if strings.ContainsAny(c, "'\"\\\n") {
					continue
				}
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use '%s', a value the library takes, for '%s'", c, s.Name), Edits: []finding.Edit{replaceAt(e.Range, q+c+q)}},
					Keeps: fmt.Sprintf("'%s' is the value nearest to '%s' in the library's own table of valid ones", c, s.Name),
				})
			}
		}
	case "NameError":
		if in.Unrun[s.Name] {
			return nil // a cell that has not run binds it: running that cell is the repair
		}
		for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName && e.Name == s.Name }) {
			for _, c := range s.Candidates {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use %s (nothing is named %s)", c, s.Name), Edits: []finding.Edit{replaceAt(e.Range, c)}},
					Keeps: fmt.Sprintf("%s is the name spelled nearest to %s where the line ran", c, s.Name),
				})
			}
			break
		}
	}
	return out
}
