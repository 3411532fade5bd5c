package repair

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Dtype and device errors: a tensor converted with .float() or .long() to the dtype the
// operation names, an array or frame handed to torch converted to a float32 tensor, a
// tensor moved with .to(device), text numbers parsed with pd.to_numeric, an integer cast of
// a column with missing values done with the nullable Int64 dtype.

func init() {
	register(family{name: "dtype", gen: dtypeGen})
}

var (
	wantFloatRE   = regexp.MustCompile(`(?i)expected scalar type Float|found dtype Double but expected Float|must have the same dtype|expected m1 and m2 to have the same dtype|Input type \(torch\.DoubleTensor\)`)
	wantLongRE    = regexp.MustCompile(`(?i)expected scalar type Long|found dtype Float but expected Long|"nll_loss.*" not implemented for 'Float'|expected .*Long.*but got.*Float|not implemented for 'Float'.*target|Expected floating point type for target with class probabilities`)
	notTensorRE   = regexp.MustCompile(`must be Tensor, not (numpy\.ndarray|DataFrame|Series|list)|'(numpy\.ndarray|DataFrame)' object has no attribute '(dim|float|size)'`)
	deviceRE      = regexp.MustCompile(`Expected all tensors to be on the same device`)
	operandRE     = regexp.MustCompile(`unsupported operand type\(s\) for [^:]+: '(str|int|float)' and '(str|int|float)'|can only concatenate str|could not convert string to float`)
	intNaNRE      = regexp.MustCompile(`Cannot convert non-finite values \(NA or inf\) to integer`)
	textNumberRE  = regexp.MustCompile(`(?:invalid literal for int\(\) with base 10|could not convert string to float): '([^']*)'`)
	digitsRE      = regexp.MustCompile(`[0-9]`)
	strAccessorRE = regexp.MustCompile(`Can only use \.str accessor with string values`)
)

func dtypeGen(in *Input) []Candidate {
	msg := in.message()
	var out []Candidate
	switch {
	case wantLongRE.MatchString(msg):
		out = append(out, convertTensorArgs(in, ".long()", "Convert %s to integer class labels with .long()", true)...)
	case wantFloatRE.MatchString(msg):
		out = append(out, convertTensorArgs(in, ".float()", "Convert %s to float32 with .float()", false)...)
	}
	if notTensorRE.MatchString(msg) {
		out = append(out, toTensor(in)...)
	}
	if deviceRE.MatchString(msg) && in.inNamespace("device") {
		out = append(out, convertTensorArgs(in, ".to(device)", "Move %s to the model's device", false)...)
	}
	if operandRE.MatchString(msg) {
		out = append(out, toNumeric(in)...)
	}
	if m := textNumberRE.FindStringSubmatch(msg); m != nil && digitsRE.MatchString(m[1]) {
		out = append(out, stripNumberText(in, m[1])...)
	}
	if m := textNumberRE.FindStringSubmatch(msg); m != nil && strings.EqualFold(m[1], "nan") {
		out = append(out, nanTextToInt(in)...)
	}
	if strAccessorRE.MatchString(msg) {
		for _, r := range findOnLine(in.Text, in.crashLine(), ".str.") {
			p := r.Start
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: "Convert to strings before .str", Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: ".astype(str)"}}},
				Keeps: "the same values as text, which the .str accessor works on",
			})
			break
		}
	}
	if intNaNRE.MatchString(msg) {
		for _, c := range intCasts(in) {
			r := c.Args[0].Range
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: "Cast with the nullable 'Int64' dtype", Edits: []finding.Edit{replaceAt(r, "'Int64'")}},
				Keeps: "the same integers; missing values stay missing (<NA>) instead of failing the cast",
			})
		}
	}
	return out
}

