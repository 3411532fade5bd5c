package repair

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// ApplyEdits returns text with the edits applied (all of them must target this one text;
// ranges refer to the original text and must not overlap).
func ApplyEdits(text string, edits []finding.Edit) (string, error) {
	x := analysis.NewLineIndex(text)
	type span struct {
		s, e int
		t    string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		if e.Range.Start.Line < 0 || e.Range.Start.Line >= x.Lines() || e.Range.End.Line >= x.Lines() || e.Range.End.Before(e.Range.Start) {
			return "", fmt.Errorf("edit %s lies outside the cell (%d lines)", rangeKey(e.Range), x.Lines())
		}
		spans = append(spans, span{x.Offset(e.Range.Start), x.Offset(e.Range.End), e.NewText})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].s > spans[j].s })
	for i := 1; i < len(spans); i++ {
		if spans[i].e > spans[i-1].s {
			return "", fmt.Errorf("edits overlap")
		}
	}
	for _, sp := range spans {
		text = text[:sp.s] + sp.t + text[sp.e:]
	}
	return text, nil
}

// ApplyFix applies a fix to a notebook's cell texts (by cell ID; "" in an edit means
// target) and returns the new texts of the cells it changed.
func ApplyFix(texts map[string]string, target string, fix finding.Fix) (map[string]string, error) {
	by := map[string][]finding.Edit{}
	for _, e := range fix.Edits {
		id := e.Cell
		if id == "" {
			id = target
		}
		by[id] = append(by[id], e)
	}
	out := map[string]string{}
	for id, es := range by {
		t, ok := texts[id]
		if !ok {
			return nil, fmt.Errorf("the fix edits cell %q, which the notebook does not have", id)
		}
		nt, err := ApplyEdits(t, es)
		if err != nil {
			return nil, err
		}
		out[id] = nt
	}
	return out, nil
}

// lines splits a cell's text into lines (without terminators).
func lines(text string) []string { return analysis.SplitLines(text) }

// lineAt returns line l of text, "" when out of range.
func lineAt(text string, l int) string {
	ls := lines(text)
	if l < 0 || l >= len(ls) {
		return ""
	}
	return ls[l]
}

// indentOf returns the leading blanks of a line.
func indentOf(line string) string {
	return line[:len(line)-len(strings.TrimLeft(line, " \t"))]
}

// statementStart returns the first line of the top-level (or block) statement that
// contains line l: a continuation line (inside brackets) belongs to the line that opened
// them.
func statementStart(text string, l int) int {
	ls := lines(text)
	depth := 0
	start := 0
	for i := 0; i < len(ls) && i <= l; i++ {
		if depth == 0 {
			start = i
		}
		depth += bracketDelta(ls[i])
		if depth < 0 {
			depth = 0
		}
	}
	return start
}

// bracketDelta counts opening minus closing brackets outside strings and comments.
func bracketDelta(line string) int {
	d := 0
	scanCode(line, func(_ int, c byte, inString bool) bool {
		switch {
		case inString:
		case c == '#':
			return false
		case c == '(' || c == '[' || c == '{':
			d++
		case c == ')' || c == ']' || c == '}':
			d--
		}
		return true
	})
	return d
}

// insertBefore is an edit inserting code as whole lines before line l, with l's indentation.
func insertBefore(text string, l int, code string) finding.Edit {
	ind := indentOf(lineAt(text, l))
	var b strings.Builder
	for _, c := range strings.Split(code, "\n") {
		b.WriteString(ind + c + "\n")
	}
	p := finding.Position{Line: l}
	return finding.Edit{Range: finding.Range{Start: p, End: p}, NewText: b.String()}
}

// replaceAt is an edit replacing r with text.
func replaceAt(r finding.Range, text string) finding.Edit {
	return finding.Edit{Range: r, NewText: text}
}

