package repair

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Shape and feature-count mismatches: a Linear layer's in_features set to the size the data
// has (in the cell that defines the layer, an earlier one included), a reshape or view whose
// element count does not divide made to infer one dimension, a 1-D X made a column, a
// column-vector y flattened, the columns a model was fitted on selected again, and samples
// drawn from the matching split.

func init() {
	register(family{name: "shape", gen: shapeGen})
}

var (
	matmulRE     = regexp.MustCompile(`mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)`)
	featuresRE   = regexp.MustCompile(`X has (\d+) features, but (\w+) is expecting (\d+) features`)
	npReshapeRE  = regexp.MustCompile(`cannot reshape array of size (\d+) into shape \(([-\d, ]+)\)`)
	torchViewRE  = regexp.MustCompile(`shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)`)
	expected2DRE = regexp.MustCompile(`Expected 2D array, got (1D array|scalar array) instead`)
	yColumnRE    = regexp.MustCompile(`y should be a 1d array, got an array of shape \((\d+), (\d+)\)`)
	inconsistent = regexp.MustCompile(`inconsistent numbers of samples: \[([\d, ]+)\]`)
	featureNames = regexp.MustCompile(`feature names should match those that were passed during fit|Feature names unseen at fit time|Feature names must be in the same order`)
)

func shapeGen(in *Input) []Candidate {
	msg := in.message()
	var out []Candidate
	if m := axisRE.FindStringSubmatch(msg); m != nil {
		out = append(out, lastAxis(in, m[1], atoi(m[2]))...)
	}
	if m := indexOOBRE.FindStringSubmatch(msg); m != nil && m[1] == m[3] {
		out = append(out, offByOne(in, atoi(m[1]))...)
	}
	if m := npReshapeRE.FindStringSubmatch(msg); m != nil {
		out = append(out, inferDim(in, atoi(m[1]), splitInts(m[2]))...)
	}
	if m := torchViewRE.FindStringSubmatch(msg); m != nil {
		out = append(out, inferDim(in, atoi(m[2]), splitInts(m[1]))...)
	}
	if expected2DRE.MatchString(msg) {
		out = append(out, oneDimX(in)...)
	}
	if m := yColumnRE.FindStringSubmatch(msg); m != nil && m[2] == "1" || strings.Contains(msg, "column-vector y was passed") {
		// Only a single column flattens into the same labels: a y of shape (n, 2) is two.
		out = append(out, flattenY(in)...)
	}
	if featuresRE.MatchString(msg) || featureNames.MatchString(msg) {
		out = append(out, selectFitColumns(in)...)
		out = append(out, alignSplitDummies(in)...)
		out = append(out, fitColumnsWhereBuilt(in)...)
	}
	if m := inconsistent.FindStringSubmatch(msg); m != nil {
		out = append(out, matchingSplit(in)...)
	}
	if strings.Contains(msg, "could not be broadcast together") {
		out = append(out, keepDims(in)...)
	}
	if m := concatDimsRE.FindStringSubmatch(msg); m != nil {
		out = append(out, addAxis(in, m)...)
	}
	if m := concatDimsRE.FindStringSubmatch(msg); strings.Contains(msg, "zero-dimensional arrays cannot be concatenated") || m != nil && (m[2] == "0" || m[4] == "0") {
		out = append(out, atLeast1D(in)...)
	}
	return out
}

var (
	concatDimsRE = regexp.MustCompile(`array at index (\d+) has (\d+) dimension\(s\) and the array at index (\d+) has (\d+) dimension\(s\)`)
)

