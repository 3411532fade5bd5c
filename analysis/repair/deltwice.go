package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
)

// A deletion run twice: `del df["Id"]` already ran in an executed cell, so running the same
// statement again raises KeyError. What the statement means — the frame has no Id column —
// already holds; the repair deletes only while the key is there, so the cell runs again and
// again as a notebook cell should. Only when the history ran the very same deletion.

func init() {
	register(family{name: "deleted-twice", gen: delTwiceGen})
}

var delKeyRE = regexp.MustCompile(`^del\s+([A-Za-z_][A-Za-z0-9_.]*)\[\s*(['"][^'"]+['"])\s*\]\s*$`)

func delTwiceGen(in *Input) []Candidate {
	if in.exception() != "KeyError" {
		return nil
	}
	l := in.crashLine()
	line := lineAt(in.Text, l)
	stmt := strings.TrimSpace(stripComment(line))
	m := delKeyRE.FindStringSubmatch(stmt)
	if m == nil {
		return dropAgain(in, stmt)
	}
	obj, key := m[1], m[2]
	ran := -1
	for _, h := range in.History {
		for _, hl := range lines(h.Text) {
			if t := strings.TrimSpace(stripComment(hl)); t == stmt || delKeyRE.FindStringSubmatch(t) != nil && sameDeletion(t, obj, key) {
				ran = h.Index
			}
		}
	}
	if ran < 0 {
		return nil
	}
	ind := indentOf(line)
	r := analysis.Range{Start: analysis.Position{Line: l, Character: analysis.UTF16Len(ind)}, End: analysis.Position{Line: l, Character: analysis.UTF16Len(strings.TrimRight(line, " \t\r"))}}
	return []Candidate{{
		Fix: analysis.Fix{
			Title: fmt.Sprintf("Delete %s[%s] only while it is there (cell %d already deleted it)", obj, key, ran+1),
			Edits: []analysis.Edit{replaceAt(r, fmt.Sprintf("if %s in %s:\n%s    %s", key, obj, ind, strings.TrimSpace(textOf(in.Text, r))))},
		},
		Keeps: fmt.Sprintf("cell %d ran the same deletion; %s already lacks %s, which is what the statement means", ran+1, obj, key),
	}}
}

func sameDeletion(stmt, obj, key string) bool {
	m := delKeyRE.FindStringSubmatch(stmt)
	return m != nil && m[1] == obj && strings.Trim(m[2], `'"`) == strings.Trim(key, `'"`)
}

// deletionKept reports whether a fix leaves a failing `del` statement as it is: deleting
// another key or name than the one written (the nearest existing column) throws that data
// away, so only fixes that keep the statement (a guard around it) keep the intent.
func deletionKept(in Input, edited string) bool {
	stmt := strings.TrimSpace(stripComment(lineAt(in.Text, in.crashLine())))
	if !strings.HasPrefix(stmt, "del ") {
		return true
	}
	for _, l := range lines(edited) {
		if strings.TrimSpace(stripComment(l)) == stmt {
			return true
		}
	}
	return false
}

// dropAgain repairs a drop statement an executed cell already ran, word for word
// (df.drop([10472], inplace=True) run a second time): the labels are gone, which is what
// the statement means, so the drop ignores labels already dropped. Verification shows
// whether the rest of the cell still runs without them.
func dropAgain(in *Input, stmt string) []Candidate {
	ran := -1
	for _, h := range in.History {
		for _, hl := range lines(h.Text) {
			if strings.TrimSpace(stripComment(hl)) == stmt {
				ran = h.Index
			}
		}
	}
	if ran < 0 {
		return nil
	}
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || !strings.HasSuffix(c.Callee, ".drop") || c.Range.Start.Line != c.Range.End.Line {
			continue
		}
		for _, kw := range c.Expr.Keywords {
			if kw.Name == "errors" {
				return nil
			}
		}
		if !strings.HasSuffix(c.Expr.Text, ")") {
			continue
		}
		inner := strings.TrimRight(strings.TrimSuffix(c.Expr.Text, ")"), " \t")
		sep := ", "
		if strings.HasSuffix(inner, "(") {
			sep = ""
		}
		at := c.Range.End
		at.Character--
		return []Candidate{{
			Fix: analysis.Fix{
				Title: fmt.Sprintf("Ignore labels already dropped (errors=\"ignore\"): cell %d ran this drop", ran+1),
				Edits: []analysis.Edit{{Range: analysis.Range{Start: at, End: at}, NewText: sep + `errors="ignore"`}},
			},
			Keeps: fmt.Sprintf("cell %d ran the same drop; the labels it drops are already gone", ran+1),
		}}
	}
	return nil
}
