package judge

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Layers holds what each layer said about one cell, before merging.
type Layers struct {
	Static []finding.Finding
	Rules  []finding.Finding
	// Shadow is the shadow run's outcome (nil: not run) and ShadowFindings its findings.
	Shadow         *facts.ShadowResult
	ShadowFindings []finding.Finding
	LLM            []finding.Finding
	// RuntimeChecked is true when the rules ran against a kernel's facts.
	RuntimeChecked bool
	// NoShadow says why no shadow run was tried ("shadow runs are off", "no kernel"), for
	// the reason of an unknown verdict; "" when one was (or the caller does not say).
	NoShadow string
	Notes    []string
}

// CleanShadow reports whether a shadow run proves the cell runs: it finished without an
// exception and no loop was shortened (a fast dev run that cut a loop proves nothing). A
// run that shortened only the library's work through the structure-keeping table counts
// (facts.DevRun.LibraryOnly), at a lower confidence: a crash after that work is taken as
// the full run's, and so is its absence.
func CleanShadow(r *facts.ShadowResult) bool {
	return r != nil && r.Status == facts.ShadowOK && (r.DevRun == nil || !r.DevRun.Shortened || r.DevRun.Stands()) && !MetaUsed(r)
}

// DevRunLibraryOKConfidence is the confidence of "no crash" from a clean run whose library
// work was shortened: the structure later lines read is the full run's, their values are
// not (a score, an argmax), so it is below a whole run's.
const DevRunLibraryOKConfidence = 0.85

// DevRunLoopsOKConfidence is the confidence of "no crash" from a clean run whose loops were
// cut but stand for the full run (facts.DevRun.LoopsStand): the first iterations and the
// last one ran, every line of the loops ran, but the skipped iterations' values (a row, a
// batch) were not seen, so it is below the library's.
const DevRunLoopsOKConfidence = 0.75

// Merge combines the layers into one verdict. A crash confirmed by the shadow run outranks
// every prediction; a rule finding on the same line is folded into it (the rule knows the
// fix, the shadow run knows it is real). A shadow run that finished cleanly disproves the
// predictions of the other layers. Otherwise every layer's findings stand, strongest first.
func Merge(cellID string, index int, l Layers) *CellVerdict {
	v := &CellVerdict{Index: index, CellID: cellID, Notes: append([]string(nil), l.Notes...)}
	switch {
	case l.Shadow != nil && l.Shadow.Status == facts.ShadowError:
		v.Findings = mergeConfirmed(l)
	case CleanShadow(l.Shadow):
		// The cell ran to its end in a copy of the kernel: predictions of a crash were wrong.
		// Hazards that are not crashes (stale definitions) stay, as warnings.
		dismissed := map[finding.Source]int{}
		for _, f := range concat(l.Static, l.Rules, l.LLM) {
			if predictsCrash(f) {
				dismissed[f.Source]++
				continue
			}
			v.Findings = append(v.Findings, f)
		}
		if n := dismissed[finding.SourceStatic] + dismissed[finding.SourceRules] + dismissed[finding.SourceLLM]; n > 0 {
			var by []string
			for _, s := range []finding.Source{finding.SourceRules, finding.SourceStatic, finding.SourceLLM} {
				if dismissed[s] > 0 {
					by = append(by, fmt.Sprintf("%d %s", dismissed[s], s))
				}
			}
			v.Notes = append(v.Notes, fmt.Sprintf("the shadow run finished without an exception: %s dismissed (%s)",
				plural(n, "crash prediction"), strings.Join(by, ", ")))
		}
	default:
		v.Findings = concat(l.Static, l.Rules, l.ShadowFindings, l.LLM)
	}
	sortFindings(v.Findings)
	v.Findings = foldSameCrash(v.Findings)
	v.Verdict, v.Confidence = verdictOf(v.Findings, l)
	if v.Verdict == VerdictUnknown {
		v.Reason = UnknownReason(l)
	}
	return v
}

