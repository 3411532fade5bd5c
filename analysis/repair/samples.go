package repair

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// A 1-D X where sklearn wants 2-D: "Expected 2D array, got 1D array instead: array=[...].
// Reshape your data either using array.reshape(-1, 1) if your data has a single feature or
// array.reshape(1, -1) if it contains a single sample." Which of the two the cell means
// follows from what the call needs and what it got: a fitted estimator's n_features_in_
// against the array's length (from the message's own array=[...] or the inspector). One
// feature: the array is a column; n features and n values: it is one sample; anything else
// is neither, and nothing is offered. A fit learns the feature count from X, so its 1-D X
// is one feature of many samples. Unknown: both are offered and verification decides.

var arrayInMessageRE = regexp.MustCompile(`(?s)array=\[(.*?)\]\.?\s*\n?Reshape your data`)

// oneDimX returns the reshapes of a 1-D X that can be what the call meant.
func oneDimX(in *Input) []Candidate {
	call, args := callArgs(in)
	if call == nil || len(args) == 0 {
		return nil
	}
	x := args[0]
	method := call.Value.Name
	fitting := strings.HasPrefix(method, "fit") || method == "partial_fit"
	nf := -1
	if !fitting {
		if v, ok := in.value(call.Value.Value.Text); ok && v.Estimator != nil && v.Estimator.Fitted && v.Estimator.NFeaturesIn != nil {
			nf = *v.Estimator.NFeaturesIn
		}
	}
	n := oneDimLength(in, x)
	if strings.Contains(in.message(), "got scalar array") {
		n = 1
	}
	column := func() []Candidate { return makeColumn(in) }
	switch {
	case fitting || nf == 1:
		return column()
	case nf > 1 && (n == nf || n < 0):
		return sampleRow(in, x, nf, n)
	case nf > 1:
		return nil // n values are neither one feature nor one sample of nf features
	case n == 1:
		// One value: one sample of one feature either way; the column form reads best.
		return column()
	}
	return append(sampleRow(in, x, nf, n), column()...)
}

// oneDimLength is the number of values of the 1-D X: counted in the message's printed
// array when numpy printed all of it, else the inspector's shape; -1 when unknown.
func oneDimLength(in *Input, x *analysis.Expr) int {
	if m := arrayInMessageRE.FindStringSubmatch(in.message()); m != nil && !strings.Contains(m[1], "...") {
		toks := strings.Fields(m[1])
		ok := len(toks) > 0
		for _, t := range toks {
			if _, err := strconv.ParseFloat(strings.TrimSuffix(t, "."), 64); err != nil && t != "nan" && t != "inf" && t != "-inf" {
				ok = false
			}
		}
		if ok {
			return len(toks)
		}
	}
	if v, ok := in.value(x.Text); ok {
		if len(v.Shape) == 1 {
			return v.Shape[0]
		}
		if len(v.Shape) == 0 && v.Len != nil && (v.Kind == facts.KindList || v.Kind == facts.KindSeries || v.Kind == facts.KindTuple) {
			return *v.Len
		}
	}
	return -1
}

// sampleRow makes X one sample: x.reshape(1, -1).
func sampleRow(in *Input, x *analysis.Expr, nf, n int) []Candidate {
	keeps := "the same values as the features of one sample, as sklearn wants X 2-D (samples × features)"
	if nf > 0 && n == nf {
		keeps = fmt.Sprintf("the model expects %d features and X has %d values: they are one sample", nf, n)
	} else if nf > 0 {
		keeps = fmt.Sprintf("the model expects %d features; a single column would have one", nf)
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: "Make X one sample: .reshape(1, -1)", Edits: []finding.Edit{replaceAt(x.Range, asArray(in, x)+".reshape(1, -1)")}},
		Keeps: keeps,
	}}
}

// asArray is x as text that has .reshape: x itself for an array (known to the inspector
// or built by a NumPy call in the cell), its NumPy array for a pandas object, else
// np.asarray(x).
func asArray(in *Input, x *analysis.Expr) string {
	text := x.Text
	if needsParens(x) {
		text = "(" + text + ")"
	}
	if v, ok := in.value(x.Text); ok {
		switch v.Kind {
		case facts.KindNDArray, facts.KindTensor:
			return text
		case facts.KindSeries, facts.KindDataFrame:
			return text + ".to_numpy()"
		}
	}
	if x.Kind == analysis.ExprName && builtByNumpy(in, x.Name) {
		return text
	}
	if x.Kind == analysis.ExprAttribute && x.Name == "values" || endsWithCall(x, "to_numpy") {
		return text
	}
	return "np.asarray(" + x.Text + ")"
}

// builtByNumpy reports whether the cell's last top-level binding of name before the crash
// line is a NumPy call (np.array(...), np.linspace(...)) or a .to_numpy()/.values.
func builtByNumpy(in *Input, name string) bool {
	if in.Facts == nil {
		return false
	}
	found := false
	for _, st := range in.Facts.Statements {
		if st == nil || st.Range.Start.Line >= in.crashLine() || len(st.Targets) != 1 || st.Targets[0].Kind != analysis.ExprName || st.Targets[0].Name != name || st.Value == nil {
			continue
		}
		v := st.Value
		found = false
		if v.Kind == analysis.ExprCall && v.Value != nil {
			c, _ := v.Value.Chain()
			found = strings.HasPrefix(c, "np.") || strings.HasPrefix(c, "numpy.") || endsWithCall(v, "to_numpy")
		}
		if v.Kind == analysis.ExprAttribute && v.Name == "values" {
			found = true
		}
	}
	return found
}

// oneDimNeeds is the "needed / got" evidence of a 1-D X: the feature count the fitted
// model needs against the values the array has, when known.
func oneDimNeeds(in *Input) string {
	line := "needed: a 2-D X (samples × features); got: a 1-D array"
	call, args := callArgs(in)
	if call == nil || len(args) == 0 || strings.HasPrefix(call.Value.Name, "fit") {
		return line
	}
	v, ok := in.value(call.Value.Value.Text)
	if !ok || v.Estimator == nil || !v.Estimator.Fitted || v.Estimator.NFeaturesIn == nil {
		return line
	}
	line = fmt.Sprintf("needed: a 2-D X of %d features per sample (%s.n_features_in_); got: a 1-D array", *v.Estimator.NFeaturesIn, call.Value.Value.Text)
	if n := oneDimLength(in, args[0]); n >= 0 {
		line += fmt.Sprintf(" of %d values", n)
	}
	return line
}
