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
	inplaceRE      = regexp.MustCompile(`^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\.\w+\(.*?(,\s*inplace\s*=\s*True|inplace\s*=\s*True\s*,\s*|inplace\s*=\s*True)`)
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

// inplaceMisuse finds `x = x.method(..., inplace=True)` in the cell or the history.
func inplaceMisuse(in *Input) []Candidate {
	var out []Candidate
	for _, s := range in.editSites() {
		for l, line := range lines(s.Text) {
			m := inplaceRE.FindStringSubmatchIndex(stripComment(line))
			if m == nil || line[m[4]:m[5]] != line[m[6]:m[7]] {
				continue
			}
			if s.ID == "" && l >= in.crashLine() {
				continue
			}
			r := finding.Range{Start: finding.Position{Line: l, Character: analysis.UTF16Len(line[:m[8]])}, End: finding.Position{Line: l, Character: analysis.UTF16Len(line[:m[9]])}}
			e := replaceAt(r, "")
			e.Cell = s.ID
			name := line[m[4]:m[5]]
			title := fmt.Sprintf("Drop inplace=True: %s = %s.… gets None with it", name, name)
			if s.ID != "" {
				title += fmt.Sprintf(" (cell %d; run it again)", s.Index+1)
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: title, Edits: []finding.Edit{e}},
				Keeps: fmt.Sprintf("with inplace=True the method returns None, so %s became None; without it %s gets the result", name, name),
			})
			return out
		}
	}
	return out
}
