package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: plotting. plt.imshow of arrays that are not images (channels first, 0-D),
// seaborn 0.12+ plotting functions given positional data arguments or only a categorical
// axis, and statsmodels' qqplot given a number as its line option.

// plotCall handles matplotlib and seaborn calls.
func plotCall(c *checker, k *callInfo) (*val, bool) {
	switch {
	case k.qual == "matplotlib.pyplot.imshow" || (k.method == "imshow" && k.recv != nil && strings.Contains(k.recv.Type, "matplotlib")):
		checkImshow(c, k)
		return nil, true
	case strings.HasPrefix(k.qual, "seaborn."):
		checkSeaborn(c, k, strings.TrimPrefix(k.qual, "seaborn."))
		return nil, true
	case k.qual == "statsmodels.api.qqplot" || k.qual == "statsmodels.graphics.gofplots.qqplot":
		if l := k.argExpr(-1, "line"); l != nil && l.Kind == analysis.ExprConst {
			switch l.Const.(type) {
			case int64, float64:
				c.report(l.Range, finding.SeverityError, finding.InvalidParam, "ValueError",
					fmt.Sprintf("qqplot's line takes '45', 's', 'r', 'q' or None, not the number %s (%s option for line not understood)", l.Text, l.Text),
					0.95, []string{"statsmodels qqplot(line=...) accepts '45', 's', 'r', 'q', None"},
					[]finding.Fix{replaceFix("Quote it", l.Range, "'"+l.Text+"'", true)})
			}
		}
		return nil, true
	}
	return nil, false
}

// checkImshow reports arrays matplotlib cannot show: anything but (M, N), (M, N, 1|3|4).
func checkImshow(c *checker, k *callInfo) {
	x, xExpr := k.arg(0, "X"), k.argExpr(0, "X")
	if xExpr == nil || !arrayLike(x) {
		return
	}
	s, ok := x.shapeKnown()
	if !ok {
		return
	}
	if len(s) == 2 || (len(s) == 3 && (s[2] == 1 || s[2] == 3 || s[2] == 4)) {
		return
	}
	var fixes []finding.Fix
	msg := fmt.Sprintf("%s has shape %s, which is not an image: imshow takes (H, W) or (H, W, 3|4) (Invalid shape %s for image data)", x.name, shapeTuple(s), shapeTuple(s))
	if len(s) == 3 && (s[0] == 3 || s[0] == 4 || s[0] == 1) {
		msg += "; the channels come first"
		move := ".transpose(1, 2, 0)"
		if x.Kind == facts.KindTensor {
			move = ".permute(1, 2, 0)"
		}
		fixes = append(fixes, replaceFix("Move the channels last", xExpr.Range, xExpr.Text+move, true))
	}
	c.report(xExpr.Range, finding.SeverityError, finding.ImageShape, "TypeError", msg, 0.95, []string{describe(x)}, fixes)
}

// seabornDataFirst are the seaborn functions whose only positional parameter is data
// (keyword-only x, y, ... since 0.12).
var seabornDataFirst = set("countplot", "barplot", "boxplot", "violinplot", "stripplot", "swarmplot", "pointplot",
	"boxenplot", "scatterplot", "lineplot", "histplot", "kdeplot", "ecdfplot", "rugplot", "displot",
	"catplot", "relplot", "lmplot", "regplot", "jointplot", "residplot")

// checkSeaborn reports positional x/y arguments that seaborn 0.12+ rejects.
func checkSeaborn(c *checker, k *callInfo, fn string) {
	if !seabornDataFirst[fn] {
		return
	}
	major, minor, ok := c.seabornVersion(k)
	if !ok || major == 0 && minor < 12 {
		return
	}
	pos := 0
	for _, a := range k.e.Args {
		if a.Starred {
			return
		}
		pos++
	}
	ver := fmt.Sprintf("seaborn %d.%d", major, minor)
	if oneAxis[fn] && pos <= 1 && major == 0 && minor == 12 && !k.has(-1, "orient") && checkOneAxis(c, k, fn, ver) {
		return
	}
	switch {
	case pos >= 2:
		c.report(k.e.Range, finding.SeverityError, finding.PositionalArgs, "TypeError",
			fmt.Sprintf("%s() takes only data positionally in %s, but got %d positional arguments; pass x=..., y=... by keyword", fn, ver, pos),
			0.95, []string{"seaborn version " + ver}, nil)
	case pos == 1 && k.has(-1, "data"):
		first := k.e.Args[0]
		c.report(k.e.Range, finding.SeverityError, finding.PositionalArgs, "TypeError",
			fmt.Sprintf("%s() got multiple values for argument 'data': in %s the first positional argument is data, not x", fn, ver),
			0.95, []string{"seaborn version " + ver},
			[]finding.Fix{replaceFix("Pass it as x=", first.Range, "x="+first.Text, true)})
	}
}

// seabornVersion reads <alias>.__version__ from the kernel facts (Wanted asks for it).
func (c *checker) seabornVersion(k *callInfo) (int, int, bool) {
	root := k.e.Value.Root()
	f, ok := c.env.value(root + ".__version__")
	if !ok || !f.Exists {
		return 0, 0, false
	}
	v := strings.Trim(f.Repr, "'\"")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return major, minor, true
}

// oneAxis are the seaborn 0.12 categorical plots that need a numeric variable: given only a
// categorical x (or y) they raise.
var oneAxis = set("violinplot", "boxplot", "boxenplot", "pointplot", "barplot")

// checkOneAxis reports fn(data, x='text column') without y (or y= without x).
func checkOneAxis(c *checker, k *callInfo, fn, ver string) bool {
	hasX, hasY := k.has(-1, "x"), k.has(-1, "y")
	if hasX == hasY {
		return false
	}
	axis, other := "x", "Horizontal"
	if hasY {
		axis, other = "y", "Vertical"
	}
	data := k.arg(0, "data")
	col, ok := constStr(k.kw[axis])
	if data == nil || data.Kind != facts.KindDataFrame || !ok {
		return false
	}
	column, found := data.column(col)
	if !found || !(isObjectDtype(column.Dtype) || column.Dtype == "category" || column.Dtype == "bool") {
		return false
	}
	c.report(k.e.Range, finding.SeverityError, finding.PlotOrientation, "TypeError",
		fmt.Sprintf("%s() with only %s=%s plots a %s column alone, but %s needs a numeric variable there (%s orientation requires numeric `%s` variable); pass the numeric column as the other axis, or use countplot",
			fn, axis, pyRepr(col), column.Dtype, ver, other, axis),
		0.93, []string{describe(data), "seaborn version " + ver}, nil)
	return true
}
