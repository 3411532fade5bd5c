package repair

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
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
	// The crash line's own objects as the shadow run saw them at the crash come first:
	// they include frames the cell itself built.
	for _, ck := range in.CrashKeys {
		if ck.Kind == "series" {
			continue // row labels: not the columns a name is misspelled from
		}
		add(facts.Value{Keys: ck.Keys})
	}
	// Then the frames the failing run held where the line ran (the crash frame's facts; at a
	// site, the facts of the helper's own frame).
	cf := make([]string, 0, len(in.CrashFacts))
	for n := range in.CrashFacts {
		cf = append(cf, n)
	}
	sort.Strings(cf)
	for _, n := range cf {
		add(in.CrashFacts[n])
	}
	if in.Inspection == nil {
		return pool
	}
	read := in.namesOnLine(in.crashLine())
	names := make([]string, 0, len(in.Inspection.Values))
	for n := range in.Inspection.Values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if read[n] {
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
	keys := missingKeys(in)
	for _, key := range keys {
		out = append(out, otherFrame(in, key)...)
		out = append(out, mergeKeys(in, key)...)
		out = append(out, keptInHistory(in, key)...)
	}
	for _, key := range keys {
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
		for _, n := range sameWords(key, pool, 2) {
			if _, dup := why[n]; !dup {
				targets = append(targets, n)
				why[n] = fmt.Sprintf("%q exists; %q does not (the same words, without the unit or separators)", n, key)
			}
		}
		if n, ok := sameRole(key, pool); ok {
			if _, dup := why[n]; !dup {
				targets = append(targets, n)
				why[n] = fmt.Sprintf("%q exists; %q does not, and both are names notebooks give the same step", n, key)
			}
		}
		for _, nw := range targets {
			var edits []finding.Edit
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
				Fix:   finding.Fix{Title: fmt.Sprintf("Use column '%s' instead of '%s'", nw, key), Edits: edits},
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
				// A frame the cell built itself: its columns as the shadow run saw them.
				for _, ck := range in.CrashKeys {
					if ck.Expr == base && ck.Kind == "dataframe" {
						v, ok = facts.Value{Kind: facts.KindDataFrame}, true
						for _, k := range ck.Keys {
							v.Columns = append(v.Columns, facts.Column{Name: k})
						}
					}
				}
			}
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
					Fix:   finding.Fix{Title: fmt.Sprintf("Use %s.%s instead of .%s", base, n, attr), Edits: []finding.Edit{replaceAt(a.PartRanges[i], n)}},
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
	if in.Unrun[wrong] {
		return nil // defined by a cell that has not run: the name is right, the order is not
	}
	var pool []string
	pool = append(pool, in.Inspection.Namespace...)
	for _, d := range in.Facts.Defs {
		pool = append(pool, d.Name)
	}
	return renameCandidates(in, wrong, nearest(wrong, pool, 2), "spelling")
}

// renameCandidates replaces the cell's top-level uses of the undefined name wrong with each
// of names in turn; why says how the name was matched ("spelling").
func renameCandidates(in *Input, wrong string, names []string, why string) []Candidate {
	var out []Candidate
	for _, n := range names {
		var edits []finding.Edit
		for _, u := range in.Facts.Uses {
			if u.Name == wrong && u.InFunction == "" {
				edits = append(edits, replaceAt(u.Range, n))
			}
		}
		if len(edits) == 0 {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Use %s instead of %s", n, wrong), Edits: edits},
			Keeps: fmt.Sprintf("%s is defined; %s is not (%s)", n, wrong, why),
		})
	}
	return out
}

