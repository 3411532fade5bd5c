package llm

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/premortem/premortem/facts"
)

// factsDetail is how much of each value the prompt shows; lower levels cost fewer tokens.
type factsDetail struct {
	sendValues bool
	// maxColumns: a DataFrame with at most this many columns has all of them listed; a
	// wider one lists the columns the code mentions, the first firstColumns, and a count
	// per dtype of the rest.
	maxColumns, firstColumns int
	maxItems                 int // layers, attributes, keys, samples, steps listed per value
	// mentioned are the string constants the code uses in subscripts (df['Age']): the
	// columns to list first, and to report when missing.
	mentioned []string
	// seenColumns maps column lists already rendered to the name they were rendered for.
	seenColumns map[string]string
}

// detailLevels are tried in order when the prompt is over budget.
var detailLevels = []factsDetail{
	{maxColumns: 30, firstColumns: 10, maxItems: 20},
	{maxColumns: 15, firstColumns: 5, maxItems: 10},
	{maxColumns: 8, firstColumns: 3, maxItems: 5},
	{maxColumns: 4, firstColumns: 0, maxItems: 3},
}

// renderFacts writes the facts of the named values in a compact text form, one block per
// name in the given order, each split into CRANE-LLM's categories: structural (shape,
// sizes), type (type, dtype, columns, device, module layers, estimator state) and value
// (NaN/inf, unique counts, and — only when d.sendValues — ranges, samples, reprs, keys,
// index labels, non-numeric samples, class labels). It reports whether any value fact was
// withheld.
//
// Precisely, with sendValues false these never leave the machine: Value.Min/Max/Sample/Repr/
// Keys, Index.Sample, Column.Min/Max/NonNumericSample, Estimator.Classes, Estimator.Params
// values that are strings (paths, column names in data), Loader sample contents (only shapes
// and dtypes are sent). Counts (has NaN, nulls, n_unique) are aggregate facts and are sent.
func renderFacts(vals map[string]facts.Value, order []string, d factsDetail) (string, bool) {
	var b strings.Builder
	withheld := false
	// Frames split from one another (X_train, X_test) share their columns: list them once.
	d.seenColumns = map[string]string{}
	for _, name := range order {
		v, ok := vals[name]
		if !ok {
			continue
		}
		w := renderValue(&b, name, v, d)
		withheld = withheld || w
	}
	return b.String(), withheld
}

// columnsKey identifies a column list (names and dtypes).
func columnsKey(cols []facts.Column) string {
	var b strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&b, "%v\x00%s\x00", c.Name, c.Dtype)
	}
	return b.String()
}

// factOrder orders fact names: those the target text mentions first (by first mention),
// then the rest alphabetically. The second result is how many are mentioned.
func factOrder(vals map[string]facts.Value, target string) ([]string, int) {
	type entry struct {
		name string
		pos  int
	}
	var in, out []entry
	for name := range vals {
		if p := mentionPos(target, name); p >= 0 {
			in = append(in, entry{name, p})
		} else {
			out = append(out, entry{name, 0})
		}
	}
	sort.Slice(in, func(i, j int) bool {
		if in[i].pos != in[j].pos {
			return in[i].pos < in[j].pos
		}
		return in[i].name < in[j].name
	})
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	names := make([]string, 0, len(vals))
	for _, e := range in {
		names = append(names, e.name)
	}
	for _, e := range out {
		names = append(names, e.name)
	}
	return names, len(in)
}

// mentionPos finds name in text as a whole word (not part of a longer identifier).
func mentionPos(text, name string) int {
	from := 0
	for {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(name)
		before := i == 0 || !isIdentPart(rune(text[i-1]))
		after := end >= len(text) || !isIdentPart(rune(text[end]))
		if before && after {
			return i
		}
		from = i + 1
	}
}