// keepDims keeps the reduced axis of a reduction on the crash line, so the result
// broadcasts back against the array it came from (X - X.mean(axis=1)).
func keepDims(in *Input) []Candidate {
	var out []Candidate
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && reductions[e.Value.Name] &&
			len(e.Args) == 0 && len(e.Keywords) == 1 && e.Keywords[0].Name == "axis"
	}) {
		if _, ok := constInt(c.Keywords[0].Value); !ok {
			continue
		}
		p := c.Range.End
		p.Character-- // before the closing parenthesis
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Keep the reduced axis (%s(..., keepdims=True))", c.Value.Name), Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: ", keepdims=True"}}},
			Keeps: "the same statistic, shaped so it broadcasts against the array it was computed from",
		})
		// A statistic per row of a 2-D array stored for later use (mu = X.mean(axis=1), then
		// (X - mu) / sigma, X_val - mu): the stored statistics of a data set are per column
		// (per feature), so the other axis. One reduced inside the arithmetic that uses it
		// (X - X.mean(axis=1)) may mean per row: only keepdims.
		if n, _ := constInt(c.Keywords[0].Value); n == 1 && in.exprShapeLen(c.Value.Value) == 2 && in.assignedWhole(c) {
			// The cell's other statistics of the same array go with it (mu and sigma).
			var edits []finding.Edit
			for _, st := range in.Facts.Statements {
				v := st.Value
				if st.Kind != analysis.StmtAssign || v == nil || v.Kind != analysis.ExprCall || v.Value == nil || v.Value.Kind != analysis.ExprAttribute ||
					!reductions[v.Value.Name] || v.Value.Value == nil || v.Value.Value.Text != c.Value.Value.Text || len(v.Keywords) != 1 || v.Keywords[0].Name != "axis" {
					continue
				}
				if k, _ := constInt(v.Keywords[0].Value); k == 1 {
					edits = append(edits, replaceAt(v.Keywords[0].Value.Range, "0"))
				}
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Reduce over the rows: %s(axis=0), one value per column", c.Value.Name), Edits: edits},
				Keeps: "the same statistics, per column (per feature), which broadcast along every row",
			})
		}
	}
	return out
}

// reductions are the methods that reduce an array along an axis.
var reductions = map[string]bool{"mean": true, "sum": true, "std": true, "var": true, "max": true, "min": true, "median": true}

// addAxis gives the array with fewer dimensions in a concatenation the missing axis
// (np.concatenate([X, y], axis=1) with a 1-D y: y[:, None]).
func addAxis(in *Input, m []string) []Candidate {
	i, di, j, dj := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
	low := j
	if di < dj {
		low = i
	}
	if abs(di-dj) != 1 {
		return nil
	}
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || len(c.Expr.Args) == 0 || !strings.HasSuffix(c.Callee, "concatenate") && !strings.HasSuffix(c.Callee, "hstack") && !strings.HasSuffix(c.Callee, "column_stack") {
			continue
		}
		list := c.Expr.Args[0]
		if (list.Kind != analysis.ExprList && list.Kind != analysis.ExprTuple) || low >= len(list.Args) {
			continue
		}
		e := list.Args[low]
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Make %s a column: %s[:, None]", e.Text, e.Text), Edits: []finding.Edit{replaceAt(e.Range, e.Text+"[:, None]")}},
			Keeps: fmt.Sprintf("the same values of %s, with the axis the other arrays have", e.Text),
		}}
	}
	return nil
}

// atLeast1D makes every array of a concatenated sequence at least 1-D, so scalars (0-d
// arrays, np.load of a saved scalar) join as one element each:
// np.concatenate(weights) becomes np.concatenate([np.atleast_1d(a) for a in weights]).
//
// The concatenation may be inside a function the crash line calls (the run reports the
// cell's top-level line): the crash line is searched first, then the cell, where it must
// concatenate in one place only.
func atLeast1D(in *Input) []Candidate {
	var calls []analysis.Call
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr != nil && len(c.Expr.Args) > 0 && strings.HasSuffix(c.Callee, ".concatenate") {
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 {
		// Function bodies included: the statements' trees hold them.
		seen := map[string]bool{}
		for l := range lines(in.Text) {
			for _, c := range in.callsOnLine(l) {
				if k := rangeKey(c.Range); !seen[k] && c.Expr != nil && len(c.Expr.Args) > 0 && strings.HasSuffix(c.Callee, ".concatenate") {
					seen[k] = true
					calls = append(calls, c)
				}
			}
		}
		if len(calls) != 1 {
			return nil
		}
	}
	for _, c := range calls {
		mod := strings.TrimSuffix(c.Callee, ".concatenate")
		seq := c.Expr.Args[0]
		if seq.Kind != analysis.ExprName && seq.Kind != analysis.ExprAttribute {
			continue
		}
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Make each array of %s at least 1-D (%s.atleast_1d)", seq.Text, mod), Edits: []finding.Edit{replaceAt(seq.Range, "["+mod+".atleast_1d(a) for a in "+seq.Text+"]")}},
			Keeps: fmt.Sprintf("%s holds 0-d arrays (scalars), which cannot be concatenated; as 1-element arrays each joins the result with its value", seq.Text),
		}}
	}
	return nil
}

