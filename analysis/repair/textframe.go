package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Text columns of a frame where numbers are needed, whatever library raised: an XGBoost
// or statsmodels model, torch.tensor of the frame's values, a NumPy cast each say it in
// their own words ("DataFrame.dtypes for data must be int, float, bool or category",
// "Pandas data cast to numpy dtype of object", "can't convert np.ndarray of type
// numpy.object_"), so the operator reads no sentence: a ValueError or TypeError that names
// an object or string dtype, a conversion or the dtypes taken, on a line that reads a frame
// the runtime facts say holds text columns, is its trigger. It runs where the call got the
// frame, not where the frame was built: other lines read that frame's columns too. The
// frame's categories become indicator columns as floats (pd.get_dummies(..., dtype=float));
// for a statsmodels model, which fits an intercept, the first level of each is dropped so
// the columns are not collinear. Every row and every other column stays. A text column
// with a value in nearly every row (an id, a name) or one holding numbers written with
// symbols ("$1,250") is no category: nothing is proposed for it (numbertext.go parses the
// numbers).

func init() {
	register(family{name: "text-frame", gen: textFrameGen, atCall: true})
}

func textFrameGen(in *Input) []Candidate {
	if e := in.exception(); e != "ValueError" && e != "TypeError" || !in.hasPandas() {
		return nil
	}
	// The words differ by library, but each says what it could not take: an object or
	// string dtype, a conversion to float, the dtypes it takes.
	words := typeWords(in.message())
	if !words["object"] && !words["object_"] && !words["str"] && !words["string"] && !words["dtype"] && !words["dtypes"] && !words["convert"] && !words["category"] {
		return nil
	}
	line := in.crashLine()
	targets := map[string]bool{} // the names the crash line binds: their old value is not the operand
	if in.Facts != nil {
		for _, d := range in.Facts.Defs {
			if d.Range.Start.Line == line {
				targets[rangeKey(d.Range)] = true
			}
		}
	}
	var frames []*analysis.Expr
	skip := map[string]bool{} // a frame selected from: the selection is the operand
	for _, e := range in.exprsOnLine(line, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprName || e.Kind == analysis.ExprSubscript
	}) {
		if skip[rangeKey(e.Range)] || targets[rangeKey(e.Range)] {
			continue
		}
		if e.Kind == analysis.ExprSubscript && e.Value != nil {
			skip[rangeKey(e.Value.Range)] = true
		}
		frames = append(frames, e)
	}
	dropFirst := in.statsmodelsOnLine(line)
	var out []Candidate
	for _, e := range frames {
		text, ok := in.frameTextColumns(e)
		if !ok {
			continue
		}
		code := "pd.get_dummies(" + e.Text + ", dtype=float)"
		how := "each category becomes an indicator column"
		if dropFirst {
			code = "pd.get_dummies(" + e.Text + ", drop_first=True, dtype=float)"
			how = "each category but the first becomes an indicator column (the model's intercept stands for the first)"
		}
		out = append(out, Candidate{
			Fix: finding.Fix{Title: fmt.Sprintf("One-hot encode the text columns %s of %s (pd.get_dummies)", strings.Join(text, ", "), e.Text),
				Edits: []finding.Edit{replaceAt(e.Range, code)}},
			Keeps: fmt.Sprintf("every row and every numeric column of %s is kept; in %s %s", e.Text, strings.Join(text, ", "), how),
		})
	}
	return out
}

// frameTextColumns returns the text columns of the frame e is (a name, or a frame's selection
// of a list of columns) as the runtime facts have it; false when e is no frame, has no
// text column, or one that is no category (identifierLike, or numbers with symbols).
func (in *Input) frameTextColumns(e *analysis.Expr) ([]string, bool) {
	name, selected := e.Text, map[string]bool(nil)
	if e.Kind == analysis.ExprSubscript {
		if e.Value == nil || e.Value.Kind != analysis.ExprName || e.Index == nil || e.Index.Kind != analysis.ExprList {
			return nil, false
		}
		var complete bool
		if selected, complete = in.selectedColumns(e.Index); !complete {
			return nil, false
		}
		name = e.Value.Name
	}
	v, ok := in.value(name)
	if !ok || v.Kind != facts.KindDataFrame {
		return nil, false
	}
	var text []string
	for _, c := range v.Columns {
		label := fmt.Sprint(c.Name)
		if selected != nil && !selected[label] || !textDtypes[c.Dtype] {
			continue
		}
		if identifierLike(c, v) || len(c.NonNumericSample) > 0 && symbolClass(c.NonNumericSample[0]) != "" {
			return nil, false
		}
		text = append(text, label)
	}
	return text, len(text) > 0
}

// statsmodelsOnLine reports whether a call on line l is statsmodels' (its callee's root
// was imported from statsmodels).
func (in *Input) statsmodelsOnLine(l int) bool {
	for _, c := range in.callsOnLine(l) {
		root, _, _ := strings.Cut(c.Callee, ".")
		if root != "" && strings.HasPrefix(in.moduleOf(root), "statsmodels") {
			return true
		}
	}
	return false
}

// moduleOf returns the module that name was imported from for the cell ("statsmodels.api"
// for sm after `import statsmodels.api as sm`; "sklearn.metrics.accuracy_score" for a
// from-import), the cell's own imports first, then the history's newest first; "" when no
// import binds it.
func (in *Input) moduleOf(name string) string {
	find := func(f *analysis.CellFacts) string {
		m := ""
		if f == nil {
			return m
		}
		for _, i := range f.Imports {
			if i.Bound() != name {
				continue
			}
			m = i.Module
			if i.Name != "" {
				m += "." + i.Name
			}
		}
		return m
	}
	if m := find(in.Facts); m != "" {
		return m
	}
	for k := len(in.History) - 1; k >= 0; k-- {
		f := in.History[k].Facts
		if f == nil {
			f = analysis.ParseCell(in.History[k].Text)
		}
		if m := find(f); m != "" {
			return m
		}
	}
	return ""
}
