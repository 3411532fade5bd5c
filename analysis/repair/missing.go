package repair

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
)

// Missing column, key, attribute or name: point the failing reference at the existing name
// it most likely meant (same spelling in another case, a merge suffix, a small typo), or at
// the name the history renamed it to. The reference stays where it is; only its label
// changes, so the cell still reads the same data.

func init() {
	register(family{name: "missing-name", gen: missingGen, wanted: missingWanted})
}

var (
	quotedRE     = regexp.MustCompile(`['"]([^'"]+)['"]`)
	notFoundRE   = regexp.MustCompile(`Column\(?s?\)? not found: (.+)$`)
	nameErrorRE  = regexp.MustCompile(`name '([^']+)' is not defined`)
	attrErrorRE  = regexp.MustCompile(`'([^']+)' object has no attribute '([^']+)'`)
	moduleAttrRE = regexp.MustCompile(`module '([^']+)' has no attribute '([^']+)'`)
)

func missingGen(in *Input) []Candidate {
	switch in.exception() {
	case "KeyError":
		return missingKey(in)
	case "AttributeError":
		return missingAttr(in)
	case "NameError", "UnboundLocalError":
		return misspelledName(in)
	}
	return nil
}

func missingWanted(in *Input) []string {
	// The frames the history built: renames and merges tell which columns exist.
	var out []string
	for _, h := range in.History {
		if h.Facts == nil {
			continue
		}
		for _, d := range h.Facts.Defs {
			if d.Kind == analysis.DefAssign {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

// missingKeys returns the labels the KeyError is about, from the message and the finding.
func missingKeys(in *Input) []string {
	msg := in.message()
	var keys []string
	if m := notFoundRE.FindStringSubmatch(msg); m != nil {
		for _, k := range strings.Split(m[1], ",") {
			keys = append(keys, strings.Trim(strings.TrimSpace(k), `'"[]`))
		}
	}
	for _, m := range quotedRE.FindAllStringSubmatch(msg, -1) {
		keys = append(keys, m[1])
	}
	// A rule's finding covers the key literal itself.
	if t := strings.Trim(textOf(in.Text, in.Finding.Range), `'"`); t != "" && !strings.ContainsAny(t, "()[]= \n") {
		keys = append(keys, t)
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if k != "" && !seen[k] && !strings.Contains(k, " not in ") {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// labelPool gathers the labels that exist: columns of the frames on the crash line first,
// then of every frame the inspection knows, then dict keys.
func labelPool(in *Input) []string {
	if in.Inspection == nil {
		return nil
	}
	seen := map[string]bool{}
	var pool []string
	add := func(v facts.Value) {
		for _, c := range v.Columns {
			if s, ok := c.Name.(string); ok && !seen[s] {
				seen[s] = true
				pool = append(pool, s)
			}
		}
		for _, k := range v.Keys {
			if s, ok := k.(string); ok && !seen[s] {
				seen[s] = true
				pool = append(pool, s)
			}
		}
	}
	line := lineAt(in.Text, in.crashLine())
	names := make([]string, 0, len(in.Inspection.Values))
	for n := range in.Inspection.Values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).MatchString(line) {
			add(in.Inspection.Values[n])
		}
	}
	for _, n := range names {
		add(in.Inspection.Values[n])
	}
	return pool
}

func missingKey(in *Input) []Candidate {
	pool := labelPool(in)
	ren := renames(in.History)
	start := statementStart(in.Text, in.crashLine())
	var out []Candidate
	for _, key := range missingKeys(in) {
		var targets []string
		why := map[string]string{}
		if nw, ok := ren[key]; ok {
			targets = append(targets, nw)
			why[nw] = fmt.Sprintf("an earlier cell renamed %q to %q; the cell reads the renamed column", key, nw)
		}
		for _, n := range nearest(key, pool, 3) {
			if _, dup := why[n]; !dup {
				targets = append(targets, n)
				why[n] = fmt.Sprintf("%q exists; %q does not (spelling, case or merge suffix)", n, key)
			}
		}
		for _, nw := range targets {
			var edits []analysis.Edit
			for l := start; l <= in.crashLine(); l++ {
				for _, q := range []string{"'", `"`} {
					for _, r := range findOnLine(in.Text, l, q+key+q) {
						edits = append(edits, replaceAt(r, q+nw+q))
					}
				}
			}
			if len(edits) == 0 {
				continue
			}
			out = append(out, Candidate{
				Fix:   analysis.Fix{Title: fmt.Sprintf("Use column '%s' instead of '%s'", nw, key), Edits: edits},
				Keeps: why[nw],
			})
		}
	}
	return out
}

func missingAttr(in *Input) []Candidate {
	msg := in.message()
	var typ, attr string
	if m := attrErrorRE.FindStringSubmatch(msg); m != nil {
		typ, attr = m[1], m[2]
	} else if m := moduleAttrRE.FindStringSubmatch(msg); m != nil {
		typ, attr = "module", m[2]
	}
	if attr == "" || in.Facts == nil || typ == "NoneType" {
		return nil
	}
	var out []Candidate
	for _, a := range in.Facts.Attrs {
		for i, p := range a.Parts {
			if p != attr || i == 0 || i >= len(a.PartRanges) || a.PartRanges[i].Start.Line != in.crashLine() {
				continue
			}
			base := strings.Join(a.Parts[:i], ".")
			v, ok := in.value(base)
			if !ok {
				continue
			}
			var pool []string
			for _, c := range v.Columns {
				if s, ok := c.Name.(string); ok && isIdent(s) {
					pool = append(pool, s)
				}
			}
			pool = append(pool, v.Attributes...)
			if v.Estimator != nil {
				pool = append(pool, v.Estimator.Methods...)
			}
			for _, n := range nearest(attr, pool, 2) {
				out = append(out, Candidate{
					Fix:   analysis.Fix{Title: fmt.Sprintf("Use %s.%s instead of .%s", base, n, attr), Edits: []analysis.Edit{replaceAt(a.PartRanges[i], n)}},
					Keeps: fmt.Sprintf("%s has %s; it has no %s", base, n, attr),
				})
			}
			return out
		}
	}
	return out
}

func misspelledName(in *Input) []Candidate {
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil || in.Facts == nil || in.Inspection == nil {
		return nil
	}
	wrong := m[1]
	var pool []string
	pool = append(pool, in.Inspection.Namespace...)
	for _, d := range in.Facts.Defs {
		pool = append(pool, d.Name)
	}
	var out []Candidate
	for _, n := range nearest(wrong, pool, 2) {
		var edits []analysis.Edit
		for _, u := range in.Facts.Uses {
			if u.Name == wrong && u.InFunction == "" {
				edits = append(edits, replaceAt(u.Range, n))
			}
		}
		if len(edits) == 0 {
			continue
		}
		out = append(out, Candidate{
			Fix:   analysis.Fix{Title: fmt.Sprintf("Use %s instead of %s", n, wrong), Edits: edits},
			Keeps: fmt.Sprintf("%s is defined; %s is not (spelling)", n, wrong),
		})
	}
	return out
}