// tensorArgs returns the positional arguments of the calls on the crash line that are
// tensors (per the inspection), or every name argument when nothing is known.
func tensorArgs(in *Input) []*analysis.Expr {
	var out []*analysis.Expr
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		for _, a := range c.Expr.Args {
			if a.Kind != analysis.ExprName && a.Kind != analysis.ExprAttribute && a.Kind != analysis.ExprSubscript {
				continue
			}
			if v, ok := in.value(a.Text); ok && v.Kind != facts.KindTensor || numpyValues(a) {
				continue
			}
			if root := a.Root(); a.Kind == analysis.ExprAttribute && root != "" && in.moduleOf(root) != "" {
				continue // np.float32: a module's name, no tensor
			}
			out = append(out, a)
		}
		// torch.from_numpy(df[cols].values): the tensor is the call's result, in the
		// array's dtype; the call itself is converted.
		if c.Expr.Value != nil && calleeText(c.Expr) == "torch.from_numpy" {
			out = append(out, c.Expr)
		}
	}
	return out
}

// numpyValues reports whether e is a frame's values as a NumPy array by its syntax
// (.values, .to_numpy()): no tensor method applies to it.
func numpyValues(e *analysis.Expr) bool {
	return e.Kind == analysis.ExprAttribute && e.Name == "values" ||
		e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "to_numpy"
}

func convertTensorArgs(in *Input, suffix, title string, lastFirst bool) []Candidate {
	args := tensorArgs(in)
	if lastFirst {
		// Targets come last in loss calls: try them first.
		for i, j := 0, len(args)-1; i < j; i, j = i+1, j-1 {
			args[i], args[j] = args[j], args[i]
		}
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, a := range args {
		if seen[a.Text] || strings.HasSuffix(a.Text, suffix) {
			continue
		}
		seen[a.Text] = true
		if c, ok := dtypeWhereMade(in, a, suffix); ok {
			// Made with the wrong dtype written out: the root cause, repaired where it is,
			// so every later use gets the right dtype too.
			out = append(out, c)
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf(title, a.Text), Edits: []finding.Edit{replaceAt(a.Range, a.Text+suffix)}},
			Keeps: "the same values in the dtype (or on the device) the operation needs",
		})
	}
	return out
}

// madeDtypes are the dtypes .long() and .float() convert to, as a factory's dtype= writes them.
var madeDtypes = map[string]string{".long()": "torch.long", ".float()": "torch.float32"}

// dtypeWhereMade rewrites the dtype= keyword of the torch factory that made the tensor a
// (token_ids = torch.tensor(ids, dtype=torch.float32) for an Embedding) to the dtype the
// conversion suffix gives; false when a is not a name so made.
func dtypeWhereMade(in *Input, a *analysis.Expr, suffix string) (Candidate, bool) {
	want := madeDtypes[suffix]
	if a.Kind != analysis.ExprName || want == "" {
		return Candidate{}, false
	}
	b, ok := in.assignedAbove(a.Name)
	if !ok || b.value.Kind != analysis.ExprCall || !strings.HasPrefix(calleeText(b.value), "torch.") {
		return Candidate{}, false
	}
	for _, k := range b.value.Keywords {
		if k.Name != "dtype" || k.Value == nil || !strings.HasPrefix(k.Value.Text, "torch.") || k.Value.Text == want {
			continue
		}
		e := replaceAt(k.Value.Range, want)
		e.Cell = b.cell
		title := fmt.Sprintf("Make %s with dtype=%s where it is made", a.Name, want)
		if b.cell != "" {
			title += fmt.Sprintf(" in cell %d (run it again)", b.index+1)
		}
		return Candidate{
			Fix:   finding.Fix{Title: title, Edits: []finding.Edit{e}},
			Keeps: fmt.Sprintf("the same values of %s, made in the dtype every use of it needs (it was made %s)", a.Name, k.Value.Text),
		}, true
	}
	return Candidate{}, false
}

func toTensor(in *Input) []Candidate {
	var out []Candidate
	for _, a := range tensorArgsAny(in) {
		v, ok := in.value(a.Text)
		if !ok {
			continue
		}
		src := a.Text
		switch v.Kind {
		case facts.KindDataFrame, facts.KindSeries:
			src += ".to_numpy()"
		case facts.KindNDArray, facts.KindList:
		default:
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Convert %s to a float32 tensor", a.Text), Edits: []finding.Edit{replaceAt(a.Range, "torch.tensor("+src+", dtype=torch.float32)")}},
			Keeps: "the same values, as the tensor torch layers take",
		})
	}
	return out
}