var (
	convChannelsRE = regexp.MustCompile(`to have (\d+) channels, but got (\d+) channels instead`)
	axisRE         = regexp.MustCompile(`axis (\d+) is out of bounds for array of dimension (\d+)`)
	indexOOBRE     = regexp.MustCompile(`index (\d+) is out of bounds for axis (\d+) with size (\d+)`)
)

// lastAxis points a reduction at the array's last axis when it named one past it.
func lastAxis(in *Input, axis string, ndim int) []Candidate {
	l := in.crashLine()
	var out []Candidate
	for _, r := range findOnLine(in.Text, l, "axis="+axis) {
		r.Start.Character += len("axis=")
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Use the last axis (axis=%d)", ndim-1), Edits: []finding.Edit{replaceAt(r, itoa(ndim-1))}},
			Keeps: fmt.Sprintf("the array has %d dimensions (axes 0..%d); axis %s is one past its last", ndim, ndim-1, axis),
		})
	}
	return out
}

// offByOne indexes the last element where the index equals the size (counting from 1).
func offByOne(in *Input, size int) []Candidate {
	l := in.crashLine()
	var out []Candidate
	for _, pat := range []string{", " + itoa(size) + "]", "[" + itoa(size) + "]", "," + itoa(size) + "]"} {
		for _, r := range findOnLine(in.Text, l, pat) {
			r.Start.Character += len(pat) - len(itoa(size)) - 1
			r.End.Character--
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Index the last element (%d: indexes count from 0)", size-1), Edits: []finding.Edit{replaceAt(r, itoa(size-1))}},
				Keeps: fmt.Sprintf("the axis has %d elements, indexed 0..%d; %d counts from 1", size, size-1, size),
			})
			return out
		}
	}
	return out
}

// inferDim rewrites the reshape/view on the crash line so one dimension is inferred, where
// the element count allows it.
func inferDim(in *Input, size int, dims []int) []Candidate {
	if size <= 0 || len(dims) < 2 {
		return nil
	}
	// The call's sizes, one per dimension the message names: a -1 already there is a "?" the
	// message leaves out, and rewriting the sizes would drop a dimension.
	var args []*analysis.Expr
	kw := false
	for _, c := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && (e.Value.Name == "reshape" || e.Value.Name == "view")
	}) {
		args, kw = c.Args, len(c.Keywords) > 0
		if len(args) == 1 && (args[0].Kind == analysis.ExprTuple || args[0].Kind == analysis.ExprList) {
			args = args[0].Args
		}
		break
	}
	if len(args) != len(dims) || kw {
		return nil
	}
	for _, a := range args {
		if v, ok := a.Const.(int64); a.Starred || ok && v < 0 || strings.TrimSpace(a.Text) == "-1" {
			return nil
		}
	}
	r := finding.Range{Start: args[0].Range.Start, End: args[len(args)-1].Range.End}
	var out []Candidate
	for _, keep := range []int{0, len(dims) - 1} {
		if dims[keep] <= 0 || size%dims[keep] != 0 {
			continue
		}
		nd := make([]string, len(dims))
		for i := range dims {
			nd[i] = "-1"
		}
		nd[keep] = strconv.Itoa(dims[keep])
		if len(dims) > 2 {
			// Keep every dimension but one; infer the one beside the kept end.
			for i := range dims {
				nd[i] = strconv.Itoa(dims[i])
			}
			if keep == 0 {
				nd[1] = "-1"
			} else {
				nd[len(dims)-2] = "-1"
			}
		}
		newArgs := strings.Join(nd, ", ")
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Infer a dimension: (%s)", newArgs), Edits: []finding.Edit{replaceAt(r, newArgs)}},
			Keeps: fmt.Sprintf("the data has %d elements; (%s) needs %d, and %d divides %d", size, joinInts(dims), product(dims), dims[keep], size),
		})
	}
	return out
}

