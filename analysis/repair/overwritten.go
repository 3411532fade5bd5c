package repair

import (
	"fmt"
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
	bf := b.Facts
	if bf == nil {
		bf = analysis.ParseCell(b.Text)
	}
	ef := in.History[earlier].Facts
	if ef == nil {
		ef = analysis.ParseCell(in.History[earlier].Text)
	}
	if !namesIn(bf)[class] || namesIn(ef)[class] {
		return nil
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
	// Every occurrence of obj as a name of its own in that cell (not an attribute, a string
	// or a keyword argument's name), bound or read.
	var edits []finding.Edit
	for _, e := range walkExprs(bf.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprName && e.Name == obj
	}) {
		edits = append(edits, finding.Edit{Cell: b.ID, Range: e.Range, NewText: fresh})
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
		for _, t := range texts {
			if namesIn(analysis.ParseCell(t))[n] {
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

// namesIn returns every name a cell binds or reads, at any depth, and every part of the
// attribute chains it reads (MinMaxScaler in preprocessing.MinMaxScaler()).
func namesIn(cf *analysis.CellFacts) map[string]bool {
	out := map[string]bool{}
	for _, d := range cf.Defs {
		out[d.Name] = true
	}
	for _, u := range cf.Uses {
		out[u.Name] = true
	}
	for _, a := range cf.Attrs {
		for _, p := range a.Parts {
			out[p] = true
		}
	}
	for _, e := range walkExprs(cf.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprName || e.Kind == analysis.ExprAttribute
	}) {
		out[e.Name] = true
	}
	return out
}