// foldSameCrash keeps one finding per predicted crash: when several layers predict the same
// exception on the same line, the strongest (first in sorted order) stays and takes the
// others' evidence, fixes and explanation, so the user reads the crash once.
func foldSameCrash(fs []finding.Finding) []finding.Finding {
	type key struct {
		line int
		exc  string
	}
	kept := map[key]int{}
	out := fs[:0:0]
	for _, f := range fs {
		if !predictsCrash(f) {
			out = append(out, f)
			continue
		}
		exc := f.Exception
		if i := strings.LastIndexByte(exc, '.'); i >= 0 {
			exc = exc[i+1:]
		}
		k := key{f.Range.Start.Line, strings.ToLower(exc)}
		i, ok := kept[k]
		if !ok {
			kept[k] = len(out)
			out = append(out, f)
			continue
		}
		m := &out[i]
		m.Evidence = appendNew(append([]string(nil), m.Evidence...), f.Evidence...)
		if len(m.Fixes) == 0 && len(f.Fixes) > 0 {
			m.Fixes = append([]finding.Fix(nil), f.Fixes...)
		}
		if m.Explanation == "" {
			m.Explanation = f.Explanation
		}
	}
	return out
}

// mergeConfirmed folds the other layers into the shadow run's crash: the first rule or
// static finding at the crash line that predicts the same exception becomes the confirmed
// finding (keeping its precise range, message and fixes, taking the real exception name
// and the places the run points at);
// further predictions of that same crash only lend their evidence and fixes, so the user
// sees the crash once. Findings elsewhere in the cell stay as they are, except LLM guesses
// that the real run contradicts.
func mergeConfirmed(l Layers) []finding.Finding {
	ci := -1
	for i := range l.ShadowFindings {
		if l.ShadowFindings[i].Severity == finding.SeverityError {
			ci = i
			break
		}
	}
	if ci < 0 {
		return concat(l.Static, l.Rules, l.ShadowFindings, l.LLM)
	}
	confirmed := l.ShadowFindings[ci]
	var out []finding.Finding
	folded := -1
	for _, f := range concat(l.Rules, l.Static) {
		if !sameCrash(f, confirmed) {
			out = append(out, f)
			continue
		}
		if folded < 0 {
			m := f
			m.Source = finding.SourceShadow
			m.Severity = finding.SeverityError
			m.Confidence = 1
			if confirmed.Exception != "" {
				m.Exception = confirmed.Exception
			}
			m.Evidence = appendNew(append([]string(nil), confirmed.Evidence...), f.Evidence...)
			m.Fixes = append([]finding.Fix(nil), f.Fixes...)
			m.Related = append(append([]finding.Related(nil), confirmed.Related...), f.Related...)
			out = append(out, m)
			folded = len(out) - 1
			continue
		}
		out[folded].Evidence = appendNew(out[folded].Evidence, f.Evidence...)
		if len(out[folded].Fixes) == 0 {
			out[folded].Fixes = append(out[folded].Fixes, f.Fixes...)
		}
	}
	if folded < 0 {
		out = append(out, confirmed)
	}
	for i, f := range l.ShadowFindings {
		if i != ci && f.Severity != finding.SeverityError {
			out = append(out, f)
		}
	}
	for _, f := range l.LLM {
		// The LLM's explanation of the real crash is worth keeping; its other guesses are not.
		if f.Range.Start.Line == confirmed.Range.Start.Line {
			f.Severity = finding.SeverityInfo
			out = append(out, f)
		}
	}
	return out
}

// appendNew appends the strings of add that dst does not hold yet.
func appendNew(dst []string, add ...string) []string {
	have := make(map[string]bool, len(dst))
	for _, s := range dst {
		have[s] = true
	}
	for _, s := range add {
		if !have[s] {
			have[s] = true
			dst = append(dst, s)
		}
	}
	return dst
}

// sameCrash reports whether a predicted finding describes the crash a shadow run found.
func sameCrash(pred, real finding.Finding) bool {
	if pred.Range.Start.Line != real.Range.Start.Line || !predictsCrash(pred) {
		return false
	}
	return sameExceptionName(pred.Exception, real.Exception)
}

// Awaits reports whether a finding should wait for a shadow run of the same state that is
// coming before an editor shows it: a crash the static layer or the rules predict that is
// not certain by construction (finding.Finding.Certain), which a clean run would dismiss
// (Merge) a moment after the user saw it.
func Awaits(f finding.Finding) bool {
	return predictsCrash(f) && !f.Certain && (f.Source == finding.SourceStatic || f.Source == finding.SourceRules)
}

// predictsCrash reports whether a finding says the cell will raise.
func predictsCrash(f finding.Finding) bool {
	if f.Exception == "" {
		return false
	}
	return f.Severity == finding.SeverityError || f.Severity == finding.SeverityWarning
}