// find returns the ranges of every occurrence of needle on line l of text (outside
// nothing: callers pass needles specific enough not to hit comments).
func findOnLine(text string, l int, needle string) []finding.Range {
	line := lineAt(text, l)
	var out []finding.Range
	for off := 0; needle != ""; {
		i := strings.Index(line[off:], needle)
		if i < 0 {
			break
		}
		s := off + i
		out = append(out, finding.Range{
			Start: finding.Position{Line: l, Character: analysis.UTF16Len(line[:s])},
			End:   finding.Position{Line: l, Character: analysis.UTF16Len(line[:s+len(needle)])},
		})
		off = s + len(needle)
	}
	return out
}

// textOf returns the text r spans in text.
func textOf(text string, r finding.Range) string {
	x := analysis.NewLineIndex(text)
	s, e := x.Offset(r.Start), x.Offset(r.End)
	if s > e {
		return ""
	}
	return text[s:e]
}

func itoa(n int) string { return strconv.Itoa(n) }

// IntentKept reports whether a fix keeps the cell's intent: it must not delete or comment
// out the failing statement, wrap anything in try/except or otherwise silence the error,
// replace a data value with a constant, or leave a name the cell bound unbound
// (bindingsKept). (An errors="ignore" is let through: verification
// shows whether it only hides the crash until a later line.)
func IntentKept(in Input, fix finding.Fix) bool {
	texts := map[string]string{"": in.Text}
	for _, h := range in.History {
		texts[h.ID] = h.Text
	}
	for _, e := range fix.Edits {
		if e.Cell != "" {
			continue
		}
		old := strings.TrimSpace(textOf(in.Text, e.Range))
		// Replacing a data name by a literal throws the data away.
		if isIdent(old) && isLiteral(strings.TrimSpace(e.NewText)) {
			if v, ok := in.value(old); ok && dataKinds[v.Kind] {
				return false
			}
		}
	}
	if !zeroFillKept(in, fix) {
		return false
	}
	after, err := ApplyFix(texts, "", fix)
	if err != nil {
		return false
	}
	for id, t := range after {
		if silences(texts[id], t) {
			return false
		}
	}
	nt, ok := after[""]
	if !ok {
		return true
	}
	if !deletionKept(in, nt) || !bindingsKept(in, nt) {
		return false
	}
	// The failing statement must still be there, not commented out: every identifier of the
	// crash line must still be in the edited cell's code.
	have := cellIdentifiers(nt)
	for _, id := range lineIdentifiers(in.Text, in.Facts, in.crashLine()) {
		if !have[id] && !replacedIdent(in.Text, fix, id) {
			// Renaming the wrong name is the repair of a missing name: the old identifier
			// may go, when an edit replaced exactly it.
			return false
		}
	}
	return true
}

var keywords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
	"for": true, "lambda": true, "None": true, "True": true, "False": true, "print": true}

var dataKinds = map[string]bool{"dataframe": true, "series": true, "ndarray": true, "tensor": true, "list": true, "dict": true, "sparse": true}

// replacedIdent reports whether an edit of fix replaced exactly id, or a dotted name that
// holds it (np.float written float, as NumPy's error says): the old spelling may go.
func replacedIdent(text string, fix finding.Fix, id string) bool {
	for _, e := range fix.Edits {
		if e.Cell != "" {
			continue
		}
		old := strings.TrimSpace(textOf(text, e.Range))
		if old == id {
			return true
		}
		if parts := strings.Split(old, "."); len(parts) > 1 && dotted(parts) && containsStr(parts, id) {
			return true
		}
		// A method swapped for another on the same object (clf.predict_proba(X)[:, 1]
		// written clf.predict(X)): the attribute goes, the object and the call stay.
		// The same object read through another accessor (df.loc[i, "price"] written
		// df["price"].iloc[i]): the accessor goes, the object stays.
		if ids := scanIdentifiers(old); len(ids) > 0 && ids[0] != id && strings.Contains(old, "."+id) &&
			(strings.HasPrefix(strings.TrimSpace(e.NewText), ids[0]+".") || strings.HasPrefix(strings.TrimSpace(e.NewText), ids[0]+"[")) {
			return true
		}
		// The same call with its arguments computed another way (range(EPOCHS + 1) written
		// range(len(losses))): the call stays, a name in its old arguments may go.
		if c, ok := sameCallee(old, strings.TrimSpace(e.NewText)); ok && c != id {
			return true
		}
	}
	return false
}