func renderValue(b *strings.Builder, name string, v facts.Value, d factsDetail) (withheld bool) {
	if !v.Exists {
		fmt.Fprintf(b, "%s: NOT DEFINED in the kernel", name)
		if v.Error != "" {
			fmt.Fprintf(b, " (%s)", oneLine(v.Error, 120))
		}
		b.WriteByte('\n')
		return false
	}
	typ := shortType(v.Type)
	if typ == "" {
		typ = v.Kind
	}
	fmt.Fprintf(b, "%s: %s\n", name, typ)

	// structural
	var s []string
	if len(v.Shape) > 0 {
		s = append(s, "shape "+facts.FormatShape(v.Shape))
	} else if v.Ndim != nil {
		s = append(s, fmt.Sprintf("ndim %d", *v.Ndim))
	}
	if v.Len != nil && (len(v.Shape) == 0 || v.Shape[0] != *v.Len) {
		s = append(s, fmt.Sprintf("len %d", *v.Len))
	}
	if v.Size != nil && len(v.Shape) == 0 && v.Len == nil {
		s = append(s, fmt.Sprintf("size %d", *v.Size))
	}
	if l := v.Loader; l != nil {
		if l.Len != nil {
			s = append(s, fmt.Sprintf("batches %d", *l.Len))
		}
		if l.BatchSize != nil {
			s = append(s, fmt.Sprintf("batch_size %d", *l.BatchSize))
		}
		if l.DatasetLen != nil {
			s = append(s, fmt.Sprintf("dataset len %d", *l.DatasetLen))
		}
		if len(l.SampleShapes) > 0 {
			var shapes []string
			for i, sh := range l.SampleShapes {
				if i >= d.maxItems {
					break
				}
				shapes = append(shapes, facts.FormatShape(sh))
			}
			s = append(s, "sample shapes "+strings.Join(shapes, " "))
		}
	}
	line(b, "structural", s)

	// type / representation
	var t []string
	if v.Dtype != "" {
		t = append(t, "dtype "+v.Dtype)
	}
	if v.Device != "" {
		t = append(t, "device "+v.Device)
	}
	if v.RequiresGrad != nil {
		t = append(t, fmt.Sprintf("requires_grad %v", *v.RequiresGrad))
	}
	if v.Contiguous != nil && !*v.Contiguous {
		t = append(t, "non-contiguous")
	}
	if v.Layout != "" && v.Layout != "torch.strided" {
		t = append(t, "layout "+v.Layout)
	}
	if len(v.Columns) > 0 {
		if v.Kind == facts.KindSeries && len(v.Columns) == 1 {
			t = append(t, "name "+pyRepr(v.Columns[0].Name))
		} else if first, ok := d.seenColumns[columnsKey(v.Columns)]; ok && len(v.Columns) > 3 {
			t = append(t, fmt.Sprintf("columns (%d) the same as %s", len(v.Columns), first))
		} else {
			t = append(t, columnsText(v.Columns, d))
			if d.seenColumns != nil {
				d.seenColumns[columnsKey(v.Columns)] = name
			}
		}
	}
	if ix := v.Index; ix != nil {
		s := "index " + shortType(ix.Type)
		if ix.Dtype != "" {
			s += " " + ix.Dtype
		}
		if ix.Name != nil && d.sendValues {
			s += " name " + pyRepr(ix.Name)
		}
		t = append(t, s)
	}
	if m := v.Module; m != nil {
		t = append(t, moduleText(m, d))
	}
	if e := v.Estimator; e != nil {
		t = append(t, estimatorText(e, d, &withheld))
	}
	if l := v.Loader; l != nil {
		if len(l.SampleDtypes) > 0 {
			t = append(t, "sample dtypes "+strings.Join(limit(l.SampleDtypes, d.maxItems), " "))
		}
		if len(l.SampleTypes) > 0 {
			t = append(t, "sample types "+strings.Join(limit(l.SampleTypes, d.maxItems), " "))
		}
	}
	if len(v.ElementTypes) > 0 {
		t = append(t, "element types "+strings.Join(limit(v.ElementTypes, d.maxItems), ", "))
	}
	if v.Signature != "" {
		t = append(t, "signature "+oneLine(v.Signature, 160))
	} else if v.Callable != nil && *v.Callable {
		t = append(t, "callable")
	}
	// Attribute lists of modules, classes and functions are long and the model knows the
	// libraries; a missing attribute shows up as its own fact (Exists false). Objects of
	// the user's own classes keep theirs.
	if len(v.Attributes) > 0 && (v.Kind == facts.KindOther || v.Kind == "") {
		s := "attributes " + strings.Join(limit(v.Attributes, 3*d.maxItems), ", ")
		if len(v.Attributes) > 3*d.maxItems {
			s += fmt.Sprintf(", ... (%d in all)", len(v.Attributes))
		} else if v.AttributesComplete {
			s += " (complete)"
		}
		t = append(t, s)
	}
	if v.Error != "" {
		t = append(t, "inspection note: "+oneLine(v.Error, 120))
	}
	line(b, "type", t)

	// value semantics
	var val []string
	if v.HasNaN != nil {
		val = append(val, "has NaN "+yesNo(*v.HasNaN))
	}
	if v.HasInf != nil && *v.HasInf {
		val = append(val, "has inf yes")
	}
	if v.NUnique != nil {
		val = append(val, fmt.Sprintf("%d unique", *v.NUnique))
	}
	if d.sendValues {
		if v.Min != nil || v.Max != nil {
			val = append(val, "range "+rangeText(v.Min, v.Max))
		}
		if len(v.Keys) > 0 {
			s := "keys " + reprList(v.Keys, d.maxItems)
			if v.KeysComplete && len(v.Keys) <= d.maxItems {
				s += " (all keys)"
			}
			val = append(val, s)
		}
		if len(v.Sample) > 0 {
			val = append(val, "sample "+reprList(v.Sample, d.maxItems))
		}
		if ix := v.Index; ix != nil && len(ix.Sample) > 0 {
			s := "index labels " + reprList(ix.Sample, d.maxItems)
			if ix.Complete && len(ix.Sample) <= d.maxItems {
				s += " (all)"
			}
			val = append(val, s)
		}
		if v.Repr != "" {
			val = append(val, "repr "+oneLine(v.Repr, 200))
		}
		if cv := columnValues(v.Columns, d); cv != "" {
			val = append(val, cv)
		}
	} else {
		withheld = withheld || v.Min != nil || v.Max != nil || len(v.Keys) > 0 || len(v.Sample) > 0 || v.Repr != "" ||
			(v.Index != nil && (len(v.Index.Sample) > 0 || v.Index.Name != nil))
		for _, c := range v.Columns {
			withheld = withheld || c.Min != nil || c.Max != nil || len(c.NonNumericSample) > 0
		}
		if len(v.Keys) > 0 && v.KeysComplete {
			val = append(val, fmt.Sprintf("%d keys (values withheld)", len(v.Keys)))
		}
	}
	if v.Sampled && len(val) > 0 {
		val = append(val, "(computed on a sample)")
	}
	line(b, "value", val)
	return withheld
}

