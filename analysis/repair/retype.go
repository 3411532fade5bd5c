package repair

import (
	"fmt"
	"sort"
	"strings"
)

// The guard's runtime half. IntentKept judges a candidate by its text; what a name holds
// after the edit only a run can tell. A fix whose cell now runs because X became a NumPy
// array where it was a frame, because the model is now another estimator, or because y is
// now a number, makes the crash go away by changing what the notebook computes. So
// verification asks the run for the types of the names the edited cells bind (judge), and
// TypeChange refuses the candidate when one of them is left unbound or changes its kind.

// TypeChange returns why a run's types (after: name to qualified type, "" when unbound)
// break the intent of the names whose types before the fix are in before; "" when every
// name keeps its kind. Kinds are coarse on purpose: a Series that became a one-column
// frame, an array reshaped or a tensor made float is still the same data (the usual repair
// of a shape or dtype), and an int that became a float the same number. A name that held
// None before was the bug itself (df = df.dropna(inplace=True)): any value is kept.
func TypeChange(before, after map[string]string) string {
	names := make([]string, 0, len(before))
	for n := range before {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		was := before[n]
		now, ok := after[n]
		if !ok || was == "" || was == "NoneType" {
			continue // not reported (the run's budget), or nothing to keep
		}
		if now == "" {
			return fmt.Sprintf("the fix leaves %s unbound", n)
		}
		if typeKind(was) != typeKind(now) {
			return fmt.Sprintf("the fix changes %s from %s to %s", n, shortType(was), shortType(now))
		}
	}
	return ""
}

// dataTypes are the containers one repair may turn into one another: the same data
// as a frame, a column, an array, a tensor or a list, or a lazy iterable of it (a map
// made a list yields the same values, and can be read twice).
var dataTypes = map[string]bool{
	"pandas.core.frame.DataFrame": true, "pandas.core.series.Series": true, "numpy.ndarray": true,
	"torch.Tensor": true, "torch.nn.parameter.Parameter": true, "list": true, "tuple": true,
	"numpy.matrix": true, "map": true, "zip": true, "filter": true, "generator": true, "range": true,
	"dict_keys": true, "dict_values": true, "dict_items": true,
}

// numberTypes are the scalars one repair may turn into one another.
var numberTypes = map[string]bool{"int": true, "float": true, "bool": true, "complex": true}

// typeKind is the kind a qualified type belongs to for TypeChange: "data", "number", or
// the type itself.
func typeKind(t string) string {
	switch {
	case dataTypes[t] || strings.HasPrefix(t, "scipy.sparse.") || strings.HasPrefix(t, "pandas.core.indexes."):
		return "data"
	case numberTypes[t] || strings.HasPrefix(t, "numpy.int") || strings.HasPrefix(t, "numpy.uint") || strings.HasPrefix(t, "numpy.float") || t == "numpy.bool_":
		return "number"
	case t == "str" || t == "numpy.str_":
		return "str"
	}
	return t
}

// shortType is a qualified type without its module path ("DataFrame").
func shortType(t string) string {
	if i := strings.LastIndex(t, "."); i >= 0 {
		return t[i+1:]
	}
	return t
}