// estimatorMethods are the estimator calls whose data arguments the shape families repair.
var estimatorMethods = map[string]bool{"fit": true, "predict": true, "predict_proba": true, "transform": true,
	"fit_transform": true, "score": true, "fit_predict": true, "decision_function": true, "partial_fit": true}

// callArgs finds the estimator/torch call on the crash statement and its positional
// arguments (as expressions of the cell's facts).
func callArgs(in *Input) (*analysis.Expr, []*analysis.Expr) {
	if in.Facts == nil {
		return nil, nil
	}
	var best *analysis.Expr
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil || c.Expr.Kind != analysis.ExprCall {
			continue
		}
		if v := c.Expr.Value; v != nil && v.Kind == analysis.ExprAttribute && estimatorMethods[v.Name] {
			best = c.Expr
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, best.Args
}

func makeColumn(in *Input) []Candidate {
	_, args := callArgs(in)
	if len(args) == 0 {
		return nil
	}
	x := args[0]
	var out []Candidate
	if x.Kind == analysis.ExprSubscript && x.Index != nil && x.Index.Kind == analysis.ExprConst {
		if _, ok := x.Index.Const.(string); ok {
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Select a one-column frame: %s[[%s]]", x.Value.Text, x.Index.Text), Edits: []finding.Edit{replaceAt(x.Index.Range, "["+x.Index.Text+"]")}},
				Keeps: "the same column, as a 2-D frame with one feature",
			})
		}
	}
	out = append(out, Candidate{
		Fix:   finding.Fix{Title: "Make X one column: .reshape(-1, 1)", Edits: []finding.Edit{replaceAt(x.Range, asArray(in, x)+".reshape(-1, 1)")}},
		Keeps: "the same values, one feature per sample, as sklearn wants X 2-D",
	})
	return out
}

func flattenY(in *Input) []Candidate {
	_, args := callArgs(in)
	if len(args) < 2 {
		return nil
	}
	y := args[1]
	text := y.Text
	if v, ok := in.value(text); ok && v.Kind == "dataframe" {
		text += ".to_numpy()"
	} else if !ok || v.Kind != "ndarray" {
		text = "np.ravel(" + text + ")"
		return []Candidate{{Fix: finding.Fix{Title: "Flatten y with np.ravel", Edits: []finding.Edit{replaceAt(y.Range, text)}}, Keeps: "the same labels, as the 1-D y sklearn wants"}}
	}
	return []Candidate{{Fix: finding.Fix{Title: "Flatten y with .ravel()", Edits: []finding.Edit{replaceAt(y.Range, text+".ravel()")}}, Keeps: "the same labels, as the 1-D y sklearn wants"}}
}

// selectFitColumns selects, from the frame passed in, the columns the model saw at fit time.
func selectFitColumns(in *Input) []Candidate {
	call, args := callArgs(in)
	if call == nil || len(args) == 0 || call.Value == nil || call.Value.Kind != analysis.ExprAttribute {
		return nil
	}
	recv := call.Value.Value.Text
	v, ok := in.value(recv)
	if !ok || v.Estimator == nil || len(v.Estimator.FeatureNamesIn) == 0 {
		return nil
	}
	x := args[0]
	if strings.HasPrefix(x.Text, "pd.get_dummies(") {
		// A split encoded on its own lacks the indicator columns of the categories it does
		// not contain; those are 0 for every row of it.
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Align the encoded columns with %s's (absent categories as 0)", recv), Edits: []finding.Edit{replaceAt(x.Range, x.Text+".reindex(columns="+recv+".feature_names_in_, fill_value=0)")}},
			Keeps: fmt.Sprintf("the split's own indicator columns, in the order %s was fitted on; a category the split lacks is 0 in every row", recv),
		}}
	}
	xv, ok := in.value(x.Text)
	if !ok || xv.Kind != "dataframe" {
		return nil
	}
	have := map[string]bool{}
	for _, c := range xv.Columns {
		if s, ok := c.Name.(string); ok {
			have[s] = true
		}
	}
	missing, indicators := 0, 0
	for _, n := range v.Estimator.FeatureNamesIn {
		if !have[n] {
			missing++
			if indicatorOf(n, have) {
				indicators++
			}
		}
	}
	if missing == 0 {
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Select the columns %s was fitted on", recv), Edits: []finding.Edit{replaceAt(x.Range, x.Text+"["+recv+".feature_names_in_]")}},
			Keeps: fmt.Sprintf("%s has every column %s saw at fit time; they are selected in fit order", x.Text, recv),
		}}
	}
	if indicators == missing && missing*2 <= len(v.Estimator.FeatureNamesIn) {
		// One-hot columns a split lacks are all-zero indicators, not missing data.
		return []Candidate{{
			Fix:   finding.Fix{Title: fmt.Sprintf("Align the columns with %s's (missing indicator columns as 0)", recv), Edits: []finding.Edit{replaceAt(x.Range, x.Text+".reindex(columns="+recv+".feature_names_in_, fill_value=0)")}},
			Keeps: fmt.Sprintf("%d of the %d columns %s was fitted on are absent from %s (indicator columns its categories never produced)", missing, len(v.Estimator.FeatureNamesIn), recv, x.Text),
		}}
	}
	return nil
}

