package repair

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Needed and got, substituted where the needed size is computed. A layer built for `want`
// inputs gets `got`: the size argument that evaluates to want, whether a literal, a product
// of literals (32 * 7 * 7) or a sum, is rewritten to give got, keeping the expression's
// form where got factors the same way (32 * 5 * 5 for 800: the channels stay, the side of
// the map changes) and the bare number otherwise. The constructor is found on the syntax
// tree, in the cell whose code raised (Input.Site), then the crashing cell, then the
// history newest first: the nearest definition wins.

func init() {
	register(family{name: "needed-size", gen: neededGen})
}

// sizeKeywords are the constructor keywords that name an input size.
var sizeKeywords = map[string]bool{"in_features": true, "in_channels": true, "input_size": true, "num_features": true, "embed_dim": true}

func neededGen(in *Input) []Candidate {
	msg := in.message()
	var want, got int
	what := ""
	if m := matmulRE.FindStringSubmatch(msg); m != nil && !isProductLine(in) {
		got, _ = strconv.Atoi(m[2])
		want, _ = strconv.Atoi(m[3])
		what = "in_features"
	} else if m := convChannelsRE.FindStringSubmatch(msg); m != nil && !unbatchedInput(msg) {
		want, _ = strconv.Atoi(m[1])
		got, _ = strconv.Atoi(m[2])
		what = "in_channels"
	}
	if want <= 0 || got <= 0 || want == got {
		return nil
	}
	for _, s := range in.editSites() {
		var out []Candidate
		for _, arg := range sizeArgs(s.Facts, want) {
			for _, text := range resized(arg, want, got) {
				e := replaceAt(arg.Range, text)
				e.Cell = s.ID
				title := fmt.Sprintf("Set %s to %s", what, text)
				keeps := fmt.Sprintf("the layer gets %d %s per sample; it was built for %d (%s)", got, strings.TrimPrefix(what, "in_"), want, strings.TrimSpace(arg.Text))
				if s.ID != "" {
					title += fmt.Sprintf(" in cell %d (then run it again)", s.Index+1)
					keeps += fmt.Sprintf("; cell %d defines the layer", s.Index+1)
				}
				out = append(out, Candidate{Fix: finding.Fix{Title: title, Edits: []finding.Edit{e}}, Keeps: keeps})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return sizeParameter(in, what, want, got)
}

// sizeParameter repairs a layer whose size is a parameter of the class's __init__
// (nn.Linear(in_features, 32) in class TabularMLP with in_features=10): where the model
// is built from the class without that parameter (model = TabularMLP()), the parameter is
// passed, from the data where an array of the namespace has got columns (X_train.shape[1])
// or as the number.
func sizeParameter(in *Input, what string, want, got int) []Candidate {
	var out []Candidate
	for _, s := range in.editSites() {
		for _, cls := range s.Facts.Statements {
			if cls.Kind != analysis.StmtClass {
				continue
			}
			for _, def := range cls.Body {
				if def.Kind != analysis.StmtDef || def.Name != "__init__" {
					continue
				}
				for _, layer := range walkExprs(def.Body, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
					return e.Kind == analysis.ExprCall && e.Value != nil && constructorName(e.Value) && len(e.Args) > 0 && e.Args[0].Kind == analysis.ExprName
				}) {
					param := layer.Args[0].Name
					if !containsStr(def.Params, param) {
						continue
					}
					out = append(out, passSize(in, cls.Name, param, what, got)...)
					if len(out) > 0 {
						return out
					}
				}
			}
		}
	}
	return out
}

// passSize passes param=got (data-derived when it can be) to the calls that build class
// without it, in the crashing cell above the crash or the history, newest first.
func passSize(in *Input, class, param, what string, got int) []Candidate {
	value := strconv.Itoa(got)
	for _, p := range trainingNames {
		if v, ok := in.value(p[0]); ok && len(v.Shape) == 2 && v.Shape[1] == got {
			value = p[0] + ".shape[1]"
			break
		}
	}
	for _, s := range in.editSites() {
		for _, c := range walkExprs(s.Facts.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprName && e.Value.Name == class
		}) {
			if s.ID == "" && c.Range.Start.Line > in.crashLine() {
				continue
			}
			given := len(c.Args) > 0
			for _, k := range c.Keywords {
				given = given || k.Name == param
			}
			if given {
				continue
			}
			p := c.Range.End
			p.Character-- // before the closing parenthesis
			text := param + "=" + value
			if len(c.Keywords) > 0 {
				text = ", " + text
			}
			title := fmt.Sprintf("Build %s with %s=%s", class, param, value)
			if s.ID != "" {
				title += fmt.Sprintf(" in cell %d (then run it again)", s.Index+1)
			}
			return []Candidate{{
				Fix:   finding.Fix{Title: title, Edits: []finding.Edit{{Cell: s.ID, Range: finding.Range{Start: p, End: p}, NewText: text}}},
				Keeps: fmt.Sprintf("the same model; its first layer gets the %d %s per sample the data has", got, strings.TrimPrefix(what, "in_")),
			}}
		}
	}
	return nil
}

// sizeArgs returns the first positional argument, or size keyword, of every layer
// constructor call (a callee whose last name is capitalised) in the cell that evaluates to
// want.
func sizeArgs(cf *analysis.CellFacts, want int) []*analysis.Expr {
	if cf == nil {
		return nil
	}
	var out []*analysis.Expr
	everywhere := func(finding.Range) bool { return true }
	for _, e := range walkExprs(cf.Statements, everywhere, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && constructorName(e.Value)
	}) {
		var a *analysis.Expr
		if len(e.Args) > 0 {
			a = e.Args[0]
		}
		for _, k := range e.Keywords {
			if sizeKeywords[k.Name] {
				a = k.Value
			}
		}
		if v, ok := constInt(a); ok && v == want {
			out = append(out, a)
		}
	}
	return out
}

