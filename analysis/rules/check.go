package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Check runs every rule family over the cell's statements in order and returns the crashes
// the facts make certain (error) or very likely (warning), in source order.
func Check(cellID string, cf *analysis.CellFacts, env *Env) []finding.Finding {
	if cf == nil {
		return nil
	}
	c := newChecker(cellID, cf, env)
	func() {
		// A rule bug must not take the editor down: keep what was found before it.
		defer func() {
			if r := recover(); r != nil && panicHook != nil {
				panicHook(r)
			}
		}()
		c.run()
	}()
	addOverwritten(c)
	for i := range c.findings {
		addDefinerEvidence(c, &c.findings[i])
	}
	sort.SliceStable(c.findings, func(i, j int) bool {
		return c.findings[i].Range.Start.Before(c.findings[j].Range.Start)
	})
	return c.findings
}

// panicHook, when set (by tests), hears about rule panics Check recovered from.
var panicHook func(any)

// report records a finding at r. Inside if/loop bodies a certain crash becomes a warning
// (the line may not run); inside try bodies it is dropped (the exception may be handled).
func (c *checker) report(r finding.Range, sev finding.Severity, code, exc, msg string, conf float64, evidence []string, fixes []finding.Fix) {
	if c.guarded > 0 || c.stmtFailed || c.cellFailed {
		return
	}
	if sev == finding.SeverityError && c.cond == 0 {
		// Python stops at the first exception: later lines never run, and what they would
		// do depends on how the user fixes this one.
		c.stmtFailed = true
		c.cellFailed = true
	}
	if c.cond > 0 {
		if sev == finding.SeverityError {
			sev = finding.SeverityWarning
		}
		conf *= 0.8
	}
	key := fmt.Sprintf("%s@%d:%d", code, r.Start.Line, r.Start.Character)
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	var ev []string
	for _, e := range evidence {
		if e != "" {
			ev = append(ev, e)
		}
	}
	c.findings = append(c.findings, finding.Finding{
		Cell: c.cellID, Source: finding.SourceRules, Severity: sev, Code: code, Exception: exc,
		Message: msg, Range: r, Evidence: ev, Fixes: fixes, Confidence: conf,
	})
}

// replaceFix builds a one-edit fix.
func replaceFix(title string, r finding.Range, text string, preferred bool) finding.Fix {
	return finding.Fix{Title: title, Edits: []finding.Edit{{Range: r, NewText: text}}, Preferred: preferred}
}

// describe renders what is known about v as one evidence line.
func describe(v *val) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(v.name)
	b.WriteString(": ")
	b.WriteString(kindLabel(v))
	if s := shapeText(v); s != "" {
		b.WriteString(" " + s)
	}
	if v.Dtype != "" && v.Kind != facts.KindDataFrame {
		b.WriteString(", dtype " + v.Dtype)
	}
	if v.Device != "" {
		b.WriteString(", on " + v.Device)
	}
	if v.Kind == facts.KindDataFrame && len(v.Columns) > 0 {
		b.WriteString(", columns " + columnList(v.Columns, 12))
		if !v.colsComplete {
			b.WriteString(" (not all known)")
		}
	}
	if v.Kind == facts.KindSeries && len(v.Columns) == 1 && v.Columns[0].Nulls != nil && *v.Columns[0].Nulls > 0 {
		b.WriteString(fmt.Sprintf(", %d missing", *v.Columns[0].Nulls))
	}
	if e := v.Estimator; e != nil {
		if e.Fitted {
			b.WriteString(", fitted")
			if e.NFeaturesIn != nil {
				b.WriteString(fmt.Sprintf(" on %d features", *e.NFeaturesIn))
			}
		} else {
			b.WriteString(", not fitted")
		}
	}
	if m := v.Module; m != nil && len(m.Layers) > 0 {
		b.WriteString(", layers " + layerList(m.Layers, 6))
	}
	if v.HasNaN != nil && *v.HasNaN {
		b.WriteString(", contains NaN")
	}
	if v.Contiguous != nil && !*v.Contiguous {
		b.WriteString(", not contiguous")
	}
	if v.hasConst && v.Kind != facts.KindNone {
		if _, isList := v.konst.([]any); !isList {
			b.WriteString(" " + pyRepr(v.konst))
		}
	}
	if v.origin != "" {
		b.WriteString(" (" + v.origin + ")")
	}
	return b.String()
}

// kindLabel is the user-facing type name.
func kindLabel(v *val) string {
	switch v.Kind {
	case facts.KindDataFrame:
		return "DataFrame"
	case facts.KindSeries:
		return "Series"
	case facts.KindNDArray:
		return "ndarray"
	case facts.KindTensor:
		return "Tensor"
	case facts.KindNone:
		return "None"
	case facts.KindEstimator:
		if v.Estimator != nil && v.Estimator.Class != "" {
			return v.Estimator.Class
		}
		return "estimator"
	case facts.KindModule:
		if v.Module != nil && v.Module.Class != "" {
			return v.Module.Class
		}
		return "nn.Module"
	case "":
		return "value"
	}
	if v.Type != "" {
		return v.Type
	}
	return v.Kind
}

// shapeText renders a shape as 891×11, with ? for unknown dimensions.
func shapeText(v *val) string {
	if v.Shape == nil {
		if v.Len != nil && v.Kind != facts.KindStr {
			return fmt.Sprintf("of length %d", *v.Len)
		}
		return ""
	}
	parts := make([]string, len(v.Shape))
	for i, d := range v.Shape {
		if d < 0 {
			parts[i] = "?"
		} else {
			parts[i] = itoa(d)
		}
	}
	if len(parts) == 0 {
		return "(scalar)"
	}
	if v.Kind == facts.KindTensor || v.Kind == facts.KindNDArray {
		return "shape (" + strings.Join(parts, ", ") + tupleComma(len(parts)) + ")"
	}
	return strings.Join(parts, "×")
}

func tupleComma(n int) string {
	if n == 1 {
		return ","
	}
	return ""
}

// shapeTuple renders a shape as Python prints it: (2, 3), with ? for unknown dimensions.
func shapeTuple(s []int) string { return facts.FormatShape(s) }

// columnList renders up to max column labels.
func columnList(cols []facts.Column, max int) string {
	var names []string
	for i, c := range cols {
		if i == max {
			names = append(names, fmt.Sprintf("… (%d in all)", len(cols)))
			break
		}
		names = append(names, pyRepr(c.Name))
	}
	return strings.Join(names, ", ")
}

// layerList renders leaf layers compactly.
func layerList(ls []facts.Layer, max int) string {
	var out []string
	for i, l := range ls {
		if i == max {
			out = append(out, "…")
			break
		}
		s := l.Class
		switch {
		case l.InFeatures != nil && l.OutFeatures != nil:
			s += fmt.Sprintf("(%d→%d)", *l.InFeatures, *l.OutFeatures)
		case l.InChannels != nil && l.OutChannels != nil:
			s += fmt.Sprintf("(%d→%d ch)", *l.InChannels, *l.OutChannels)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// pyRepr renders a constant as Python would.
func pyRepr(x any) string {
	switch v := x.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "\\'") + "'"
	case float64:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%g", v)
	case int64:
		return fmt.Sprintf("%d", v)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(x)
}

// quoteLike renders s as a string literal using the quote character of literal.
func quoteLike(literal, s string) string {
	q := "'"
	t := strings.TrimLeft(literal, "rRbBuUfF")
	if strings.HasPrefix(t, "\"") {
		q = "\""
	}
	return q + strings.ReplaceAll(s, q, "\\"+q) + q
}