// indicatorOf reports whether a missing column is a one-hot indicator ("Contract_y") of a
// category whose other indicators the frame has ("Contract_m"): a split without that
// category lacks it, and its value is 0 for every row, not missing data.
func indicatorOf(col string, have map[string]bool) bool {
	i := strings.LastIndexByte(col, '_')
	if i <= 0 {
		return false
	}
	prefix := col[:i+1]
	for h := range have {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

// matchingSplit swaps an argument whose length differs from the others for the split of
// the same family that matches them (y -> y_train).
func matchingSplit(in *Input) []Candidate {
	_, args := callArgs(in)
	if len(args) < 2 || in.Inspection == nil {
		return nil
	}
	length := func(name string) int {
		v, ok := in.value(name)
		if !ok {
			return -1
		}
		if len(v.Shape) > 0 {
			return v.Shape[0]
		}
		if v.Len != nil {
			return *v.Len
		}
		return -1
	}
	var out []Candidate
	for i, a := range args[:2] {
		other := args[1-i]
		if a.Kind != analysis.ExprName {
			continue
		}
		want := length(other.Text)
		if want < 0 || length(a.Text) == want {
			continue
		}
		suffix := ""
		for _, s := range []string{"_train", "_test", "_val", "_valid", "_tr", "_te"} {
			if strings.HasSuffix(other.Text, s) {
				suffix = s
			}
		}
		if suffix == "" {
			continue
		}
		base := strings.TrimSuffix(a.Text, "_train")
		cand := base + suffix
		if cand != a.Text && length(cand) == want {
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Use %s, the split that matches %s", cand, other.Text), Edits: []finding.Edit{replaceAt(a.Range, cand)}},
				Keeps: fmt.Sprintf("%s has %d samples like %s; %s has %d", cand, want, other.Text, a.Text, length(a.Text)),
			})
		}
	}
	return out
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// matchingClose returns the offset of the bracket closing the one before open.
func matchingClose(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

func atoi(s string) int { n, _ := strconv.Atoi(strings.TrimSpace(s)); return n }

func splitInts(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, atoi(p))
		}
	}
	return out
}

func joinInts(ns []int) string {
	ss := make([]string, len(ns))
	for i, n := range ns {
		ss[i] = strconv.Itoa(n)
	}
	return strings.Join(ss, ", ")
}

func product(ns []int) int {
	p := 1
	for _, n := range ns {
		p *= n
	}
	return p
}

// exprShapeLen returns the number of dimensions the facts give the name or chain e; 0 when
// unknown.
func (in *Input) exprShapeLen(e *analysis.Expr) int {
	if e == nil {
		return 0
	}
	if c, ok := e.Chain(); ok {
		if v, ok := in.value(c); ok {
			return len(v.Shape)
		}
	}
	return 0
}

// assignedWhole reports whether e is the whole value of an assignment statement of the
// cell (name = e).
func (in *Input) assignedWhole(e *analysis.Expr) bool {
	if in.Facts == nil {
		return false
	}
	for _, st := range in.Facts.Statements {
		if st.Kind == analysis.StmtAssign && st.Value != nil && st.Value.Range == e.Range {
			return true
		}
	}
	return false
}