// dotted reports whether every part of a name split at its dots is an identifier.
func dotted(parts []string) bool {
	for _, p := range parts {
		if p == "" || !isIdentByte(p[0]) || (p[0] >= '0' && p[0] <= '9') {
			return false
		}
		for i := 0; i < len(p); i++ {
			if !isIdentByte(p[i]) {
				return false
			}
		}
	}
	return true
}

// codeOnly drops comments from every line (roughly: a # outside quotes).
func codeOnly(text string) string {
	var b strings.Builder
	for _, l := range lines(text) {
		b.WriteString(stripComment(l))
		b.WriteByte('\n')
	}
	return b.String()
}

func stripComment(line string) string {
	end := len(line)
	scanCode(line, func(i int, c byte, inString bool) bool {
		if !inString && c == '#' {
			end = i
			return false
		}
		return true
	})
	return line[:end]
}

var stringRE = regexp.MustCompile(`'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"`)

func stripStrings(s string) string { return stringRE.ReplaceAllString(stripComment(s), "''") }

func isIdent(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

var literalRE = regexp.MustCompile(`^(-?[0-9.]+|\[[-0-9., ]*\]|'[^']*'|"[^"]*"|None)$`)

func isLiteral(s string) bool { return literalRE.MatchString(s) }

var reindexRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\.reindex\(\s*columns\s*=\s*([A-Za-z_][A-Za-z0-9_.]*)\.feature_names_in_\s*,\s*fill_value`)

// zeroFillKept rejects filling columns a frame lacks with a constant unless every one of
// them is a one-hot indicator of a category the frame's split never saw (then 0 is its
// true value); a real feature filled with 0 is data replaced by a constant.
func zeroFillKept(in Input, fix finding.Fix) bool {
	for _, e := range fix.Edits {
		m := reindexRE.FindStringSubmatch(e.NewText)
		if m == nil || strings.HasPrefix(e.NewText, "pd.get_dummies(") {
			continue // one-hot columns a split lacks are 0 by construction
		}
		x, okx := in.value(m[1])
		est, oke := in.value(strings.TrimSuffix(m[2], "."))
		if !okx || !oke || est.Estimator == nil {
			return false
		}
		have := map[string]bool{}
		for _, c := range x.Columns {
			if s, ok := c.Name.(string); ok {
				have[s] = true
			}
		}
		for _, n := range est.Estimator.FeatureNamesIn {
			if !have[n] && !indicatorOf(n, have) {
				return false
			}
		}
	}
	return true
}

// bindingsKept reports whether the edited cell still binds every name the cell bound: the
// cells after it read them, so an edit that drops one (a rewritten assignment, a removed
// loop) moves the crash instead of repairing it, even when the target then runs.
func bindingsKept(in Input, edited string) bool {
	was := in.Facts
	if was == nil {
		was = analysis.ParseCell(in.Text)
	}
	now := map[string]bool{}
	for _, d := range analysis.ParseCell(edited).Defs {
		now[d.Name] = true
	}
	for _, d := range was.Defs {
		if d.Kind != analysis.DefDelete && !now[d.Name] {
			return false
		}
	}
	return true
}

// sameCallee returns the callee both old and new call, when each is one call of the same
// dotted callee ("range", "np.arange") with other arguments.
func sameCallee(old, new string) (string, bool) {
	o, n := exprOf(old), exprOf(new)
	if o == nil || n == nil || o.Kind != analysis.ExprCall || n.Kind != analysis.ExprCall || o.Value == nil || n.Value == nil {
		return "", false
	}
	oc, ok1 := o.Value.Chain()
	nc, ok2 := n.Value.Chain()
	return oc, ok1 && ok2 && oc == nc && old != new
}

// exprOf parses text as one expression on the syntax tree; nil when it is not one.
func exprOf(text string) *analysis.Expr {
	f := analysis.ParseCell(text)
	if len(f.SyntaxErrors) > 0 || len(f.Statements) != 1 || len(f.Statements[0].Targets) > 0 {
		return nil
	}
	return f.Statements[0].Value
}
