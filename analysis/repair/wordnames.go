package repair

import (
	"sort"
	"strings"
	"unicode"

	"github.com/premortem/premortem/facts"
)

// An undefined name that is an existing name's words in another order: df_train for
// train_df, trainDF for df_train, TestX for X_test. Spelling distance misses a reordering
// (missing.go's nearest ignores only case and separators), so the names are compared as
// sets of words (split at separators and at lower-to-upper case changes). Only a name of
// the kind the cell uses the missing one as is taken when the inspector knows it (a
// DataFrame for `df_train.head()`, an estimator for `.fit(...)`), and only when one or two
// names match: more would be a guess.

func init() {
	register(family{name: "word-order-name", gen: wordNameGen, wanted: wordNameWanted})
}

func wordNameGen(in *Input) []Candidate {
	if in.exception() != "NameError" || in.Facts == nil || in.Inspection == nil {
		return nil
	}
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil || in.Unrun[m[1]] {
		return nil
	}
	wrong := m[1]
	var pool []string
	pool = append(pool, in.Inspection.Namespace...)
	for _, h := range in.History {
		if h.Facts != nil {
			for _, d := range h.Facts.Defs {
				pool = append(pool, d.Name)
			}
		}
	}
	for _, d := range in.Facts.Defs {
		pool = append(pool, d.Name)
	}
	want := usedAsKind(in, wrong)
	var matches []string
	for _, n := range sameWordSet(wrong, pool) {
		if v, ok := in.value(n); ok && want != "" && !kindFits(want, v) {
			continue
		}
		matches = append(matches, n)
	}
	if len(matches) == 0 || len(matches) > 2 {
		return nil
	}
	return renameCandidates(in, wrong, matches, "the same words in another order")
}

// wordNameWanted asks for the facts of the history's names with the missing name's words,
// so their kinds can be checked.
func wordNameWanted(in *Input) []string {
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	var pool []string
	for _, h := range in.History {
		if h.Facts != nil {
			for _, d := range h.Facts.Defs {
				pool = append(pool, d.Name)
			}
		}
	}
	return sameWordSet(m[1], pool)
}

// sameWordSet returns the names of pool, other than wrong, made of the same words as wrong
// in any order and case (at least two words: a one-word name has no order to get wrong).
func sameWordSet(wrong string, pool []string) []string {
	key := wordKey(wrong)
	if key == "" {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range pool {
		if p != wrong && !seen[p] && wordKey(p) == key {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// wordKey is the sorted lower-case words of an identifier joined by "_", "" for fewer than
// two words.
func wordKey(id string) string {
	ws := identWords(id)
	if len(ws) < 2 {
		return ""
	}
	sort.Strings(ws)
	return strings.Join(ws, "_")
}

// identWords splits an identifier at underscores, at a lower-case letter or digit followed
// by an upper-case one (trainDF: train, DF) and before the last capital of a run followed
// by a lower-case letter (HTTPServer: HTTP, Server), lower-casing each word.
func identWords(id string) []string {
	var ws []string
	rs := []rune(id)
	start := 0
	flush := func(end int) {
		if end > start {
			ws = append(ws, strings.ToLower(string(rs[start:end])))
		}
		start = end
	}
	for i, r := range rs {
		switch {
		case r == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush(i)
		case i > start+1 && unicode.IsLower(r) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i-2]):
			flush(i - 1)
		}
	}
	flush(len(rs))
	return ws
}

// frameAttrs and modelAttrs tell from an attribute the cell reads on a name what kind of
// object it must be.
var (
	frameAttrs = map[string]bool{"head": true, "tail": true, "columns": true, "iloc": true, "loc": true, "describe": true, "info": true,
		"groupby": true, "merge": true, "drop": true, "dropna": true, "fillna": true, "isnull": true, "isna": true, "value_counts": true,
		"dtypes": true, "select_dtypes": true, "sort_values": true, "to_csv": true, "rename": true, "astype": true, "corr": true, "apply": true}
	modelAttrs = map[string]bool{"fit": true, "predict": true, "predict_proba": true, "transform": true, "fit_transform": true, "score": true,
		"feature_importances_": true, "coef_": true, "classes_": true}
)

// usedAsKind is the kind the cell's reads of name require: "dataframe" (a frame or a
// series) when it reads a pandas attribute or its words say df, "estimator" when it calls
// a model method, "" when neither tells.
func usedAsKind(in *Input, name string) string {
	for _, a := range in.Facts.Attrs {
		if len(a.Parts) < 2 || a.Parts[0] != name {
			continue
		}
		switch {
		case frameAttrs[a.Parts[1]]:
			return facts.KindDataFrame
		case modelAttrs[a.Parts[1]]:
			return facts.KindEstimator
		}
	}
	for _, w := range identWords(name) {
		if w == "df" {
			return facts.KindDataFrame
		}
	}
	return ""
}

// kindFits reports whether a value of v's kind serves where want is required.
func kindFits(want string, v facts.Value) bool {
	switch want {
	case facts.KindDataFrame:
		return v.Kind == facts.KindDataFrame || v.Kind == facts.KindSeries
	case facts.KindEstimator:
		return v.Kind == facts.KindEstimator || v.Estimator != nil
	}
	return true
}
