package repair

import (
	"fmt"
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

func delTwiceGen(in *Input) []Candidate {
	if in.exception() != "KeyError" {
		return nil
	}
	l := in.crashLine()
	line := lineAt(in.Text, l)
	stmt := strings.TrimSpace(stripComment(line))
	obj, key, ok := deletedKey(stmt)
	if !ok {
		return nil // a drop run twice: removal.go
	}
	ran := -1
	for _, h := range in.History {
		for _, hl := range lines(h.Text) {
			if t := strings.TrimSpace(stripComment(hl)); t == stmt || sameDeletion(t, obj, key) {
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
	o, k, ok := deletedKey(stmt)
	return ok && o == obj && strings.Trim(k, `'"`) == strings.Trim(key, `'"`)
}

// deletedKey parses, on the syntax tree, a statement `del obj["key"]` (obj a name or a
// dotted name, the key a string literal) into obj and the key as written.
func deletedKey(stmt string) (string, string, bool) {
	f := analysis.ParseCell(stmt)
	if len(f.SyntaxErrors) > 0 || len(f.Statements) != 1 || f.Statements[0].Kind != analysis.StmtDelete || len(f.Statements[0].Targets) != 1 {
		return "", "", false
	}
	t := f.Statements[0].Targets[0]
	if t.Kind != analysis.ExprSubscript || t.Value == nil || t.Index == nil || !isPlainString(t.Index) {
		return "", "", false
	}
	obj, ok := t.Value.Chain()
	return obj, t.Index.Text, ok
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
