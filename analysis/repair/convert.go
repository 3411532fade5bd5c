package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// An operand of the wrong container, converted where it is read: the exception names the
// type it got ("'list' object has no attribute 'shape'", "linear(): argument 'input' must
// be Tensor, not numpy.ndarray", "object of type 'generator' has no len()", "'module'
// object is not callable"), and the runtime facts say which operand on the crash line has
// that type. The conversion is the one the consumer's words ask for: a list or tuple becomes
// a NumPy array (or a tensor for torch), an array a float32 tensor (integers stay integer,
// as class indices must), a generator or a zip a list, a frame's values a tensor, a module called like its namesake function the
// function (tqdm.tqdm). The values are the same; only their container changes. (A tensor
// NumPy cannot take is detach.go's.)

func init() {
	register(family{name: "convert-operand", gen: convertGen})
}

func convertGen(in *Input) []Candidate {
	switch in.exception() {
	case "TypeError", "AttributeError", "ValueError", "RuntimeError":
	default:
		return nil
	}
	words := typeWords(in.message())
	if len(words) == 0 {
		return nil
	}
	var out []Candidate
	add := func(e *analysis.Expr, code, what string) {
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Convert %s to %s: %s", e.Text, what, code), Edits: []finding.Edit{replaceAt(e.Range, code)}},
			Keeps: fmt.Sprintf("the values of %s, in the container the call needs (%s)", e.Text, what),
		})
	}
	// Where the operand is bound (a plain assignment above the crash line, in the cell or
	// the history), the same conversion of the value bound: a map consumed by sum() before
	// len() reads it must be a list from the start.
	atBinding := func(e *analysis.Expr, wrap, what string) {
		b, ok := in.assignedAbove(e.Name)
		if !ok || strings.HasPrefix(b.value.Text, wrap+"(") {
			return
		}
		where := ""
		if b.cell != "" {
			where = fmt.Sprintf(" in cell %d (run it again)", b.index+1)
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Make %s %s where it is bound: %s(...)%s", e.Name, what, wrap, where), Edits: b.wrap(wrap+"(", ")")},
			Keeps: fmt.Sprintf("%s holds the same values, in the container every later use needs (%s)", e.Name, what),
		})
	}
	bound := map[string]bool{}
	if in.Facts != nil {
		for _, d := range in.Facts.Defs {
			if d.Range.Start.Line == in.crashLine() {
				bound[rangeKey(d.Range)] = true
			}
		}
	}
	torch := words["Tensor"] || words["torch"]
	seen := map[string]bool{}
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName }) {
		v, ok := in.value(e.Name)
		if !ok || bound[rangeKey(e.Range)] {
			continue
		}
		first := !seen[e.Name]
		seen[e.Name] = true
		switch kind := typeName(v); {
		case dataKinds[v.Kind] && strings.Contains(in.message(), "object is not callable"):
			// df("price"): brackets meant, the one argument is the key.
			if call := callOf(in, e); call != nil && len(call.Args) == 1 && len(call.Keywords) == 0 && !call.Args[0].Starred {
				out = append(out, Candidate{
					Fix:   finding.Fix{Title: fmt.Sprintf("Index %s with brackets: %s[%s] (it is data, not a function)", e.Text, e.Text, call.Args[0].Text), Edits: []finding.Edit{replaceAt(call.Range, e.Text+"["+call.Args[0].Text+"]")}},
					Keeps: fmt.Sprintf("the same %s of %s, selected as data is", call.Args[0].Text, e.Text),
				})
			}
		case (kind == "list" || kind == "tuple") && words[kind]:
			if torch && in.torchImported() {
				add(e, "torch.tensor("+e.Text+")", "a tensor")
			}
			if in.inNamespace("np") {
				add(e, "np.array("+e.Text+")", "a NumPy array")
				if first {
					atBinding(e, "np.array", "a NumPy array")
				}
			}
		case (kind == "generator" || kind == "zip" || kind == "map" || kind == "filter" || kind == "dict_keys" || kind == "dict_values") && words[kind]:
			add(e, "list("+e.Text+")", "a list")
			if first {
				atBinding(e, "list", "a list")
			}
		case kind == "ndarray" && torch && in.torchImported():
			if strings.HasPrefix(v.Dtype, "int") || strings.HasPrefix(v.Dtype, "uint") || v.Dtype == "bool" {
				add(e, "torch.from_numpy("+e.Text+")", "a tensor")
			} else {
				add(e, "torch.tensor("+e.Text+", dtype=torch.float32)", "a float32 tensor")
			}
		case (kind == "DataFrame" || kind == "Series") && torch && in.torchImported():
			add(e, "torch.tensor("+e.Text+".values, dtype=torch.float32)", "a float32 tensor")
		case kind == "module" && words["module"] && strings.Contains(in.message(), "not callable"):
			if call := callOf(in, e); call != nil && (len(v.Attributes) == 0 || containsStr(v.Attributes, e.Name)) {
				add(e, e.Text+"."+e.Name, "the function the module is named after")
			}
		}
	}
	if words["unhashable"] && words["list"] {
		out = append(out, hashableKeys(in)...)
	}
	return out
}

