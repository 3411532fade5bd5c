package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Loops that walk their data the wrong way, found on the loops that enclose the crash line:
// a dict iterated for key, value pairs without .items() ("not enough values to unpack
// (expected 2, got 1)") or for its records without .values() ("string indices must be
// integers"); a range one past the end (range(len(xs) + 1), while i <= len(xs), xs[i + 1]
// over range(len(xs))) that indexes past the last item ("list index out of range").

func init() {
	register(family{name: "loop-walk", gen: loopWalkGen})
}

func loopWalkGen(in *Input) []Candidate {
	if in.Facts == nil {
		return nil
	}
	msg := in.message()
	chain := enclosing(in.Facts.Statements, in.crashLine())
	var out []Candidate
	switch in.exception() {
	case "ValueError":
		if strings.Contains(msg, "values to unpack") {
			out = dictLoops(in, chain, true)
		}
	case "TypeError":
		if strings.Contains(msg, "string indices must be integers") || strings.Contains(msg, "object is not subscriptable") {
			out = dictLoops(in, chain, false)
		}
	case "IndexError":
		if strings.Contains(msg, "out of range") || strings.Contains(msg, "out of bounds") {
			out = pastTheEnd(in, chain)
		}
	}
	return out
}

// dictLoops proposes .items() (pairs wanted) or .values() (records wanted) on the dicts the
// enclosing for loops iterate.
func dictLoops(in *Input, chain []*analysis.Statement, pairs bool) []Candidate {
	var out []Candidate
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		if s.Kind != analysis.StmtFor || s.Value == nil || len(s.Targets) != 1 || s.Targets[0] == nil {
			continue
		}
		unpacks := s.Targets[0].Kind == analysis.ExprTuple || s.Targets[0].Kind == analysis.ExprList
		if unpacks != pairs || (s.Value.Kind != analysis.ExprName && s.Value.Kind != analysis.ExprAttribute) {
			continue
		}
		if v, ok := in.value(s.Value.Text); ok && v.Kind != facts.KindDict {
			continue
		}
		method, what := ".items()", "its key, value pairs"
		if !pairs {
			method, what = ".values()", "its values"
			if c, ok := recordsByKey(s); ok {
				// The body reads the key itself too: it keeps the key, and each record is
				// read through it.
				out = append(out, c)
				continue
			}
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Loop over %s%s (a dict yields only its keys)", s.Value.Text, method), Edits: []finding.Edit{replaceAt(s.Value.Range, s.Value.Text+method)}},
			Keeps: fmt.Sprintf("the same loop over %s, reading %s", s.Value.Text, what),
		})
	}
	return out
}

// recordsByKey reads the records of a loop over a dict's keys through the key
// (d[k]["lr"] for k["lr"]) when the body also uses the key itself, so it keeps its
// meaning; false when it does not, or the loop variable is no plain name.
func recordsByKey(s *analysis.Statement) (Candidate, bool) {
	t := s.Targets[0]
	if t.Kind != analysis.ExprName {
		return Candidate{}, false
	}
	all := func(finding.Range) bool { return true }
	subs := walkExprs(s.Body, all, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprSubscript && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == t.Name
	})
	inSub := map[string]bool{}
	for _, e := range subs {
		inSub[rangeKey(e.Value.Range)] = true
	}
	bare := false
	for _, e := range walkExprs(s.Body, all, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName && e.Name == t.Name }) {
		bare = bare || !inSub[rangeKey(e.Range)]
	}
	if !bare || len(subs) == 0 {
		return Candidate{}, false
	}
	rec := s.Value.Text + "[" + t.Name + "]"
	var edits []finding.Edit
	for _, e := range subs {
		edits = append(edits, replaceAt(e.Value.Range, rec))
	}
	return Candidate{
		Fix:   finding.Fix{Title: fmt.Sprintf("Read each record as %s (the loop yields the keys of %s)", rec, s.Value.Text), Edits: edits},
		Keeps: fmt.Sprintf("%s stays the key where the loop uses it; its record is %s", t.Name, rec),
	}, true
}

// pastTheEnd proposes the bound one smaller in the enclosing loops: the + 1 of a range's
// end dropped, <= made <, and range(len(xs)) made range(len(xs) - 1) where the crash line
// reads xs[i + 1].
func pastTheEnd(in *Input, chain []*analysis.Statement) []Candidate {
	var out []Candidate
	plusOne := func(e *analysis.Expr) bool {
		return e != nil && e.Kind == analysis.ExprBinOp && e.Name == "+" && len(e.Args) == 2 && e.Args[1] != nil && e.Args[1].Kind == analysis.ExprConst && e.Args[1].Const == int64(1)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		switch {
		case s.Kind == analysis.StmtFor && isRangeCall(s.Value):
			end := s.Value.Args[len(s.Value.Args)-1]
			if len(s.Value.Args) == 3 {
				end = s.Value.Args[1]
			}
			if plusOne(end) {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("End the loop at %s, not one past it", end.Args[0].Text), Edits: []finding.Edit{replaceAt(end.Range, end.Args[0].Text)}},
					Keeps: "the same loop over every item, without the index past the last one",
				})
				continue
			}
			if end.Kind != analysis.ExprCall || len(s.Targets) != 1 || s.Targets[0].Kind != analysis.ExprName {
				continue
			}
			counter := s.Targets[0].Name
			if len(in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
				return e.Kind == analysis.ExprSubscript && plusOne(e.Index) && e.Index.Args[0].Kind == analysis.ExprName && e.Index.Args[0].Name == counter
			})) > 0 {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("End the loop one earlier, at %s - 1 (the line reads the item after %s)", end.Text, counter), Edits: []finding.Edit{replaceAt(end.Range, end.Text+" - 1")}},
					Keeps: fmt.Sprintf("the same pairs of neighbours, up to the last one; %s + 1 stays inside", counter),
				})
			}
		case s.Kind == analysis.StmtWhile && s.Value != nil && s.Value.Kind == analysis.ExprCompare && s.Value.Name == "<=":
			if r, ok := operatorRange(in.Text, s.Value, "<="); ok {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Loop while %s < %s, not <=", s.Value.Args[0].Text, s.Value.Args[1].Text), Edits: []finding.Edit{replaceAt(r, "<")}},
					Keeps: "the same loop over every item, without the index past the last one",
				})
			}
		}
	}
	return out
}

// isRangeCall reports whether e is range(...) with one to three positional arguments.
func isRangeCall(e *analysis.Expr) bool {
	return e != nil && e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == "range" && len(e.Args) >= 1 && len(e.Args) <= 3 && len(e.Keywords) == 0
}
