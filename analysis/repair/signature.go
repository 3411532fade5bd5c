package repair

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Calls checked against the callee's signature as the kernel has it (the inspector's
// inspect.signature of the callee): the installed library decides, not a table.
//
//   - An unexpected keyword becomes each parameter that shares a word with it or is a
//     spelling away (test_ratio → test_size, n_estimator → n_estimators); the shadow run
//     picks the one that runs.
//   - "got multiple values for argument 's'": a positional argument landed on a parameter
//     the call also names. When that argument is a variable named like a parameter of the
//     signature (plt.scatter(a, b, c, s=200): c is scatter's c), it is passed by that name.

func init() {
	register(family{name: "signature", gen: signatureGen, wanted: callShapeWanted})
}

var multipleValuesRE = regexp.MustCompile(`got multiple values for (?:keyword )?argument '([^']+)'`)

// maxKeywordGuesses bounds the parameters tried for one unexpected keyword.
const maxKeywordGuesses = 3

func signatureGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "TypeError" {
		return nil
	}
	if m := unexpectedKwRE.FindStringSubmatch(msg); m != nil {
		return keywordBySignature(in, m[1])
	}
	if m := multipleValuesRE.FindStringSubmatch(msg); m != nil {
		return positionalToKeyword(in, m[1])
	}
	if strings.Contains(msg, "positional argument") && strings.Contains(msg, "were given") {
		return extraPositional(in)
	}
	return nil
}

// maxExtraGuesses bounds the keyword-only parameters tried for a positional argument past
// those the signature takes by position.
const maxExtraGuesses = 4

// extraPositional passes the one argument past the callee's positional parameters by name:
// cross_val_score(model, X, y, 5) has three positional parameters, and 5 is each of its
// keyword-only parameters that has no value yet in turn, in the signature's order; the
// run keeps the one it works with (cv=5).
func extraPositional(in *Input) []Candidate {
	var out []Candidate
	for _, sc := range in.signedCalls() {
		c, e, ps := sc.call, sc.call.Expr, sc.params
		n := 0
		var kwOnly []string
		given := map[string]bool{}
		for _, k := range e.Keywords {
			given[k.Name] = true
		}
		for _, p := range ps {
			switch {
			case p.variadic && p.positional:
				n = -1 << 20 // *args takes any number
			case p.positional:
				n++
			case !p.variadic && !given[p.name] && !strings.HasPrefix(p.name, "_"):
				kwOnly = append(kwOnly, p.name)
			}
		}
		if len(e.Args) != n+1 || e.Args[n].Starred {
			continue
		}
		arg := e.Args[n]
		for i, name := range kwOnly {
			if i == maxExtraGuesses {
				break
			}
			out = append(out, Candidate{
				Fix: finding.Fix{Title: fmt.Sprintf("Pass %s by name: %s=%s (%s takes %d arguments by position)", arg.Text, name, arg.Text, c.Callee, n),
					Edits: []finding.Edit{replaceAt(arg.Range, name+"="+arg.Text)}},
				Keeps: fmt.Sprintf("the same value, given to %s's keyword-only parameter %s", c.Callee, name),
			})
		}
	}
	return out
}

// param is one parameter of a signature: its name and kind.
type param struct {
	name       string
	positional bool // may be passed by position
	variadic   bool // *args or **kwargs
}

// params splits an inspect.signature string ("(x, y, s=None, *, data=None, **kwargs)")
// into its parameters, in order; defaults may hold commas and brackets.
func params(sig string) []param {
	sig = strings.TrimSpace(sig)
	if i := strings.LastIndex(sig, ") ->"); i >= 0 {
		sig = sig[:i+1]
	}
	sig = strings.TrimSuffix(strings.TrimPrefix(sig, "("), ")")
	var parts []string
	depth, start := 0, 0
	scanCode(sig, func(i int, c byte, inString bool) bool {
		switch {
		case inString:
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, sig[start:i])
			start = i + 1
		}
		return true
	})
	parts = append(parts, sig[start:])
	var out []param
	positional := true
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || p == "/" {
			continue
		}
		if p == "*" {
			positional = false
			continue
		}
		name := p
		if i := strings.IndexAny(name, ":="); i >= 0 {
			name = strings.TrimSpace(name[:i])
		}
		variadic := strings.HasPrefix(name, "*")
		if strings.HasPrefix(name, "*") && !strings.HasPrefix(name, "**") {
			positional = false
		}
		name = strings.TrimLeft(name, "*")
		if !paramNameRE.MatchString(name) {
			continue
		}
		out = append(out, param{name: name, positional: positional && !variadic, variadic: variadic})
	}
	return out
}