// hashableKeys makes the lists the crash line uses as keys tuples ("unhashable type:
// 'list'"): every list display on the line at once (counts[[a, b]] = counts.get([a, b], 0)
// + 1 needs both), and a name bound to a list, where it is bound.
func hashableKeys(in *Input) []Candidate {
	var out []Candidate
	var edits []finding.Edit
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprList && len(e.Args) > 0 }) {
		inner := strings.TrimSuffix(strings.TrimPrefix(e.Text, "["), "]")
		if len(e.Args) == 1 && !strings.HasSuffix(strings.TrimSpace(inner), ",") {
			inner += ","
		}
		edits = append(edits, replaceAt(e.Range, "("+inner+")"))
	}
	if len(edits) > 0 && !overlapping(edits) {
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: "Use tuples for the keys on this line (a list cannot be a key)", Edits: edits},
			Keeps: "the same items in the same order, as a tuple, which a dict or set can hold",
		})
	}
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName }) {
		if v, ok := in.value(e.Name); !ok || v.Kind != facts.KindList {
			continue
		}
		b, ok := in.assignedAbove(e.Name)
		if !ok || b.value.Kind != analysis.ExprList {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Bind %s to a tuple (a list cannot be a key)", e.Name), Edits: b.wrap("tuple(", ")")},
			Keeps: fmt.Sprintf("%s holds the same items in the same order, as a tuple", e.Name),
		})
		break
	}
	return out
}

// overlapping reports whether two edits' ranges overlap (nested list displays).
func overlapping(es []finding.Edit) bool {
	for i := range es {
		for j := range es {
			if i != j && !es[i].Range.End.Before(es[j].Range.Start) && !es[j].Range.End.Before(es[i].Range.Start) {
				return true
			}
		}
	}
	return false
}

// assignedAbove returns the assignment name = value that the crash line reads: the last
// one above it in the crashing cell, loop and branch bodies included (the bigram a loop
// builds), else the history's (binding); false when a tuple or attribute is assigned.
func (in *Input) assignedAbove(name string) (buildSite, bool) {
	if in.Facts != nil {
		var found *analysis.Statement
		var walk func(ss []*analysis.Statement)
		walk = func(ss []*analysis.Statement) {
			for _, st := range ss {
				if st.Range.Start.Line >= in.crashLine() {
					return
				}
				if st.Kind == analysis.StmtAssign && st.Value != nil && len(st.Targets) == 1 && st.Targets[0].Kind == analysis.ExprName && st.Targets[0].Name == name {
					found = st
				}
				if st.Kind != analysis.StmtDef && st.Kind != analysis.StmtClass {
					walk(st.Body)
				}
			}
		}
		walk(in.Facts.Statements)
		if found != nil {
			return buildSite{cell: "", index: -1, text: in.Text, name: name, value: found.Value, stmt: found}, true
		}
	}
	b, _, ok := in.binding(name, -1, in.crashLine())
	return b, ok && b.stmt.Targets[0].Kind == analysis.ExprName
}

// callOf returns the call on the crash line whose callee is exactly e.
func callOf(in *Input, e *analysis.Expr) *analysis.Expr {
	for _, c := range in.exprsOnLine(in.crashLine(), func(c *analysis.Expr) bool { return c.Kind == analysis.ExprCall }) {
		if c.Value != nil && c.Value.Range == e.Range {
			return c
		}
	}
	return nil
}

// typeName is the short name of the type the facts give v ("list", "ndarray", "generator",
// "DataFrame", "Tensor", "module").
func typeName(v facts.Value) string {
	switch v.Kind {
	case facts.KindList, facts.KindTuple, facts.KindNDArray, facts.KindPyModule:
		return v.Kind
	case facts.KindDataFrame:
		return "DataFrame"
	case facts.KindSeries:
		return "Series"
	case facts.KindTensor:
		return "Tensor"
	}
	t := v.Type
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return t
}

// typeWords returns the words of msg that name types or libraries ('list', 'numpy.ndarray'
// gives numpy and ndarray), split at everything that is not a letter, digit or underscore.
func typeWords(msg string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		out[w] = true
	}
	return out
}

// A frame's values passed where the library needs the frame itself: a ColumnTransformer
// that selects columns by name handed X_train = df[cols].values ("Specifying the columns
// using strings is only supported for pandas DataFrames"). On the crash line, or where the
// operand was bound (a binding site of the crash), the .values or .to_numpy() goes: the
// same rows and columns, with their names.

func init() {
	register(family{name: "keep-frame", gen: keepFrameGen})
}

func keepFrameGen(in *Input) []Candidate {
	msg := in.message()
	if in.exception() != "ValueError" || !strings.Contains(msg, "DataFrame") || !strings.Contains(msg, "only supported") && !strings.Contains(msg, "column names") {
		return nil
	}
	var out []Candidate
	for _, e := range in.exprsOnLine(in.crashLine(), func(e *analysis.Expr) bool { return numpyValues(e) }) {
		obj := e.Value
		if e.Kind == analysis.ExprCall {
			obj = e.Value.Value
		}
		if obj == nil {
			continue
		}
		if r, ok := in.value(obj.Root()); !ok || r.Kind != facts.KindDataFrame {
			continue
		}
		out = append(out, Candidate{
			Fix:   finding.Fix{Title: fmt.Sprintf("Keep %s a DataFrame (no %s)", obj.Text, strings.TrimPrefix(e.Text, obj.Text)), Edits: []finding.Edit{replaceAt(e.Range, obj.Text)}},
			Keeps: fmt.Sprintf("the same rows and columns as %s, with the column names the library selects by", e.Text),
		})
	}
	return out
}