// frameNames are the DataFrames the inspection knows, sorted.
func frameNames(in *Input) []string {
	if in.Inspection == nil {
		return nil
	}
	var out []string
	for n, v := range in.Inspection.Values {
		if v.Exists && v.Kind == facts.KindDataFrame && isIdent(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func hasColumn(v facts.Value, col string) bool {
	for _, c := range v.Columns {
		if s, ok := c.Name.(string); ok && s == col {
			return true
		}
	}
	return false
}

// otherFrame reads the column from the frame that has it: `orders.groupby('region')` where
// only `merged` (orders joined with customers) has region, and has every other column the
// statement reads from orders.
func otherFrame(in *Input, key string) []Candidate {
	line := lineAt(in.Text, in.crashLine())
	var out []Candidate
	frames := frameNames(in)
	for _, obj := range frames {
		v, _ := in.value(obj)
		if hasColumn(v, key) {
			continue
		}
		uses := in.nameRanges(in.crashLine(), obj)
		if len(uses) == 0 || !strings.Contains(line, "'"+key+"'") && !strings.Contains(line, `"`+key+`"`) {
			continue
		}
		// The other labels the line reads from obj must exist in the replacement too.
		var others []string
		for _, m := range quotedRE.FindAllStringSubmatch(line, -1) {
			if m[1] != key && hasColumn(v, m[1]) {
				others = append(others, m[1])
			}
		}
		for _, alt := range frames {
			av, _ := in.value(alt)
			if alt == obj || !hasColumn(av, key) || len(in.nameRanges(in.crashLine(), alt)) > 0 {
				continue
			}
			all := true
			for _, o := range others {
				all = all && hasColumn(av, o)
			}
			if !all {
				continue
			}
			var edits []finding.Edit
			for _, r := range uses {
				edits = append(edits, replaceAt(r, alt))
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Use %s, which has column '%s'", alt, key), Edits: edits},
				Keeps: fmt.Sprintf("%s has '%s' and every other column the line reads from %s", alt, key, obj),
			})
		}
	}
	return out
}

// nameRanges returns the ranges of the name id where line l reads it (not an attribute
// after a dot, nor inside a string), on the syntax tree.
func (in *Input) nameRanges(l int, id string) []finding.Range {
	var out []finding.Range
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName && e.Name == id }) {
		if e.Range.Start.Line == l {
			out = append(out, e.Range)
		}
	}
	return out
}

// namesOnLine returns the names line l reads and the dotted chains it reads (df,
// model.predict), on the syntax tree.
func (in *Input) namesOnLine(l int) map[string]bool {
	out := map[string]bool{}
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprName || e.Kind == analysis.ExprAttribute
	}) {
		if c, ok := e.Chain(); ok {
			out[c] = true
		}
	}
	return out
}

// mergeKeys joins on differently named key columns: `orders.merge(customers,
// on='customer_id')` where orders calls it cust_id becomes left_on='cust_id',
// right_on='customer_id'.
func mergeKeys(in *Input, key string) []Candidate {
	var on *analysis.Keyword
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Name == "merge"
	}) {
		for i, k := range c.Keywords {
			if v, _ := k.Value.Const.(string); k.Name == "on" && isPlainString(k.Value) && v == key {
				on = &c.Keywords[i]
			}
		}
	}
	if on == nil {
		return nil
	}
	var out []Candidate
	read := in.namesOnLine(in.crashLine())
	for _, left := range frameNames(in) {
		lv, _ := in.value(left)
		if hasColumn(lv, key) || !read[left] {
			continue
		}
		var pool []string
		for _, c := range lv.Columns {
			if s, ok := c.Name.(string); ok {
				pool = append(pool, s)
			}
		}
		for _, n := range keyLike(key, pool) {
			q := on.Value.Text[:1]
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Join %s's '%s' to '%s' (left_on/right_on)", left, n, key), Edits: []finding.Edit{replaceAt(on.Range, "left_on="+q+n+q+", right_on="+q+key+q)}},
				Keeps: fmt.Sprintf("%s names the key '%s'; the other frame names it '%s'; the join is the same", left, n, key),
			})
		}
	}
	return out
}

