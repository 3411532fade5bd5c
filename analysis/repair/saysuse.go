package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// The exception says what to write instead. Libraries that remove an alias or a spelling
// name the replacement in code quotes: NumPy 1.24's "`np.float` was a deprecated alias for
// the builtin `float`. To avoid this error in existing code, use `float` by itself. ... use
// `np.float64` here." An expression of the crash line whose text the message quotes is
// the old spelling; each quoted code the message tells to use ("use `X`") replaces it. The
// shadow run decides which of them works.

func init() {
	register(family{name: "message-says-use", gen: saysUseGen, told: true})
}

func saysUseGen(in *Input) []Candidate {
	msg := in.message()
	if !strings.Contains(msg, "`") {
		return nil
	}
	spans := codeSpans(msg)
	var uses []string
	for _, s := range spans {
		if s.afterUse && codeLike(s.text) && !containsStr(uses, s.text) {
			uses = append(uses, s.text)
		}
	}
	if len(uses) == 0 {
		return nil
	}
	quoted := map[string]bool{}
	for _, s := range spans {
		quoted[s.text] = true
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return (e.Kind == analysis.ExprAttribute || e.Kind == analysis.ExprName) && quoted[e.Text]
	}) {
		for _, u := range uses {
			if u == e.Text || seen[rangeKey(e.Range)+u] {
				continue
			}
			seen[rangeKey(e.Range)+u] = true
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Use %s instead of %s, as the error says", u, e.Text), Edits: []finding.Edit{replaceAt(e.Range, u)}},
				Keeps: fmt.Sprintf("the same expression, in the spelling the error gives for %s", e.Text),
			})
		}
	}
	return out
}

// codeSpan is a text the message quotes in backticks; afterUse is true when the word just
// before it is "use" (any case): what the message tells to write.
type codeSpan struct {
	text     string
	afterUse bool
}

// codeSpans returns the backticked spans of msg, in order.
func codeSpans(msg string) []codeSpan {
	var out []codeSpan
	for i := 0; i < len(msg); i++ {
		if msg[i] != '`' {
			continue
		}
		j := strings.IndexByte(msg[i+1:], '`')
		if j < 0 {
			break
		}
		words := strings.Fields(msg[:i])
		use := len(words) > 0 && strings.EqualFold(strings.Trim(words[len(words)-1], ",.;:"), "use")
		out = append(out, codeSpan{text: msg[i+1 : i+1+j], afterUse: use})
		i += j + 1
	}
	return out
}

// codeLike is a dotted name, perhaps called with simple arguments: something to write in
// place of an expression, not prose or a placeholder ("...").
func codeLike(s string) bool {
	if s == "" || len(s) > 60 || strings.Contains(s, "...") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isIdentByte(c) || strings.IndexByte(".()[]'\", =-", c) >= 0) {
			return false
		}
	}
	return isIdentByte(s[0])
}
