package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// A variable reused for something else: `model` was a fitted regressor, then a later cell
// bound `model = MinMaxScaler().fit(X_train)`, and the target's model.predict fails on the
// scaler. The repair gives the later cell's object a name of its own (`scaler`), in that
// cell only, so model stays what the earlier cell bound: the later cell computes what it
// did, the target reads what it meant. Verified by re-running the history with the edit.
// Only when the later cell binds the name before reading it and no cell run after it reads
// the name (they would mean the new object).

func init() {
	register(family{name: "overwritten-name", gen: overwrittenGen})
}

var roleSuffixes = []string{"Scaler", "Encoder", "Imputer", "Transformer", "Vectorizer", "Selector", "Regressor", "Classifier", "Pipeline"}

func overwrittenGen(in *Input) []Candidate {
	if in.exception() != "AttributeError" || in.Facts == nil {
		return nil
	}
	m := attrErrorRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	class, attr := m[1], m[2]
	obj := ""
	for _, a := range in.Facts.Attrs {
		if len(a.Parts) >= 2 && a.Parts[1] == attr && a.Range.Start.Line <= in.crashLine() && in.crashLine() <= a.Range.End.Line {
			obj = a.Parts[0]
			break
		}
	}
	if obj == "" || bindsBefore(in.Facts, obj, in.crashLine()) {
		return nil
	}
	// The last cell run that binds obj, and an earlier one that bound it differently.
	last, earlier := -1, -1
	for i, h := range in.History {
		if bindsTop(h, obj) {
			earlier, last = last, i
		}
	}
	if last < 0 || earlier < 0 {
		return nil
	}
	b := in.History[last]
	// The later cell built the object the message names (MinMaxScaler()), the earlier one
	// something else: otherwise the name was not reused, it never had the attribute.
	classRE := regexp.MustCompile(`\b` + regexp.QuoteMeta(class) + `\b`)
	if !classRE.MatchString(b.Text) || classRE.MatchString(in.History[earlier].Text) {
		return nil
	}
	bf := b.Facts
	if bf == nil {
		bf = analysis.ParseCell(b.Text)
	}
	for _, u := range bf.Uses {
		if u.Name == obj {
			return nil // the cell reads the old value before rebinding it
		}
	}
	for _, h := range in.History[last+1:] {
		hf := h.Facts
		if hf == nil {
			hf = analysis.ParseCell(h.Text)
		}
		for _, u := range hf.Uses {
			if u.Name == obj {
				return nil // a later cell reads the new object under that name
			}
		}
	}
	fresh := freshName(in, roleName(class))
	if fresh == "" {
		return nil
	}
	var edits []finding.Edit
	for l, line := range lines(b.Text) {
		for _, r := range identOccurrences(line, obj) {
			edits = append(edits, finding.Edit{Cell: b.ID, Range: finding.Range{
				Start: finding.Position{Line: l, Character: analysis.UTF16Len(line[:r[0]])},
				End:   finding.Position{Line: l, Character: analysis.UTF16Len(line[:r[1]])},
			}, NewText: fresh})
		}
	}
	if len(edits) == 0 {
		return nil
	}
	return []Candidate{{
		Fix: finding.Fix{
			Title: fmt.Sprintf("Name cell %d's %s %s, so %s stays what cell %d bound (run cells %d and %d again)", b.Index+1, class, fresh, obj, in.History[earlier].Index+1, in.History[earlier].Index+1, b.Index+1),
			Edits: edits,
		},
		Keeps: fmt.Sprintf("cell %d reused %s for a %s; under its own name it computes the same, and %s keeps the object the cell means", b.Index+1, obj, class, obj),
	}}
}

// bindsBefore reports whether the cell binds name above line l (then the cell's own
// binding is what failed, not the history's).
func bindsBefore(cf *analysis.CellFacts, name string, l int) bool {
	for _, d := range cf.Defs {
		if d.Name == name && d.Range.Start.Line <= l {
			return true
		}
	}
	return false
}

// roleName is a variable name for an object of class: its role (MinMaxScaler: scaler),
// else the class in lower case.
func roleName(class string) string {
	for _, s := range roleSuffixes {
		if strings.HasSuffix(class, s) && class != s {
			return strings.ToLower(s)
		}
	}
	return strings.ToLower(class)
}

// freshName returns base, or base2..., that no cell and no kernel variable uses; "" when
// base is no identifier.
func freshName(in *Input, base string) string {
	if !isIdent(base) || keywords[base] {
		return ""
	}
	texts := []string{in.Text}
	for _, h := range in.History {
		texts = append(texts, h.Text)
	}
	for _, u := range in.Unran {
		texts = append(texts, u.Text)
	}
	used := func(n string) bool {
		if in.inNamespace(n) || analysis.IsBuiltin(n) {
			return true
		}
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`)
		for _, t := range texts {
			if re.MatchString(t) {
				return true
			}
		}
		return false
	}
	for i := 1; i < 10; i++ {
		n := base
		if i > 1 {
			n = base + itoa(i)
		}
		if !used(n) {
			return n
		}
	}
	return ""
}

// identOccurrences returns the byte spans of name on line as an identifier of its own
// (not an attribute, not inside a string or comment, not a keyword argument's name).
func identOccurrences(line, name string) [][2]int {
	code := blankStrings(line)
	var out [][2]int
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for _, m := range re.FindAllStringIndex(code, -1) {
		before := strings.TrimRight(code[:m[0]], " \t")
		after := strings.TrimLeft(code[m[1]:], " \t")
		if strings.HasSuffix(before, ".") {
			continue
		}
		if (strings.HasSuffix(before, "(") || strings.HasSuffix(before, ",")) && strings.HasPrefix(after, "=") && !strings.HasPrefix(after, "==") {
			continue
		}
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

// blankStrings replaces what string literals and a comment hold with spaces, keeping every
// byte offset.
func blankStrings(line string) string {
	b := []byte(line)
	scanCode(line, func(i int, c byte, inString bool) bool {
		switch {
		case inString:
			b[i] = ' '
		case c == '#':
			for k := i; k < len(b); k++ {
				b[k] = ' '
			}
			return false
		}
		return true
	})
	return string(b)
}
