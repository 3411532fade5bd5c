package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Repeated removal: a drop that an executed cell already made (the same labels dropped
// from the same frame: the cell was run twice, or copied) raises KeyError because the
// labels are gone. errors="ignore" makes the drop leave a frame without those labels as it
// is, which is what the drop is for. Only when the history shows the labels were dropped:
// a drop of a label that never existed is a typo, and ignoring it would hide it. Whether the
// rest of the cell still runs without them (a later line reading the column) is for
// verification to show.

func init() {
	register(family{name: "repeated-removal", gen: removalGen})
}

var notInAxisRE = regexp.MustCompile(`\[(.*)\] not found in axis`)

func removalGen(in *Input) []Candidate {
	if in.exception() != "KeyError" {
		return nil
	}
	labels := droppedLabels(in)
	if len(labels) == 0 {
		return nil
	}
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || c.Expr.Value == nil || c.Expr.Value.Kind != analysis.ExprAttribute || c.Expr.Value.Name != "drop" || c.Expr.Keyword("errors") != nil {
			continue
		}
		recv := c.Expr.Value.Value
		if recv == nil {
			continue
		}
		cell, ok := droppedBefore(in, recv.Text, labels)
		if !ok {
			continue
		}
		e, ok := addKeyword(in.Text, c.Expr, "errors="+quoteOf(lineAt(in.Text, in.crashLine()))+"ignore"+quoteOf(lineAt(in.Text, in.crashLine())))
		if !ok {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Skip labels already dropped (errors=\"ignore\")", Edits: []finding.Edit{e}},
			Keeps: fmt.Sprintf("cell %d already dropped %s from %s; the drop leaves the frame without them as it is", cell, strings.Join(labels, ", "), recv.Text),
		})
		break
	}
	return out
}

// droppedLabels are the labels the KeyError says are missing, as they are written in code
// ('Amount', 10472).
func droppedLabels(in *Input) []string {
	msg := in.message()
	var out []string
	if m := notInAxisRE.FindStringSubmatch(msg); m != nil {
		for _, p := range strings.Split(m[1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	if m := quotedRE.FindStringSubmatch(msg); m != nil {
		out = append(out, "'"+m[1]+"'")
	}
	return out
}

// droppedBefore returns the 1-based index of the latest executed cell that drops every one
// of labels from recv.
func droppedBefore(in *Input, recv string, labels []string) (int, bool) {
	callRE := regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(recv) + `\s*\.\s*drop\s*\(`)
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		for _, line := range lines(h.Text) {
			code := stripComment(line)
			loc := callRE.FindStringIndex(code)
			if loc == nil {
				continue
			}
			args := code[loc[1]:]
			if end := matchingClose(code, loc[1]); end >= 0 {
				args = code[loc[1]:end]
			}
			all := true
			for _, l := range labels {
				all = all && hasLabel(args, l)
			}
			if all {
				return h.Index + 1, true
			}
		}
	}
	return 0, false
}

// hasLabel reports whether a label (a quoted string or a number, as the KeyError writes it)
// is among the literals of args, in either quote style.
func hasLabel(args, label string) bool {
	if strings.HasPrefix(label, "'") || strings.HasPrefix(label, `"`) {
		bare := strings.Trim(label, `'"`)
		return strings.Contains(args, "'"+bare+"'") || strings.Contains(args, `"`+bare+`"`)
	}
	return regexp.MustCompile(`(^|[^\w.'"])` + regexp.QuoteMeta(label) + `($|[^\w.'"])`).MatchString(args)
}

// quoteOf is the quote the line's strings use (" when it has any, else ').
func quoteOf(line string) string {
	if strings.Contains(line, `"`) && !strings.Contains(line, "'") {
		return `"`
	}
	return "'"
}

// addKeyword is an edit inserting kw as the last argument of call, when the call's closing
// parenthesis is on its own line's end of the argument list (no **kwargs, which might hold
// kw already).
func addKeyword(text string, call *analysis.Expr, kw string) (finding.Edit, bool) {
	for _, k := range call.Keywords {
		if k.Name == "" {
			return finding.Edit{}, false
		}
	}
	if !strings.HasSuffix(call.Text, ")") || call.Range.End.Character == 0 {
		return finding.Edit{}, false
	}
	inner := strings.TrimRight(strings.TrimSuffix(call.Text, ")"), " \t")
	if strings.HasSuffix(inner, "\n") {
		return finding.Edit{}, false
	}
	sep := ", "
	switch {
	case strings.HasSuffix(inner, ","):
		sep = " "
	case strings.HasSuffix(inner, "("):
		sep = ""
	}
	at := call.Range.End
	at.Character--
	// Insert right after the last argument (before blanks before the parenthesis).
	at.Character -= len(strings.TrimSuffix(call.Text, ")")) - len(inner)
	if textOf(text, finding.Range{Start: at, End: call.Range.End}) != strings.TrimPrefix(call.Text, inner) {
		return finding.Edit{}, false
	}
	return finding.Edit{Range: finding.Range{Start: at, End: at}, NewText: sep + kw}, true
}