// calleeParams returns the parameters of the call's callee, when the kernel's facts have
// its signature.
func (in *Input) calleeParams(c analysis.Call) ([]param, bool) {
	v, ok := in.value(c.Callee)
	if !ok || v.Signature == "" {
		return nil, false
	}
	ps := params(v.Signature)
	return ps, len(ps) > 0
}

// signedCall is a call on the crash line and the parameters of its callee's signature.
type signedCall struct {
	call   analysis.Call
	params []param
}

// signedCalls returns the crash line's calls whose callee's signature the kernel gave.
func (in *Input) signedCalls() []signedCall {
	var out []signedCall
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		if ps, ok := in.calleeParams(c); ok {
			out = append(out, signedCall{c, ps})
		}
	}
	return out
}

// keywordBySignature renames an unexpected keyword to the callee's parameters that are
// nearest to it.
func keywordBySignature(in *Input, kw string) []Candidate {
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		ps, ok := in.calleeParams(c)
		if !ok {
			continue
		}
		given := map[string]bool{}
		for _, k := range c.Expr.Keywords {
			given[k.Name] = true
		}
		var pool []string
		for _, p := range ps {
			if !p.variadic && !given[p.name] && !strings.HasPrefix(p.name, "_") {
				pool = append(pool, p.name)
			}
		}
		for _, k := range c.Expr.Keywords {
			if k.Name != kw {
				continue
			}
			nameRange := finding.Range{Start: k.Range.Start, End: finding.Position{Line: k.Range.Start.Line, Character: k.Range.Start.Character + analysis.UTF16Len(kw)}}
			if textOf(in.Text, nameRange) != kw {
				continue
			}
			for _, n := range keywordGuesses(kw, pool) {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Pass %s as %s (%s has no parameter %s)", kw, n, c.Callee, kw), Edits: []finding.Edit{replaceAt(nameRange, n)}},
					Keeps: fmt.Sprintf("the installed %s takes %s; the value passed is the same", c.Callee, n),
				})
			}
		}
	}
	return out
}

// keywordGuesses ranks the parameters a wrong keyword may have meant: a spelling away
// first, then those sharing a word with it ("test" of test_ratio and test_size), at most
// maxKeywordGuesses.
func keywordGuesses(kw string, pool []string) []string {
	type scored struct {
		name  string
		score int
	}
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '_' }) {
			if len(w) >= 2 {
				m[w] = true
			}
		}
		return m
	}
	kws := words(kw)
	var out []scored
	for _, p := range pool {
		d := distance(strings.ToLower(kw), strings.ToLower(p))
		shared := 0
		for w := range words(p) {
			if kws[w] {
				shared++
			}
		}
		switch {
		case d <= 2 || (len(kw) >= 8 && d <= 3):
			out = append(out, scored{p, d})
		case shared > 0:
			out = append(out, scored{p, 10 + d - 3*shared})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score < out[j].score })
	var names []string
	for _, s := range out {
		if len(names) == maxKeywordGuesses {
			break
		}
		names = append(names, s.name)
	}
	return names
}

// positionalToKeyword passes by name the positional argument that landed on dup, when it
// is a variable named after another parameter of the callee and no positional argument
// follows it.
func positionalToKeyword(in *Input, dup string) []Candidate {
	var out []Candidate
	for _, sc := range in.signedCalls() {
		c, e, ps := sc.call, sc.call.Expr, sc.params
		// A bound method's signature has no self; a plain function's first parameter is
		// the first argument.
		pos := -1
		n := 0
		names := map[string]bool{}
		for _, p := range ps {
			names[p.name] = true
			if p.positional {
				if p.name == dup {
					pos = n
				}
				n++
			}
		}
		if pos < 0 || pos >= len(e.Args) {
			continue
		}
		arg := e.Args[pos]
		given := map[string]bool{}
		for _, k := range e.Keywords {
			given[k.Name] = true
		}
		if arg.Kind != analysis.ExprName || arg.Starred || arg.Name == dup || !names[arg.Name] || given[arg.Name] {
			continue
		}
		if pos != len(e.Args)-1 {
			continue // a later positional argument would then follow a keyword
		}
		out = append(out, Candidate{
			Fix: finding.Fix{Title: fmt.Sprintf("Pass %s by name (%s=%s): by position it is %s's %s, which the call also gives", arg.Name, arg.Name, arg.Name, c.Callee, dup),
				Edits: []finding.Edit{replaceAt(arg.Range, arg.Name+"="+arg.Name)}},
			Keeps: fmt.Sprintf("%s goes to the parameter it is named after; %s keeps the value the call names", arg.Name, dup),
		})
	}
	return out
}

var paramNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
