package eval

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// system is one row of the report: a premortem setting or a CRANE-LLM reference.
type system struct {
	Name   string
	Scored []scored
}

// craneSystems are CRANE-LLM's published per-instance outcomes on the same cases.
func craneSystems(cases []*evalCase) []system {
	var out []system
	for _, rt := range []bool{true, false} {
		for _, m := range craneModels {
			suffix := " -RT"
			if rt {
				suffix = " +RT"
			}
			if ss := craneOutcomes(cases, m, rt); len(ss) > 0 {
				out = append(out, system{Name: "CRANE " + m + suffix, Scored: ss})
			}
		}
	}
	return out
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64)
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// writeMarkdown prints the overall table, then per library and per root cause.
func writeMarkdown(w io.Writer, title string, systems []system) {
	fmt.Fprintf(w, "## %s\n\n", title)
	fmt.Fprintln(w, "| system | n | in kernel | unknown | det acc | P | R | F1 | det+diag acc | P | R | F1 | prompt tokens mean | median |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range systems {
		m := computeMetrics(s.Scored)
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			s.Name, m.N, m.KernelN, m.UnknownN, pct(m.Accuracy), pct(m.P), pct(m.R), pct(m.F1),
			pct(m.DiagAccuracy), pct(m.DiagP), pct(m.DiagR), pct(m.DiagF1), num(m.TokensMean), num(m.TokensMed))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "n counts instances (a buggy and a fixed one per case). det+diag: a buggy instance counts only when the crash is predicted with the recorded exception on the recorded crash line; CRANE-LLM rows use the human labels in desc.csv (C correct; PC/RW detected but misdiagnosed; W wrong).")
	for _, by := range []struct {
		title string
		key   func(scored) string
	}{
		{"per library", func(s scored) string { return s.Group }},
		{"per root cause", func(s scored) string { return s.RootCause }},
	} {
		fmt.Fprintf(w, "\n### %s (det acc / det+diag acc, %%)\n\n", by.title)
		fmt.Fprint(w, "| group | n |")
		for _, s := range systems {
			fmt.Fprintf(w, " %s |", s.Name)
		}
		fmt.Fprintln(w)
		fmt.Fprint(w, "|---|---|")
		for range systems {
			fmt.Fprint(w, "---|")
		}
		fmt.Fprintln(w)
		keys := map[string]bool{}
		var order []string
		for _, s := range systems {
			ks, _ := groupBy(s.Scored, by.key)
			for _, k := range ks {
				if !keys[k] {
					keys[k] = true
					order = append(order, k)
				}
			}
		}
		sort.Strings(order)
		for _, k := range order {
			n := 0
			var cells []string
			for _, s := range systems {
				_, g := groupBy(s.Scored, by.key)
				m := computeMetrics(g[k])
				n = max(n, m.N)
				if m.N == 0 {
					cells = append(cells, "–")
					continue
				}
				cells = append(cells, pct(m.Accuracy)+" / "+pct(m.DiagAccuracy))
			}
			fmt.Fprintf(w, "| %s | %d | %s |\n", k, n, strings.Join(cells, " | "))
		}
	}
	fmt.Fprintln(w)
}

var csvHeader = []string{"scope", "key", "system", "n", "tp", "fp", "tn", "fn", "accuracy", "precision", "recall", "f1",
	"diag_tp", "diag_fn", "diag_accuracy", "diag_precision", "diag_recall", "diag_f1",
	"prompt_tokens_mean", "prompt_tokens_median", "in_kernel", "unknown"}

// writeCSV writes one row per system and scope (overall, each library, each root cause).
func writeCSV(w io.Writer, systems []system) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	row := func(scope, key, name string, m metrics) []string {
		return []string{scope, key, name, strconv.Itoa(m.N), strconv.Itoa(m.TP), strconv.Itoa(m.FP), strconv.Itoa(m.TN), strconv.Itoa(m.FN),
			f(m.Accuracy), f(m.P), f(m.R), f(m.F1), strconv.Itoa(m.DiagTP), strconv.Itoa(m.DiagFN),
			f(m.DiagAccuracy), f(m.DiagP), f(m.DiagR), f(m.DiagF1), f(m.TokensMean), f(m.TokensMed),
			strconv.Itoa(m.KernelN), strconv.Itoa(m.UnknownN)}
	}
	for _, s := range systems {
		if err := cw.Write(row("overall", "", s.Name, computeMetrics(s.Scored))); err != nil {
			return err
		}
		for _, by := range []struct {
			scope string
			key   func(scored) string
		}{{"library", func(s scored) string { return s.Group }}, {"root_cause", func(s scored) string { return s.RootCause }}} {
			keys, g := groupBy(s.Scored, by.key)
			for _, k := range keys {
				if err := cw.Write(row(by.scope, k, s.Name, computeMetrics(g[k]))); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeInstances writes one row per instance and setting.
func writeInstances(w io.Writer, systems []system) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"system", "case", "version", "crash_predicted", "unknown", "exception", "line", "source",
		"detect_ok", "diag_ok", "line_unverified", "prompt_tokens", "in_kernel", "note"})
	for _, s := range systems {
		for _, x := range s.Scored {
			_ = cw.Write([]string{s.Name, x.Case, x.Version, strconv.FormatBool(x.Crash), strconv.FormatBool(x.Unknown),
				x.Exception, strconv.Itoa(x.Line), x.Source, strconv.FormatBool(x.DetectOK), strconv.FormatBool(x.DiagOK),
				strconv.FormatBool(x.LineUnverified), strconv.Itoa(x.PromptTokens), strconv.FormatBool(x.Kernel), x.Note})
		}
	}
	cw.Flush()
	return cw.Error()
}
