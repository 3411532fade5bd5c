package repair

import (
	"fmt"
	"regexp"
	"strings"
)

// Needs is the inverse reasoning of a value or shape error: what the failing call needed
// and what it got, grounded in the runtime facts (the feature count and columns the model
// was fitted with, the label range the loss accepts, the element count a reshape needs).
// It returns evidence lines, none when the crash is of another kind.
func Needs(in Input) []string {
	msg := in.message()
	var out []string
	if m := featuresRE.FindStringSubmatch(msg); m != nil {
		out = append(out, fmt.Sprintf("needed: %s features, as %s was fitted with; got: %s", m[3], m[2], m[1]))
	}
	if m := matmulRE.FindStringSubmatch(msg); m != nil && isProductLine(&in) {
		out = append(out, fmt.Sprintf("needed: the second matrix to have as many rows as the first has columns (%s); got: %s (%sx%s and %sx%s)", m[2], m[3], m[1], m[2], m[3], m[4]))
	} else if m != nil {
		out = append(out, fmt.Sprintf("needed: %s input features per sample (the layer's in_features); got: %s (input %sx%s)", m[3], m[2], m[1], m[2]))
	}
	if m := npReshapeRE.FindStringSubmatch(msg); m != nil {
		dims := splitInts(m[2])
		out = append(out, fmt.Sprintf("needed: %d elements for shape (%s); got: %s", product(positive(dims)), joinInts(dims), m[1]))
	}
	if m := torchViewRE.FindStringSubmatch(msg); m != nil {
		dims := splitInts(m[1])
		out = append(out, fmt.Sprintf("needed: %d elements for view (%s); got: %s", product(positive(dims)), joinInts(dims), m[2]))
	}
	if m := targetBoundsRE.FindStringSubmatch(msg); m != nil {
		line := fmt.Sprintf("needed: class labels in [0, C-1] (C = the width of the model's output); got: a target of %s", m[1])
		if c := outputWidth(in); c > 0 {
			line = fmt.Sprintf("needed: class labels in [0, %d] (the model outputs %d classes); got: a target of %s", c-1, c, m[1])
		}
		out = append(out, line)
	}
	if m := inconsistent.FindStringSubmatch(msg); m != nil {
		out = append(out, fmt.Sprintf("needed: as many labels as samples; got: sample counts [%s]", m[1]))
	}
	if expected2DRE.MatchString(msg) {
		out = append(out, oneDimNeeds(&in))
	}
	if concatSizesRE.MatchString(msg) {
		m := concatSizesRE.FindStringSubmatch(msg)
		out = append(out, fmt.Sprintf("needed: arrays of the same size on every axis but the one they are joined along; got: sizes %s and %s along axis %s", m[3], m[5], m[1]))
	}
	if featuresRE.MatchString(msg) || featureNames.MatchString(msg) {
		if call, _ := callArgs(&in); call != nil && call.Value != nil && call.Value.Value != nil {
			if v, ok := in.value(call.Value.Value.Text); ok && v.Estimator != nil && len(v.Estimator.FeatureNamesIn) > 0 {
				out = append(out, fmt.Sprintf("columns %s saw at fit time: [%s]", call.Value.Value.Text, abbreviate(v.Estimator.FeatureNamesIn, 12)))
			}
		}
	}
	return out
}

var targetBoundsRE = regexp.MustCompile(`Target (-?\d+) is out of bounds`)

// outputWidth is the out_features of the last layer of a module the crash line uses.
func outputWidth(in Input) int {
	line := lineAt(in.Text, in.crashLine())
	for _, n := range in.knownNames() {
		if v, _ := in.value(n); v.Module != nil && v.Module.Last != nil && v.Module.Last.OutFeatures != nil && strings.Contains(line, n) {
			return *v.Module.Last.OutFeatures
		}
	}
	return 0
}

func positive(ns []int) []int {
	var out []int
	for _, n := range ns {
		if n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func abbreviate(ss []string, n int) string {
	if len(ss) <= n {
		return strings.Join(ss, ", ")
	}
	return strings.Join(ss[:n], ", ") + fmt.Sprintf(", … (%d in all)", len(ss))
}