func line(b *strings.Builder, category string, parts []string) {
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s: %s\n", category, strings.Join(parts, "; "))
}

func columnsText(cols []facts.Column, d factsDetail) string {
	one := func(c facts.Column) string {
		s := pyRepr(c.Name) + ":" + c.Dtype
		if c.Nulls != nil && *c.Nulls > 0 {
			s += fmt.Sprintf(" (%d nulls)", *c.Nulls)
		}
		if len(c.ElementTypes) > 1 || (len(c.ElementTypes) == 1 && c.Dtype == "object" && c.ElementTypes[0] != "str") {
			s += " [" + strings.Join(limit(c.ElementTypes, 4), "|") + "]"
		}
		return s
	}
	var parts []string
	if len(cols) <= d.maxColumns {
		for _, c := range cols {
			parts = append(parts, one(c))
		}
		return fmt.Sprintf("columns (%d) %s", len(cols), strings.Join(parts, ", "))
	}
	mentioned := map[string]bool{}
	for _, m := range d.mentioned {
		mentioned[m] = true
	}
	present := map[string]bool{}
	rest := map[string]int{}
	for i, c := range cols {
		name, _ := c.Name.(string)
		present[name] = true
		if i < d.firstColumns || mentioned[name] {
			parts = append(parts, one(c))
		} else {
			rest[c.Dtype]++
		}
	}
	if len(rest) > 0 {
		dtypes := make([]string, 0, len(rest))
		for dt := range rest {
			dtypes = append(dtypes, dt)
		}
		sort.Slice(dtypes, func(i, j int) bool {
			return rest[dtypes[i]] > rest[dtypes[j]] || (rest[dtypes[i]] == rest[dtypes[j]] && dtypes[i] < dtypes[j])
		})
		var counts []string
		n := 0
		for _, dt := range dtypes {
			counts = append(counts, fmt.Sprintf("%s %d", dt, rest[dt]))
			n += rest[dt]
		}
		parts = append(parts, fmt.Sprintf("... %d more (%s)", n, strings.Join(counts, ", ")))
	}
	s := fmt.Sprintf("columns (%d) %s", len(cols), strings.Join(parts, ", "))
	var absent []string
	for _, m := range d.mentioned {
		if !present[m] {
			absent = append(absent, pyRepr(m))
		}
	}
	if len(absent) > 0 {
		s += "; not columns: " + strings.Join(absent, ", ")
	}
	return s
}

