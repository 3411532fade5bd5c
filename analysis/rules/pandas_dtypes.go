package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// pandas dtypes: text in numeric operations (arithmetic, reductions, comparisons), astype
// arguments and their casts (NaN to int, strings to numbers).

// nonNumeric returns a sample string that makes numeric conversion of s fail, or "".
func nonNumeric(s *val) string {
	if s == nil || (s.Kind != facts.KindSeries && s.Kind != facts.KindNDArray) || !isObjectDtype(s.Dtype) || len(s.Columns) != 1 {
		return ""
	}
	if ns := s.Columns[0].NonNumericSample; len(ns) > 0 {
		return ns[0]
	}
	return ""
}

// nonNumericColumns lists the columns of a frame (or array built from one) that hold
// non-numeric strings, with a sample value each.
func nonNumericColumns(v *val) (names []string, sample string) {
	if v == nil || (v.Kind != facts.KindDataFrame && v.Kind != facts.KindNDArray && v.Kind != facts.KindSeries) {
		return nil, ""
	}
	if v.Kind != facts.KindDataFrame && !isObjectDtype(v.Dtype) {
		return nil, ""
	}
	for _, col := range v.Columns {
		if isObjectDtype(col.Dtype) && len(col.NonNumericSample) > 0 {
			if v.Kind != facts.KindDataFrame || col.Name == nil {
				names = append(names, "its values")
			} else {
				names = append(names, "column "+pyRepr(col.Name))
			}
			if sample == "" {
				sample = col.NonNumericSample[0]
			}
		}
	}
	if len(names) == 0 && v.Kind == facts.KindNDArray && isObjectDtype(v.Dtype) {
		for _, x := range v.Sample {
			if s, ok := x.(string); ok && !looksNumeric(s) {
				return []string{"values"}, s
			}
		}
	}
	return names, sample
}

// looksNumeric reports whether float(s) would succeed, roughly.
func looksNumeric(s string) bool {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return false
	}
	switch s {
	case "nan", "inf", "-inf", "+inf", "infinity", "-infinity":
		return true
	}
	seenDigit := false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			seenDigit = true
		case r == '.' || r == 'e' || r == '_' || ((r == '-' || r == '+') && (i == 0 || s[i-1] == 'e')):
		default:
			return false
		}
	}
	return seenDigit
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// dtypeArg reads a dtype argument: 'int', int, np.float32, 'float64', str...
func dtypeArg(v *val) (string, bool) {
	if v == nil {
		return "", false
	}
	if s, ok := constStr(v); ok {
		switch s {
		case "int":
			return "int64", true
		case "float":
			return "float64", true
		case "str":
			return "object", true
		}
		return s, true
	}
	q := v.qual
	if q == "" {
		q = v.name
	}
	q = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(q, "numpy."), "np."), "builtins.")
	switch q {
	case "int":
		return "int64", true
	case "float":
		return "float64", true
	case "str":
		return "object", true
	case "float32", "float64", "int32", "int64", "int8", "int16", "uint8", "bool", "float16":
		return q, true
	}
	return "", false
}

// astypeArg reads the dtype argument of an astype call, including the builtins int, float,
// str and bool (which visit to no value) when the cell and the kernel leave them unbound.
func astypeArg(c *checker, k *callInfo) (string, bool) {
	if d, ok := dtypeArg(k.arg(0, "dtype")); ok {
		return d, true
	}
	x := k.argExpr(0, "dtype")
	if x == nil || x.Kind != analysis.ExprName || k.arg(0, "dtype") != nil {
		return "", false
	}
	if _, bound := c.state[x.Name]; bound {
		return "", false
	}
	if f, ok := c.env.value(x.Name); ok && f.Exists {
		return "", false
	}
	if c.env.Namespace != nil && c.env.Namespace[x.Name] {
		return "", false
	}
	switch x.Name {
	case "int":
		return "int64", true
	case "float":
		return "float64", true
	case "str":
		return "object", true
	case "bool":
		return "bool", true
	}
	return "", false
}

// checkAstype reports astype(int/float) of object columns holding non-numeric strings.
func checkAstype(c *checker, k *callInfo, v *val) {
	d, ok := astypeArg(c, k)
	if !ok || !isNumericDtype(d) {
		return
	}
	if errs, _ := constStr(k.kw["errors"]); errs == "ignore" {
		return
	}
	for _, col := range v.Columns {
		if !isObjectDtype(col.Dtype) || len(col.NonNumericSample) == 0 {
			continue
		}
		bad := col.NonNumericSample[0]
		what := "int()"
		if strings.HasPrefix(d, "float") {
			what = "float"
		}
		if strings.HasPrefix(d, "int") && looksNumeric(bad) {
			what = "int()"
		}
		c.report(k.e.Value.NameRange, finding.SeverityError, finding.ObjectColumnArith, "ValueError",
			fmt.Sprintf("column %s holds strings such as %q that %s cannot parse, so astype(%s) fails", pyRepr(col.Name), bad, what, d),
			0.95, []string{describe(v), "non-numeric values in " + pyRepr(col.Name) + ": " + strings.Join(quoteAll(col.NonNumericSample), ", ")}, nil)
		return
	}
	// int cast of float strings like '46.0' also fails: the inspector lists them as
	// numeric, so stay silent.
	if (v.Kind == facts.KindSeries || v.Kind == facts.KindDataFrame) && (strings.HasPrefix(d, "int") || strings.HasPrefix(d, "uint")) {
		checkIntCastNaN(c, k, v, d)
	}
}