// keyLike returns the columns that name the same key differently: the same words
// abbreviated (cust_id for customer_id), or a near spelling.
func keyLike(key string, pool []string) []string {
	out := nearest(key, pool, 2)
	kw := strings.Split(strings.ToLower(key), "_")
	for _, p := range pool {
		pw := strings.Split(strings.ToLower(p), "_")
		if len(pw) != len(kw) || p == key {
			continue
		}
		same := true
		for i := range pw {
			same = same && pw[i] != "" && (strings.HasPrefix(kw[i], pw[i]) || strings.HasPrefix(pw[i], kw[i]))
		}
		if same {
			out = append(out, p)
		}
	}
	return out
}

// keptInHistory keeps the column where an earlier cell dropped it among others, so the cell
// that needs it finds it: the drop list loses that one label (the earlier cell is edited and
// re-run, verification re-running the cells after it).
func keptInHistory(in *Input, key string) []Candidate {
	var out []Candidate
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		f := h.Facts
		if f == nil {
			f = analysis.ParseCell(h.Text)
		}
		// The list of a .drop([...]) or .drop(columns=[...]) call.
		for _, c := range walkExprs(f.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "drop"
		}) {
			var list *analysis.Expr
			if len(c.Args) > 0 && c.Args[0].Kind == analysis.ExprList {
				list = c.Args[0]
			}
			for _, k := range c.Keywords {
				if k.Name == "columns" && k.Value != nil && k.Value.Kind == analysis.ExprList {
					list = k.Value
				}
			}
			if list == nil || len(list.Args) < 2 {
				continue // dropping only that column: keeping it undoes the cell's purpose
			}
			var kept []string
			found := false
			for _, it := range list.Args {
				if v, _ := it.Const.(string); isPlainString(it) && v == key {
					found = true
					continue
				}
				kept = append(kept, it.Text)
			}
			if !found {
				continue
			}
			e := replaceAt(list.Range, "["+strings.Join(kept, ", ")+"]")
			e.Cell = h.ID
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Keep '%s' in cell %d's drop (run it again)", key, h.Index+1), Edits: []finding.Edit{e}},
				Keeps: fmt.Sprintf("cell %d drops '%s' with other columns; this cell needs it", h.Index+1, key),
			})
			return out
		}
	}
	return out
}

// unitRE matches a parenthesized or bracketed note in a label: a unit ("(millions)",
// "[kg]", "(USD)") that one spelling of a column carries and another leaves out.
var unitRE = regexp.MustCompile(`\s*[(\[][^)\]]*[)\]]`)

// sameWords returns the labels of pool that are key's words without its units, separators
// and case ("Total_Gross" for "Total Gross (millions)", "price" for "Price [USD]"), when
// at most max do: more would be a guess.
func sameWords(key string, pool []string, max int) []string {
	core := func(s string) string { return normalize(unitRE.ReplaceAllString(s, "")) }
	k := core(key)
	if len(k) < 3 {
		return nil
	}
	var out []string
	for _, p := range pool {
		if p != key && core(p) == k {
			out = append(out, p)
		}
	}
	if len(out) > max {
		return nil
	}
	return out
}

// roles are the names notebooks give one step of a pipeline or one entry of a models dict:
// a pipeline built with ("model", ...) read as named_steps["clf"] meant that step.
var roles = [][]string{
	{"clf", "classifier", "model", "estimator", "est", "regressor", "reg"},
	{"scaler", "scale", "scaling", "sc", "std", "standardize", "normalize"},
	{"imputer", "impute", "imp"},
	{"encoder", "encode", "enc", "ohe", "onehot"},
	{"pca", "reduce_dim", "dim_reduction", "svd"},
	{"vectorizer", "vect", "vec", "tfidf"},
	{"preprocessor", "preprocess", "prep", "preprocessing", "transformer"},
}

// sameRole returns the one label of pool that names key's role another way (model for
// clf); false when key has no role or not exactly one label shares it.
func sameRole(key string, pool []string) (string, bool) {
	low := strings.ToLower(key)
	for _, group := range roles {
		if !containsStr(group, low) {
			continue
		}
		found := ""
		for _, p := range pool {
			if lp := strings.ToLower(p); lp != low && containsStr(group, lp) {
				if found != "" {
					return "", false
				}
				found = p
			}
		}
		return found, found != ""
	}
	return "", false
}