// subscriptStrings returns the string constants used in subscripts of text (df['a'],
// df[['a', 'b']], df.loc[:, 'a']), in order, without duplicates.
func subscriptStrings(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range subscriptRe.FindAllStringSubmatch(text, -1) {
		for _, q := range quotedRe.FindAllStringSubmatch(m[1], -1) {
			s := q[1] + q[2]
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

var (
	subscriptRe = regexp.MustCompile(`[\w\])]\s*\[([^\[\]]*(?:\[[^\[\]]*\])?[^\[\]]*)\]`)
	quotedRe    = regexp.MustCompile(`'([^'\n]*)'|"([^"\n]*)"`)
)

// columnValues lists per-column value facts (only called with values allowed).
func columnValues(cols []facts.Column, d factsDetail) string {
	var parts []string
	for i, c := range cols {
		if i >= d.maxColumns {
			break
		}
		var p []string
		if c.Min != nil || c.Max != nil {
			p = append(p, rangeText(c.Min, c.Max))
		}
		if c.NUnique != nil {
			p = append(p, fmt.Sprintf("%d unique", *c.NUnique))
		}
		if len(c.NonNumericSample) > 0 {
			p = append(p, "non-numeric e.g. "+reprStrings(c.NonNumericSample, min(d.maxItems, 3)))
		}
		if len(p) > 0 {
			parts = append(parts, pyRepr(c.Name)+" "+strings.Join(p, " "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "columns " + strings.Join(parts, ", ")
}

func moduleText(m *facts.Module, d factsDetail) string {
	s := fmt.Sprintf("module %s, %d parameters", m.Class, m.Parameters)
	if m.Training != nil {
		if *m.Training {
			s += ", train mode"
		} else {
			s += ", eval mode"
		}
	}
	if m.Dtype != "" {
		s += ", dtype " + m.Dtype
	}
	if len(m.Layers) > 0 {
		var ls []string
		for i, l := range m.Layers {
			if i >= d.maxItems {
				ls = append(ls, fmt.Sprintf("... %d more", len(m.Layers)-i))
				break
			}
			ls = append(ls, layerText(l))
		}
		s += "; layers " + strings.Join(ls, ", ")
		if len(m.Layers) > d.maxItems && m.Last != nil {
			s += "; last " + layerText(*m.Last)
		}
	} else {
		if m.First != nil {
			s += "; first layer " + layerText(*m.First)
		}
		if m.Last != nil {
			s += "; last layer " + layerText(*m.Last)
		}
	}
	return s
}

func layerText(l facts.Layer) string {
	s := l.Name + "=" + l.Class
	var p []string
	pair := func(label string, a, b *int) {
		if a != nil || b != nil {
			p = append(p, fmt.Sprintf("%s %s->%s", label, intText(a), intText(b)))
		}
	}
	pair("features", l.InFeatures, l.OutFeatures)
	pair("channels", l.InChannels, l.OutChannels)
	pair("embedding", l.NumEmbedding, l.EmbeddingDim)
	if l.Device != "" {
		p = append(p, l.Device)
	}
	if l.Dtype != "" {
		p = append(p, l.Dtype)
	}
	if len(p) > 0 {
		s += "(" + strings.Join(p, ", ") + ")"
	}
	return s
}

func estimatorText(e *facts.Estimator, d factsDetail, withheld *bool) string {
	s := "estimator " + e.Class
	if e.Fitted {
		s += " fitted"
	} else {
		s += " NOT fitted"
	}
	if e.NFeaturesIn != nil {
		s += fmt.Sprintf(", n_features_in %d", *e.NFeaturesIn)
	}
	if len(e.FeatureNamesIn) > 0 {
		s += ", feature names " + reprStrings(e.FeatureNamesIn, 2*d.maxColumns)
	}
	if len(e.Classes) > 0 {
		if d.sendValues {
			s += ", classes " + reprList(e.Classes, d.maxItems)
		} else {
			s += fmt.Sprintf(", %d classes", len(e.Classes))
			*withheld = true
		}
	}
	if len(e.Methods) > 0 {
		s += ", methods " + strings.Join(limit(e.Methods, d.maxItems), " ")
	}
	if e.AllowsNaN != nil {
		s += fmt.Sprintf(", accepts NaN %s", yesNo(*e.AllowsNaN))
	}
	if len(e.Params) > 0 {
		keys := make([]string, 0, len(e.Params))
		for k := range e.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ps []string
		for _, k := range keys {
			v := e.Params[k]
			if _, isStr := v.(string); isStr && !d.sendValues {
				*withheld = true
				continue
			}
			ps = append(ps, k+"="+pyRepr(v))
			if len(ps) >= d.maxItems {
				break
			}
		}
		if len(ps) > 0 {
			s += ", params " + strings.Join(ps, " ")
		}
	}
	for i, st := range e.Steps {
		if i >= d.maxItems {
			break
		}
		inner := st.Estimator
		s += "; step " + st.Name + ": " + estimatorText(&inner, d, withheld)
	}
	return s
}

func rangeText(lo, hi *float64) string {
	return "[" + floatText(lo) + ", " + floatText(hi) + "]"
}

func floatText(f *float64) string {
	if f == nil {
		return "?"
	}
	if math.Trunc(*f) == *f && math.Abs(*f) < 1e15 {
		return strconv.FormatFloat(*f, 'f', -1, 64)
	}
	return strconv.FormatFloat(*f, 'g', 4, 64)
}

func intText(p *int) string {
	if p == nil {
		return "?"
	}
	return strconv.Itoa(*p)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// shortType keeps the top package and the class: "pandas.core.frame.DataFrame" ->
// "pandas.DataFrame", "builtins.int" -> "int".
func shortType(t string) string {
	t = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(t, "<class '"), "'>"), "builtins.")
	parts := strings.Split(t, ".")
	if len(parts) <= 2 {
		return t
	}
	return parts[0] + "." + parts[len(parts)-1]
}

// pyRepr renders a JSON-decoded value the way Python would print it.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return "'" + strings.ReplaceAll(oneLine(x, 60), "'", "\\'") + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return floatText(&x)
	case int:
		return strconv.Itoa(x)
	case []any:
		return reprList(x, 5)
	default:
		return oneLine(fmt.Sprint(x), 60)
	}
}

func reprList(xs []any, n int) string {
	var parts []string
	for i, x := range xs {
		if i >= n {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, pyRepr(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func reprStrings(xs []string, n int) string {
	as := make([]any, len(xs))
	for i, x := range xs {
		as[i] = x
	}
	return reprList(as, n)
}

func limit(xs []string, n int) []string {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