// constructorName reports whether a callee names a class by convention (nn.Linear,
// Conv2d): its last name starts with a capital.
func constructorName(e *analysis.Expr) bool {
	name := e.Name
	if e.Kind == analysis.ExprName || e.Kind == analysis.ExprAttribute {
		return name != "" && name[0] >= 'A' && name[0] <= 'Z'
	}
	return false
}

// constInt evaluates an integer expression of literals (+, -, *, //), ok false for any
// other expression.
func constInt(e *analysis.Expr) (int, bool) {
	if e == nil {
		return 0, false
	}
	switch e.Kind {
	case analysis.ExprConst:
		if v, ok := e.Const.(int64); ok {
			return int(v), true
		}
	case analysis.ExprBinOp:
		if len(e.Args) != 2 {
			return 0, false
		}
		a, ok1 := constInt(e.Args[0])
		b, ok2 := constInt(e.Args[1])
		if !ok1 || !ok2 {
			return 0, false
		}
		switch e.Name {
		case "*":
			return a * b, true
		case "+":
			return a + b, true
		case "-":
			return a - b, true
		case "//":
			if b != 0 {
				return a / b, true
			}
		}
	}
	return 0, false
}

// factors returns the literal factors of a product of literals (32 * 7 * 7), nil for any
// other expression.
func factors(e *analysis.Expr) []int {
	if e == nil {
		return nil
	}
	if v, ok := e.Const.(int64); ok && e.Kind == analysis.ExprConst {
		return []int{int(v)}
	}
	if e.Kind == analysis.ExprBinOp && e.Name == "*" && len(e.Args) == 2 {
		a, b := factors(e.Args[0]), factors(e.Args[1])
		if a != nil && b != nil {
			return append(a, b...)
		}
	}
	return nil
}

// resized returns the texts that give got in place of arg: the product with its first
// factor kept and its square side changed (32 * 7 * 7 → 32 * 5 * 5), then the number.
func resized(arg *analysis.Expr, want, got int) []string {
	var out []string
	if fs := factors(arg); len(fs) == 3 && fs[1] == fs[2] && fs[0] > 0 && got%fs[0] == 0 {
		side := int(math.Round(math.Sqrt(float64(got / fs[0]))))
		if side > 0 && side*side*fs[0] == got {
			out = append(out, fmt.Sprintf("%d * %d * %d", fs[0], side, side))
		}
	}
	return append(out, strconv.Itoa(got))
}

var convInputRE = regexp.MustCompile(`expected input\[(\d+),`)

// unbatchedInput reports whether a convolution's message shows an input torch read as one
// unbatched sample (it adds a batch of 1: "expected input[1, 16, 28, 28]"): the "channels"
// it got are then the batch, and building the layer for them would turn a batch of 16 images
// into one image of 16 channels. That is no repair.
func unbatchedInput(msg string) bool {
	m := convInputRE.FindStringSubmatch(msg)
	return m != nil && m[1] == "1"
}