func tensorArgsAny(in *Input) []*analysis.Expr {
	var out []*analysis.Expr
	for _, c := range in.callsOnLine(in.crashLine()) {
		if c.Expr == nil {
			continue
		}
		for _, a := range c.Expr.Args {
			if a.Kind == analysis.ExprName || a.Kind == analysis.ExprAttribute {
				out = append(out, a)
			}
		}
	}
	return out
}

// toNumeric parses an object column of number-like text on the crash line.
func toNumeric(in *Input) []Candidate {
	if in.Facts == nil {
		return nil
	}
	var out []Candidate
	for _, s := range in.Facts.Subscripts {
		if s.Range.Start.Line != in.crashLine() || s.List || len(s.Keys) != 1 || s.Object == nil {
			continue
		}
		col, ok := s.Keys[0].(string)
		if !ok {
			continue
		}
		v, ok := in.value(s.Object.Text)
		if !ok {
			continue
		}
		for _, c := range v.Columns {
			if c.Name != col || c.Dtype != "object" {
				continue
			}
			expr := textOf(in.Text, s.Range)
			inner := expr
			symbols := false
			for _, x := range c.NonNumericSample {
				if strings.ContainsAny(x, "$,€£% ") {
					symbols = true
				}
			}
			if symbols {
				inner = expr + `.str.replace(r"[$,€£% ]", "", regex=True)`
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Parse %s as numbers (pd.to_numeric)", expr), Edits: []finding.Edit{replaceAt(s.Range, "pd.to_numeric("+inner+", errors='coerce')")}},
				Keeps: fmt.Sprintf("column %s holds numbers written as text (%s); they are parsed, text that is no number becomes NaN", col, strings.Join(c.NonNumericSample, ", ")),
			})
		}
	}
	return out
}

// stripNumberText makes numbers written with symbols ("10,000+", "$1,234.50") castable: the
// characters that are no part of a number are removed before the .astype on the crash line.
func stripNumberText(in *Input, sample string) []Candidate {
	l := in.crashLine()
	var out []Candidate
	for _, r := range findOnLine(in.Text, l, ".astype(") {
		p := r.Start
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Remove the non-numeric characters before the cast", Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: `.str.replace(r"[^0-9.\-]", "", regex=True)`}}},
			Keeps: fmt.Sprintf("the numbers are written with symbols (%q); the digits are kept and cast as before", sample),
		})
		break
	}
	return out
}

// nanTextToInt casts numbers written as text with missing values spelled 'nan' (what
// str(x) makes of NaN) to the nullable integer dtype through float, which parses 'nan' as
// missing: the same integers, the missing values staying missing. Any other text still
// fails the cast, so nothing that is no number is hidden.
func nanTextToInt(in *Input) []Candidate {
	q := quoteOf(lineAt(in.Text, in.crashLine()))
	var out []Candidate
	for _, c := range intCasts(in) {
		// From the dot before astype to the closing parenthesis.
		r := finding.Range{Start: c.Value.Value.Range.End, End: c.Range.End}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Cast through float to the nullable 'Int64' dtype ('nan' stays missing)", Edits: []finding.Edit{replaceAt(r, ".astype(float).astype("+q+"Int64"+q+")")}},
			Keeps: "the same integers; the text 'nan' (a missing value made text) becomes <NA> instead of failing the cast",
		})
	}
	return out
}

// intCasts returns the crash line's casts to a plain integer dtype: .astype(int),
// .astype("int64"), .astype(np.int64).
func intCasts(in *Input) []*analysis.Expr {
	return in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool {
		if e.Kind != analysis.ExprCall || e.Value == nil || e.Value.Kind != analysis.ExprAttribute || e.Value.Name != "astype" || e.Value.Value == nil || len(e.Args) != 1 || len(e.Keywords) != 0 {
			return false
		}
		a := e.Args[0]
		s, _ := a.Const.(string)
		return a.Kind == analysis.ExprName && a.Name == "int" || s == "int" || s == "int64" || a.Text == "np.int64"
	})
}