// verdictOf says crash when a finding predicts one, ok only when a clean, unshortened
// shadow run backs it, and unknown otherwise: no layer that found nothing has proven that
// nothing is there.
func verdictOf(fs []finding.Finding, l Layers) (string, float64) {
	best := 0.0
	crash := false
	for _, f := range fs {
		if !predictsCrash(f) {
			continue
		}
		c := f.Confidence
		if c == 0 {
			c = map[finding.Severity]float64{finding.SeverityError: 0.9, finding.SeverityWarning: 0.6}[f.Severity]
		}
		if f.Severity == finding.SeverityError || c >= 0.5 {
			crash = true
			if c > best {
				best = c
			}
		}
	}
	switch {
	case crash:
		return VerdictCrash, best
	case CleanShadow(l.Shadow) && l.Shadow.DevRun != nil && l.Shadow.DevRun.Shortened && !l.Shadow.DevRun.LibraryOnly():
		return VerdictOK, DevRunLoopsOKConfidence
	case CleanShadow(l.Shadow) && l.Shadow.DevRun != nil && l.Shadow.DevRun.Shortened:
		return VerdictOK, DevRunLibraryOKConfidence
	case CleanShadow(l.Shadow):
		return VerdictOK, 0.97
	}
	return VerdictUnknown, 0.5
}

// UnknownReason says in words why no layer could tell whether the cell crashes.
func UnknownReason(l Layers) string {
	r := l.Shadow
	if r == nil {
		switch {
		case l.NoShadow != "" && l.RuntimeChecked:
			return l.NoShadow + "; the runtime rules found no crash, which does not prove there is none"
		case l.NoShadow != "":
			return l.NoShadow + "; the static checks found no crash, which does not prove there is none"
		case l.RuntimeChecked:
			return "no shadow run of the cell; the runtime rules found no crash, which does not prove there is none"
		}
		return "no kernel: the static checks found no crash, which does not prove there is none"
	}
	trim := func(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), "; outcome unknown") }
	switch r.Status {
	case facts.ShadowOK:
		if MetaUsed(r) {
			return metaUnchecked(r.Meta)
		}
		if r.DevRun != nil && r.DevRun.Shortened {
			why := shortenedWhat(r.DevRun) + " and ran clean (" + loopSummary(r.DevRun) + ")"
			if u := append(append([]string(nil), r.DevRun.LibraryUnsure...), r.DevRun.LoopsUnsure...); len(u) > 0 {
				why += "; that does not stand for the full run: " + strings.Join(u, "; ")
			}
			for _, n := range r.Notes {
				if strings.Contains(n, "did not finish") || strings.Contains(n, "goes on in the background") {
					why += "; " + n
				}
			}
			return why
		}
	case facts.ShadowError:
		if r.Meta != nil && r.Meta.ValueDependent {
			return fmt.Sprintf("%s: the shadow run on meta tensors raised %s at line %d, on a line that reads a value it made up", facts.MetaValueReason, r.Exception, r.Line)
		}
		return "the shadow run's crash is not certain: " + trim(r.Exception+" "+r.Message)
	case facts.ShadowTimeout:
		why := trim(firstNonEmpty(r.Reason, "the shadow run timed out"))
		for _, n := range r.Notes {
			why += "; " + n
		}
		return why
	case facts.ShadowRefused:
		return "the shadow run stopped before a side effect (" + trim(firstNonEmpty(r.Refused, r.Reason)) + ")"
	case facts.ShadowSkipped, facts.ShadowDied, facts.ShadowRunning:
		return trim(firstNonEmpty(r.Reason, "the shadow run did not finish"))
	}
	return "no layer could tell"
}

var sourceRank = map[finding.Source]int{finding.SourceShadow: 0, finding.SourceRules: 1, finding.SourceStatic: 2, finding.SourceLLM: 3}
var severityRank = map[finding.Severity]int{finding.SeverityError: 0, finding.SeverityWarning: 1, finding.SeverityInfo: 2, finding.SeverityHint: 3}

func sortFindings(fs []finding.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if severityRank[a.Severity] != severityRank[b.Severity] {
			return severityRank[a.Severity] < severityRank[b.Severity]
		}
		if sourceRank[a.Source] != sourceRank[b.Source] {
			return sourceRank[a.Source] < sourceRank[b.Source]
		}
		return a.Range.Start.Before(b.Range.Start)
	})
}

func concat(lists ...[]finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// kebab turns an exception class name into a finding code: KeyError -> key-error.
func kebab(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	// An acronym is one word: JSONDecodeError is json-decode-error, OSError os-error.
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && !unicode.IsUpper(rs[i-1])
			acronymEnd := i > 0 && unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || acronymEnd {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "runtime-error"
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
