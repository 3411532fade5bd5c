package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Call shapes: a keyword the installed library version renamed (OneHotEncoder's sparse is
// sparse_output since scikit-learn 1.2), found in a table or, for any callable, as the
// nearest parameter of the signature the inspector reports; and the inplace misuse
// `df = df.dropna(inplace=True)`, which binds None, repaired where it was written (an
// earlier cell included) by dropping inplace=True so the assignment gets the result.

func init() {
	register(family{name: "call-shape", gen: callShapeGen, wanted: callShapeWanted})
}

// renamedKeywords maps a keyword that a current library no longer takes to its new name.
// artistProps are the properties matplotlib's artists take as keywords (Artist.set): lines,
// patches, collections and text.
var artistProps = []string{"color", "alpha", "label", "linewidth", "linestyle", "marker", "markersize",
	"markerfacecolor", "markeredgecolor", "markeredgewidth", "facecolor", "edgecolor", "fill", "hatch",
	"zorder", "visible", "fontsize", "fontweight", "fontfamily", "fontstyle", "rotation", "horizontalalignment",
	"verticalalignment", "cmap", "norm", "antialiased", "dashes", "drawstyle", "capstyle", "joinstyle",
	"clip_on", "picker", "rasterized", "sizes", "linewidths", "edgecolors", "facecolors", "offsets", "width", "height"}

var renamedKeywords = map[string]string{
	"sparse":          "sparse_output",  // sklearn OneHotEncoder 1.2
	"base_estimator":  "estimator",      // sklearn Bagging/AdaBoost 1.2
	"affinity":        "metric",         // sklearn AgglomerativeClustering 1.2
	"n_iter":          "max_iter",       // sklearn SGD/TSNE
	"line_terminator": "lineterminator", // pandas to_csv 1.5
	"normalize":       "",               // removed: no rename
}

var (
	unexpectedKwRE = regexp.MustCompile(`got an unexpected keyword argument '([^']+)'`)
	noneAttrRE     = regexp.MustCompile(`'NoneType' object (has no attribute|is not subscriptable|is not iterable)`)
	sigParamRE     = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:=]|,|\))`)
)

func callShapeWanted(in *Input) []string {
	var out []string
	for _, c := range in.callsOnLine(in.crashLine()) {
		out = append(out, c.Callee)
	}
	return out
}

func callShapeGen(in *Input) []Candidate {
	msg := in.message()
	var out []Candidate
	if m := unexpectedKwRE.FindStringSubmatch(msg); m != nil {
		out = append(out, renameKeyword(in, m[1])...)
	}
	if noneAttrRE.MatchString(msg) {
		out = append(out, inplaceMisuse(in)...)
	}
	return out
}

func renameKeyword(in *Input, kw string) []Candidate {
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		for _, k := range c.Expr.Keywords {
			if k.Name != kw {
				continue
			}
			var names []string
			if nw := renamedKeywords[kw]; nw != "" {
				names = append(names, nw)
			}
			var props []string
			if strings.Contains(in.message(), ".set() got an unexpected keyword") {
				// A matplotlib artist's property: plt.plot(..., colour=) reaches Line2D.set.
				props = nearest(kw, artistProps, 2)
			}
			if v, ok := in.value(c.Callee); ok && v.Signature != "" {
				var params []string
				for _, p := range sigParamRE.FindAllStringSubmatch(v.Signature, -1) {
					params = append(params, p[1])
				}
				for _, n := range nearest(kw, params, 2) {
					if len(names) == 0 || names[0] != n {
						names = append(names, n)
					}
				}
			}
			nameRange := finding.Range{Start: k.Range.Start, End: finding.Position{Line: k.Range.Start.Line, Character: k.Range.Start.Character + analysis.UTF16Len(kw)}}
			if textOf(in.Text, nameRange) != kw {
				continue
			}
			for _, n := range props {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Spell the keyword %s as %s (a property of the plotted artist)", kw, n), Edits: []finding.Edit{replaceAt(nameRange, n)}},
					Keeps: fmt.Sprintf("the same value, given to the artist's %s property", n),
				})
			}
			for _, n := range names {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Rename the keyword %s to %s (this library version's name)", kw, n), Edits: []finding.Edit{replaceAt(nameRange, n)}},
					Keeps: fmt.Sprintf("%s takes %s where older versions took %s; the value passed is the same", c.Callee, n, kw),
				})
			}
		}
	}
	return out
}

// noneMethods are the methods that change their object and return None (list, dict and
// set's own, and random.shuffle's kind): x = x.append(v) binds None.
var noneMethods = map[string]bool{"append": true, "extend": true, "insert": true, "remove": true, "sort": true,
	"reverse": true, "clear": true, "update": true, "add": true, "discard": true, "shuffle": true}

// inplaceMisuse finds `x = x.method(..., inplace=True)` in the cell (above the crash) or
// the history, on the syntax tree, and drops the keyword; or `x = x.append(v)` and its
// kind, whose method changes x and returns None, and keeps only the call.
func inplaceMisuse(in *Input) []Candidate {
	for _, s := range in.editSites() {
		for _, st := range s.Facts.Statements {
			if st.Kind != analysis.StmtAssign || len(st.Targets) != 1 || st.Targets[0].Kind != analysis.ExprName || st.Value == nil || st.Value.Kind != analysis.ExprCall {
				continue
			}
			if s.ID == "" && st.Range.Start.Line >= in.crashLine() {
				continue
			}
			name, call := st.Targets[0].Name, st.Value
			if call.Value == nil || call.Value.Kind != analysis.ExprAttribute || call.Value.Value == nil || call.Value.Value.Kind != analysis.ExprName || call.Value.Value.Name != name {
				continue
			}
			where := ""
			if s.ID != "" {
				where = fmt.Sprintf(" (cell %d; run it again)", s.Index+1)
			}
			for i, k := range call.Keywords {
				if k.Name != "inplace" || k.Value == nil || k.Value.Text != "True" {
					continue
				}
				// The keyword and the comma before it (or after it, when it comes first).
				r := k.Range
				switch {
				case i > 0:
					r.Start = call.Keywords[i-1].Range.End
				case len(call.Args) > 0:
					r.Start = call.Args[len(call.Args)-1].Range.End
				case len(call.Keywords) > 1:
					r.End = call.Keywords[1].Range.Start
				}
				e := replaceAt(r, "")
				e.Cell = s.ID
				return []Candidate{{
					Fix:   finding.Fix{Title: fmt.Sprintf("Drop inplace=True: %s = %s.… gets None with it%s", name, name, where), Edits: []finding.Edit{e}},
					Keeps: fmt.Sprintf("with inplace=True the method returns None, so %s became None; without it %s gets the result", name, name),
				}}
			}
			if noneMethods[call.Value.Name] {
				e := replaceAt(finding.Range{Start: st.Range.Start, End: call.Range.Start}, "")
				e.Cell = s.ID
				return []Candidate{{
					Fix:   finding.Fix{Title: fmt.Sprintf("Call %s.%s(...) without assigning it: it changes %s and returns None%s", name, call.Value.Name, name, where), Edits: []finding.Edit{e}},
					Keeps: fmt.Sprintf("%s gets the same change; only the None the method returns is no longer bound to it", name),
				}}
			}
		}
	}
	return nil
}
