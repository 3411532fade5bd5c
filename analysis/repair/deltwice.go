package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
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
		return nil // a drop run twice: removal.go
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
	r := finding.Range{Start: finding.Position{Line: l, Character: analysis.UTF16Len(ind)}, End: finding.Position{Line: l, Character: analysis.UTF16Len(strings.TrimRight(line, " \t\r"))}}
	return []Candidate{{
		Fix: finding.Fix{
			Title: fmt.Sprintf("Delete %s[%s] only while it is there (cell %d already deleted it)", obj, key, ran+1),
			Edits: []finding.Edit{replaceAt(r, fmt.Sprintf("if %s in %s:\n%s    %s", key, obj, ind, strings.TrimSpace(textOf(in.Text, r))))},
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
