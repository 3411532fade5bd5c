package lsp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/facts"
)

// This file formats runtime facts for hovers and inlay hints. It only formats: what to
// show is decided in hover.go.

// maxHoverColumns bounds the column table of a DataFrame hover.
const maxHoverColumns = 12

// formatValue renders one value's runtime facts as a compact Markdown table, "as of run N".
func formatValue(v facts.Value, execCount int) string {
	var b strings.Builder
	if !v.Exists {
		fmt.Fprintf(&b, "`%s` is **not defined** in the kernel", v.Name)
		if execCount > 0 {
			fmt.Fprintf(&b, " (as of run %d)", execCount)
		}
		b.WriteString(".\n")
		if v.Error != "" {
			fmt.Fprintf(&b, "\n%s\n", v.Error)
		}
		return b.String()
	}
	rows := [][2]string{}
	add := func(k, val string) {
		if val != "" {
			rows = append(rows, [2]string{k, val})
		}
	}
	add("type", "`"+shortType(v.Type)+"`")
	if len(v.Shape) > 0 {
		add("shape", facts.FormatShape(v.Shape))
	} else if v.Len != nil {
		add("len", strconv.Itoa(*v.Len))
	}
	add("dtype", code(v.Dtype))
	add("device", code(v.Device))
	if v.RequiresGrad != nil && *v.RequiresGrad {
		add("requires_grad", "true")
	}
	if v.Contiguous != nil && !*v.Contiguous {
		add("contiguous", "false")
	}
	if e := v.Estimator; e != nil {
		fitted := "not fitted"
		if e.Fitted {
			fitted = "fitted"
		}
		add("estimator", fmt.Sprintf("`%s`, %s", e.Class, fitted))
		if e.NFeaturesIn != nil {
			add("n_features_in_", strconv.Itoa(*e.NFeaturesIn))
		}
		if len(e.FeatureNamesIn) > 0 {
			add("feature_names_in_", truncList(e.FeatureNamesIn, 8))
		}
		if len(e.Methods) > 0 {
			add("methods", strings.Join(e.Methods, ", "))
		}
	}
	if m := v.Module; m != nil {
		add("module", fmt.Sprintf("`%s`, %d parameters", m.Class, m.Parameters))
		if m.Dtype != "" {
			add("weights dtype", code(m.Dtype))
		}
		if m.First != nil && m.First.InFeatures != nil {
			add("first layer in_features", strconv.Itoa(*m.First.InFeatures))
		}
		if m.First != nil && m.First.InChannels != nil {
			add("first layer in_channels", strconv.Itoa(*m.First.InChannels))
		}
		if m.First != nil && m.First.Device != "" {
			add("device", code(m.First.Device))
		}
	}
	if l := v.Loader; l != nil {
		if l.BatchSize != nil {
			add("batch_size", strconv.Itoa(*l.BatchSize))
		}
		if len(l.SampleShapes) > 0 {
			var parts []string
			for _, s := range l.SampleShapes {
				parts = append(parts, facts.FormatShape(s))
			}
			add("sample shapes", strings.Join(parts, ", "))
		}
	}
	if v.Min != nil && v.Max != nil {
		add("range", fmt.Sprintf("%s … %s", num(*v.Min), num(*v.Max)))
	}
	if v.HasNaN != nil && *v.HasNaN {
		add("NaN", "yes")
	}
	if v.HasInf != nil && *v.HasInf {
		add("inf", "yes")
	}
	if v.Signature != "" {
		add("signature", code(v.Signature))
	}
	if len(v.Columns) == 0 && v.Repr != "" && len(rows) <= 2 {
		add("value", code(oneLine(v.Repr, 80)))
	}

	b.WriteString("| | |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], escapeCell(r[1]))
	}
	if len(v.Columns) > 0 {
		b.WriteString("\n| column | dtype | nulls |\n|---|---|---|\n")
		for i, c := range v.Columns {
			if i == maxHoverColumns {
				fmt.Fprintf(&b, "| … %d more | | |\n", len(v.Columns)-maxHoverColumns)
				break
			}
			nulls := ""
			if c.Nulls != nil {
				nulls = strconv.Itoa(*c.Nulls)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", escapeCell(fmt.Sprint(c.Name)), code(c.Dtype), nulls)
		}
	}
	if execCount > 0 {
		fmt.Fprintf(&b, "\n*as of run %d*", execCount)
		if v.Sampled {
			b.WriteString(" *(values from a sample)*")
		}
		b.WriteString("\n")
	}
	if v.Error != "" {
		fmt.Fprintf(&b, "\n*partial: %s*\n", v.Error)
	}
	return b.String()
}

// compactString renders a traced value for an inlay hint: "(712, 8) float64".
func compactString(c facts.Compact) string {
	var parts []string
	switch {
	case len(c.Shape) > 0:
		parts = append(parts, facts.FormatShape(c.Shape))
		if c.Dtype != "" {
			parts = append(parts, c.Dtype)
		}
	case c.Repr != "":
		parts = append(parts, oneLine(c.Repr, 30))
	case c.Len != nil:
		parts = append(parts, fmt.Sprintf("%s len %d", shortType(c.Type), *c.Len))
	default:
		parts = append(parts, shortType(c.Type))
	}
	if len(c.Shape) > 0 && c.Dtype == "" && c.Type != "" {
		parts = append(parts, shortType(c.Type))
	}
	return strings.Join(parts, " ")
}

// shortType drops module paths users do not need: pandas.core.frame.DataFrame -> DataFrame.
func shortType(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

func truncList(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(", … (%d)", len(xs))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// escapeCell keeps a value from breaking a Markdown table row.
func escapeCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}