// checkIntCastNaN reports astype(<numpy int>) of a float Series/column holding NaN or inf:
// pandas raises IntCastingNaNError (a ValueError) instead of casting. Nullable "Int64" and
// numpy arrays (which cast NaN to garbage) are not affected.
func checkIntCastNaN(c *checker, k *callInfo, v *val, d string) {
	cols := v.Columns
	if v.Kind == facts.KindSeries && len(cols) == 0 {
		cols = []facts.Column{{Dtype: v.Dtype}}
	}
	for _, col := range cols {
		dt := col.Dtype
		if v.Kind == facts.KindSeries && dt == "" {
			dt = v.Dtype
		}
		if !strings.HasPrefix(dt, "float") {
			continue
		}
		n := 0
		if col.Nulls != nil {
			n = *col.Nulls
		}
		inf := v.Kind == facts.KindSeries && v.HasInf != nil && *v.HasInf
		if n == 0 && !inf && !(v.Kind == facts.KindSeries && v.HasNaN != nil && *v.HasNaN) {
			continue
		}
		what := fmt.Sprintf("%d missing value(s)", n)
		if n == 0 {
			what = "missing or infinite values"
		}
		where := v.name
		if v.Kind == facts.KindDataFrame {
			where = fmt.Sprintf("column %s of %s", pyRepr(col.Name), v.name)
		}
		c.report(k.e.Value.NameRange, finding.SeverityError, finding.NaNToInt, "IntCastingNaNError",
			fmt.Sprintf("%s is float with %s, and astype(%s) cannot turn NaN into an integer (Cannot convert non-finite values (NA or inf) to integer); fill them first (.fillna(...)) or use the nullable 'Int64' dtype", where, what, d),
			0.95, []string{describe(v)}, []finding.Fix{replaceFix("Use the nullable 'Int64' dtype", k.argExpr(0, "dtype").Range, "'Int64'", false)})
		return
	}
}

// objectArith reports arithmetic between an object column of strings and a number.
func objectArith(c *checker, e *analysis.Expr, a, b *val) bool {
	if strSeries(a) && strSeries(b) && (e.Name == "-" || e.Name == "/" || e.Name == "*" || e.Name == "//" || e.Name == "**") {
		c.report(e.Range, finding.SeverityError, finding.ObjectColumnArith, "TypeError",
			fmt.Sprintf("%s and %s both hold strings, and strings do not support %s (unsupported operand type(s) for %s: 'str' and 'str'); convert them first (pd.to_datetime, pd.to_numeric)", a.name, b.name, e.Name, e.Name),
			0.93, []string{describe(a), describe(b)}, nil)
		return true
	}
	s, other := a, b
	if nonNumeric(s) == "" && !strSeries(s) {
		s, other = b, a
	}
	if s == nil || other == nil || (!strSeries(s) && nonNumeric(s) == "") {
		return false
	}
	if other.Kind != facts.KindInt && other.Kind != facts.KindFloat && !(other.Kind == facts.KindSeries && isNumericDtype(other.Dtype)) {
		return false
	}
	if e.Name == "*" && other.Kind == facts.KindInt {
		return false // string repetition works
	}
	if e.Name != "+" && e.Name != "-" && e.Name != "/" && e.Name != "*" && e.Name != "//" && e.Name != "**" {
		return false
	}
	sample := nonNumeric(s)
	msg := fmt.Sprintf("%s holds strings (dtype object), so %s %s a number raises TypeError", s.name, s.name, e.Name)
	if sample != "" {
		msg = fmt.Sprintf("%s holds strings such as %q, so %s %s a number raises TypeError; convert it to numbers first", s.name, sample, s.name, e.Name)
	}
	c.report(e.Range, finding.SeverityError, finding.ObjectColumnArith, "TypeError", msg, 0.93, []string{describe(s)}, nil)
	return true
}

// strSeries reports whether s is a Series whose values are all strings.
func strSeries(s *val) bool {
	if s == nil || s.Kind != facts.KindSeries || s.Dtype != "object" || len(s.Columns) != 1 {
		return false
	}
	et := s.Columns[0].ElementTypes
	return len(et) == 1 && et[0] == "str"
}

// checkCompare reports ordering comparisons between string columns and numbers.
func checkCompare(c *checker, e *analysis.Expr, a, b *val) {
	switch e.Name {
	case "<", ">", "<=", ">=":
	default:
		return
	}
	s, other := a, b
	if !strSeries(s) {
		s, other = b, a
	}
	if !strSeries(s) || other == nil || (other.Kind != facts.KindInt && other.Kind != facts.KindFloat) {
		return
	}
	c.report(e.Range, finding.SeverityError, finding.ObjectColumnArith, "TypeError",
		fmt.Sprintf("%s holds strings, so comparing it with %s using %s raises TypeError", s.name, other.name, e.Name),
		0.93, []string{describe(s)}, nil)
}
