package judge

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// screen says why a cell must not be shadow-run in the given mode ("" when it may be).
// CUDA never survives fork: with real tensors (--shadow-tensors real) a cell that uses it is
// refused in every mode; otherwise the child runs it on meta tensors, its CUDA guard
// refusing any CUDA call (kernelclient/inspector/36_meta.py). In safe mode with the fallback
// sandbox (or an unknown one) any side effect the static layer sees keeps the cell out of the
// child altogether (the child's guards are the second line of defence, for "always"); with
// the namespace sandbox in force, file writes, deletes, moves, OS mutations, subprocesses and
// network use are contained by the sandbox itself, so only long runs are still screened; with
// the fallback's private view of files (SandboxInfo.Emulated), file writes, deletes, moves and
// OS mutations run too, network use and subprocesses are still screened.
func screen(cf *analysis.CellFacts, code, mode string, longRunOK bool, sandbox facts.SandboxInfo, tensors string) string {
	if cf == nil {
		return ""
	}
	for _, e := range cf.SideEffects {
		if e.Kind == analysis.EffectGPU && tensors == facts.TensorsReal && !conditionalDevice(code, e.Range) {
			return fmt.Sprintf("shadow run skipped: the cell uses CUDA (%s, line %d), which does not survive fork", e.Call, e.Range.Start.Line+1)
		}
	}
	if mode != ShadowSafe {
		return ""
	}
	for _, e := range cf.SideEffects {
		switch e.Kind {
		case analysis.EffectFileWrite, analysis.EffectFileDelete, analysis.EffectFileMove, analysis.EffectOSMutation,
			analysis.EffectNetwork, analysis.EffectSubprocess:
			if sandbox.Sandbox == facts.SandboxNamespaces {
				continue
			}
			if sandbox.Sandbox == facts.SandboxFallback && sandbox.Emulates(facts.EmulatedFiles) && e.Kind != analysis.EffectNetwork &&
				e.Kind != analysis.EffectSubprocess {
				continue // the fallback's private view takes the writes (a refused one is "unknown")
			}
			return fmt.Sprintf("shadow run skipped in safe mode: the cell has a side effect (%s: %s, line %d)", e.Kind, e.Call, e.Range.Start.Line+1)
		case analysis.EffectLongRun:
			if longRunOK {
				continue
			}
			return fmt.Sprintf("shadow run skipped in safe mode: the cell may run long (%s, line %d)", e.Call, e.Range.Start.Line+1)
		}
	}
	return ""
}

// conditionalDevice reports whether a CUDA marker is the usual device choice,
// torch.device("cuda" if torch.cuda.is_available() else "cpu"): it picks CUDA only where
// CUDA exists, and the inspector itself refuses to fork a kernel that has initialised CUDA.
func conditionalDevice(code string, r finding.Range) bool {
	lines := analysis.SplitLines(code)
	if r.Start.Line < 0 || r.End.Line >= len(lines) {
		return false
	}
	src := strings.Join(lines[r.Start.Line:r.End.Line+1], "\n")
	return strings.Contains(src, "is_available()") && strings.Contains(src, " else ")
}

// ShadowRun runs code in a forked copy of the kernel (with a fast dev run beside it when
// Options.DevRunCap is set) and waits for the final outcome, polling with short silent
// requests so the kernel stays free for the user meanwhile. Cancelling ctx kills the
// children. See ShadowRunStaged for the provisional answer at the budget.
func (j *Judge) ShadowRun(ctx context.Context, code string, cf *analysis.CellFacts) (*facts.ShadowResult, error) {
	return j.ShadowRunStaged(ctx, code, cf, nil)
}

// ShadowFindings turns a shadow run's outcome into findings on the cell and notes for the
// user. Only a real exception is a finding; refusals, timeouts and skips are notes (the
// outcome is unknown, never a false crash). A fast dev run's crash on a line that reads
// what a shortened loop produced is a warning with DevRunLikelyConfidence: only the full
// run can confirm it.
func ShadowFindings(cellID, text string, cf *analysis.CellFacts, r *facts.ShadowResult) ([]finding.Finding, []string) {
	if r == nil {
		return nil, nil
	}
	notes := append([]string(nil), r.Notes...)
	if m := r.Meta; m != nil {
		notes = append(notes, metaNote(m))
	}
	switch r.Status {
	case facts.ShadowError:
		if m := r.Meta; m != nil && m.ValueDependent {
			return nil, append([]string{fmt.Sprintf("shadow run on meta tensors: %s at line %d reads a value the run does not have (%s): %s, so not reported as a crash",
				r.Exception, r.Line, strings.Join(m.PlaceholderUses, ", "), facts.MetaValueReason)}, notes...)
		}
		line := r.Line
		lines := analysis.SplitLines(text)
		// A crash inside a function the cell defines is the statement's that called it:
		// mark the cell's top-level line, and say where inside it raised.
		inside := ""
		if top, in, ok := cellFrames(r.Frames); ok && top.Line != in.Line && top.Line >= 1 && top.Line <= len(lines) {
			inside = fmt.Sprintf("raised inside %s at line %d of this cell", in.Func, in.Line)
			if t := strings.TrimSpace(in.Text); t != "" {
				inside += ": " + t
			}
			line = top.Line
		}
		if line < 1 || line > len(lines) {
			line = 1
		}
		f := finding.Finding{
			Cell:       cellID,
			Source:     finding.SourceShadow,
			Severity:   finding.SeverityError,
			Code:       shadowCode(r.Exception),
			Exception:  r.Exception,
			Message:    fmt.Sprintf("%s: %s (raised at line %d when run in a copy of the kernel)", r.Exception, oneLine(r.Message), line),
			Range:      narrow(lines, line-1, cf, r),
			Confidence: 1,
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("shadow run: %s at line %d after %.0f ms; your kernel was not touched", r.Exception, line, r.ElapsedMS))
		if d := r.DevRun; d != nil && d.Shortened {
			if d.Likely {
				f.Severity, f.Confidence = finding.SeverityWarning, DevRunLikelyConfidence
				f.Message = fmt.Sprintf("%s: %s (raised at line %d in a fast dev run with the loops shortened: likely, not confirmed)", r.Exception, oneLine(r.Message), line)
				reads := ""
				if len(d.Reads) > 0 {
					reads = fmt.Sprintf(" reads %s, which", strings.Join(d.Reads, ", "))
				} else {
					reads = " depends on what"
				}
				f.Evidence = append(f.Evidence, fmt.Sprintf("fast dev run: the loops were shortened (%s); the crash line%s the shortened loops produced, so the shortening may cause it: the full run confirms or withdraws it", loopSummary(d), reads))
				if fs := d.FullSize; fs != nil && fs.Verdict == facts.FullSizeCrash {
					f.Evidence = append(f.Evidence, "at the full run's sizes ("+strings.Join(fs.Sizes, "; ")+") the line still raises "+r.Exception)
				}
			} else if li := d.LastItem; li != nil {
				of := ""
				if li.Total > 0 {
					of = fmt.Sprintf(" (item %d of %d)", li.Total, li.Total)
				}
				f.Evidence = append(f.Evidence, fmt.Sprintf("fast dev run (%s): raised in the last item%s of the loop at line %d, run after the first %d; "+
					"the crash line reads only the item and what the loop does not change, so the full run meets it there", loopSummary(d), of, li.Line, li.Ran))
			} else {
				f.Evidence = append(f.Evidence, fmt.Sprintf("fast dev run (%s): the crash line reads nothing the shortened loops produced", loopSummary(d)))
			}
		}
		if r.Meta != nil {
			f.Evidence = append(f.Evidence, metaEvidence(r.Meta))
		}
		if inside != "" {
			f.Evidence = append(f.Evidence, inside)
		}
		if fe := frameEvidence(r.Frames); fe != "" {
			f.Evidence = append(f.Evidence, fe)
		}
		return []finding.Finding{f}, notes
	case facts.ShadowOK:
		if d := r.DevRun; d != nil && d.LibraryOnly() {
			notes = append([]string{fmt.Sprintf("fast dev run: the library's work was shortened (%s) and the cell ran clean; "+
				"what the shortened calls produce has the full calls' structure (fitted features, classes, shapes, columns, dtypes), "+
				"so the lines after them meet what the full run gives them, except for values (a score, a prediction)", strings.Join(d.Library, "; "))}, notes...)
		} else if d.Stands() {
			notes = append([]string{fmt.Sprintf("fast dev run: %s and ran clean (%s); the cut loops go over items of one make "+
				"and ran their last items, every line of their bodies ran, and the lines after them ran clean with what the loops "+
				"made at its full size, so the skipped iterations differ in their values only (a row, a batch): no crash is "+
				"expected, which only the full run proves", shortenedWhat(d), loopSummary(d))}, notes...)
		} else if d != nil && d.Shortened {
			notes = append([]string{fmt.Sprintf("%s and ran clean (%s): no crash in the shortened run; the full run's outcome is unknown", shortenedWhat(d), loopSummary(d))}, notes...)
		}
		return nil, notes
	case facts.ShadowRefused:
		return nil, append([]string{fmt.Sprintf("shadow run stopped before a side effect (%s): outcome unknown", firstNonEmpty(r.Refused, r.Reason))}, notes...)
	case facts.ShadowTimeout:
		return nil, append([]string{fmt.Sprintf("shadow run timed out: %s", firstNonEmpty(r.Reason, "the cell ran longer than the shadow time limit"))}, notes...)
	case facts.ShadowDied:
		return nil, append([]string{fmt.Sprintf("shadow run died: %s", firstNonEmpty(r.Reason, "the child process ended without a report"))}, notes...)
	case facts.ShadowSkipped:
		return nil, append([]string{firstNonEmpty(r.Reason, "shadow run skipped")}, notes...)
	case facts.ShadowRunning:
		return nil, append([]string{firstNonEmpty(r.Reason, "the shadow run has not finished")}, notes...)
	}
	return nil, notes
}

// cellFrames returns the outermost and innermost traceback frames that belong to the cell.
func cellFrames(frames []facts.Frame) (top, in facts.Frame, ok bool) {
	for _, fr := range frames {
		if !fr.InCell {
			continue
		}
		if !ok {
			top, ok = fr, true
		}
		in = fr
	}
	return top, in, ok
}

// frameEvidence condenses the library frames below the cell to the call the cell made and
// the place that raised: the user needs where it came from, not pandas' internals.
func frameEvidence(frames []facts.Frame) string {
	var lib []facts.Frame
	for _, fr := range frames {
		if !fr.InCell && !plumbing[fr.Func] {
			lib = append(lib, fr)
		}
	}
	switch len(lib) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("raised in %s (%s:%d)", lib[0].Func, shortPath(lib[0].File), lib[0].Line)
	}
	first, last := lib[0], lib[len(lib)-1]
	return fmt.Sprintf("raised in %s (%s:%d), called through %s (%s:%d)", last.Func, shortPath(last.File), last.Line,
		first.Func, shortPath(first.File), first.Line)
}

// plumbing are the frames of decorators and dispatch that say nothing about the call.
var plumbing = map[string]bool{"wrapper": true, "inner": true, "wrapped": true, "_wrapper": true, "decorator": true,
	"_call_impl": true, "__call__": true, "_wrapped_call_impl": true, "<lambda>": true, "wrapped_func": true}

// shortPath drops the interpreter's install prefix: "pandas/core/frame.py".
func shortPath(p string) string {
	for _, marker := range []string{"site-packages/", "dist-packages/"} {
		if i := strings.LastIndex(p, marker); i >= 0 {
			return p[i+len(marker):]
		}
	}
	if i := strings.Index(p, "/lib/python3"); i >= 0 {
		if j := strings.IndexByte(p[i+len("/lib/python3"):], '/'); j >= 0 {
			return p[i+len("/lib/python3")+j+1:]
		}
	}
	return p
}

// shadowCode is the finding code of a real exception: the codes the static layer and the
// rules use where they mean the same crash, the exception's name in kebab case otherwise.
func shadowCode(exception string) string {
	switch exception {
	case "NameError":
		return finding.UndefinedName
	case "NotFittedError", "sklearn.exceptions.NotFittedError":
		return finding.NotFitted
	}
	return kebab(exception)
}

var (
	quotedRE   = regexp.MustCompile(`^['"](.*)['"]$`)
	nameErrRE  = regexp.MustCompile(`name '([^']+)' is not defined`)
	attrErrRE  = regexp.MustCompile(`has no attribute '([^']+)'`)
	keyInMsgRE = regexp.MustCompile(`\[?['"]([^'"]+)['"]`)
)

// narrow finds the expression on the crash line that the exception is about (the missing
// key, the undefined name, the missing attribute); the whole line otherwise.
func narrow(lines []string, l int, cf *analysis.CellFacts, r *facts.ShadowResult) finding.Range {
	whole := lineRange(lines, l)
	if cf == nil {
		return whole
	}
	onLine := func(rg finding.Range) bool { return rg.Start.Line == l }
	switch r.Exception {
	case "KeyError":
		key := strings.TrimSpace(r.Message)
		if m := quotedRE.FindStringSubmatch(key); m != nil {
			key = m[1]
		} else if m := keyInMsgRE.FindStringSubmatch(key); m != nil {
			key = m[1]
		}
		for _, s := range cf.Subscripts {
			for i, k := range s.Keys {
				if ks, ok := k.(string); ok && ks == key && i < len(s.KeyRanges) && onLine(s.KeyRanges[i]) {
					return s.KeyRanges[i]
				}
			}
		}
	case "NameError", "UnboundLocalError":
		if m := nameErrRE.FindStringSubmatch(r.Message); m != nil {
			for _, u := range cf.Uses {
				if u.Name == m[1] && onLine(u.Range) {
					return u.Range
				}
			}
		}
	case "AttributeError":
		if m := attrErrRE.FindStringSubmatch(r.Message); m != nil {
			for _, a := range cf.Attrs {
				for i, p := range a.Parts {
					if p == m[1] && i < len(a.PartRanges) && onLine(a.PartRanges[i]) {
						return a.PartRanges[i]
					}
				}
			}
		}
	}
	return whole
}

// lineRange spans line l from its first non-blank character to its end, in UTF-16 units.
func lineRange(lines []string, l int) finding.Range {
	if l < 0 || l >= len(lines) {
		return finding.Range{}
	}
	text := strings.TrimRight(lines[l], "\r")
	trimmed := strings.TrimLeft(text, " \t")
	start := analysis.UTF16Len(text[:len(text)-len(trimmed)])
	return finding.Range{Start: finding.Position{Line: l, Character: start}, End: finding.Position{Line: l, Character: analysis.UTF16Len(text)}}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// metaNote says, for the user, that a shadow run used meta tensors and what that left out.
func metaNote(m *facts.MetaRun) string {
	s := "shadow tensors: " + firstNonEmpty(m.Why, "meta")
	s += fmt.Sprintf("; %s shape-only", plural(m.Converted, "kernel tensor"))
	if len(m.Devices) > 0 {
		s += " (" + strings.Join(m.Devices, ", ") + ")"
	}
	if m.Created > 0 {
		s += fmt.Sprintf(", %s moved to a GPU by the cell", plural(m.Created, "tensor"))
	}
	if m.Placeholders > 0 {
		s += fmt.Sprintf("; %s made up (%s)", plural(m.Placeholders, "placeholder value"), strings.Join(m.PlaceholderUses, ", "))
	}
	s += fmt.Sprintf("; %s", plural(m.CUDACalls, "CUDA call"))
	if m.Error != "" {
		s += "; " + m.Error
	}
	return s
}

// metaEvidence is a crash finding's line saying it was found on meta tensors.
func metaEvidence(m *facts.MetaRun) string {
	s := fmt.Sprintf("found on meta tensors (--shadow-tensors meta or a CUDA kernel: shapes, dtypes, strides and devices, no values; %s shape-only", plural(m.Converted, "kernel tensor"))
	if len(m.Devices) > 0 {
		s += " on " + strings.Join(m.Devices, ", ")
	}
	if m.Placeholders > 0 {
		s += fmt.Sprintf("; the crash line reads none of the %s the run made up", plural(m.Placeholders, "placeholder"))
	}
	return s + ")"
}

// metaUnchecked says what a clean meta run could not check.
func metaUnchecked(m *facts.MetaRun) string {
	s := "the cell ran to its end on meta tensors (shapes, dtypes, strides and devices only): what depends on tensor values (indices in range, NaNs, values read with .item()) was not checked"
	if m.Placeholders > 0 {
		s += fmt.Sprintf("; %s made up (%s)", plural(m.Placeholders, "placeholder value"), strings.Join(m.PlaceholderUses, ", "))
	}
	return s
}

// MetaUsed reports whether a shadow run ran on meta tensors that stood for the kernel's (or
// the cell's GPU) tensors: such a run proves shapes, not values.
func MetaUsed(r *facts.ShadowResult) bool {
	return r != nil && r.Meta != nil && (r.Meta.Converted > 0 || r.Meta.Created > 0 || r.Meta.Placeholders > 0)
}

// pointAtSite makes a shadow finding whose exception was raised by code an earlier cell
// defined (a forward, a helper) say where: "raised in cell 3, line 14 (forward)", with
// that line linked (Finding.Related), since the cell the user edits is that one, not the
// call in this cell. A library file path (/tmp/ipykernel_…/….py) means nothing to a user.
func pointAtSite(fs []finding.Finding, r *facts.ShadowResult, hist []repair.Cell) {
	if r == nil || r.Status != facts.ShadowError || len(fs) == 0 {
		return
	}
	s, ok := repair.FrameSite(r.Frames, hist)
	if !ok {
		return
	}
	lines := analysis.SplitLines(s.Cell.Text)
	if s.Line >= len(lines) {
		return
	}
	text := strings.TrimSpace(lines[s.Line])
	for i := range fs {
		f := &fs[i]
		if f.Source != finding.SourceShadow || f.Exception != r.Exception {
			continue
		}
		where := "raised in " + s.Where()
		f.Message = strings.Replace(f.Message, fmt.Sprintf("(raised at line %d when run", f.Range.Start.Line+1),
			fmt.Sprintf("(%s, called from line %d, when run", where, f.Range.Start.Line+1), 1)
		f.Evidence = append(f.Evidence, where+": "+text)
		f.Related = append(f.Related, finding.Related{Cell: s.Cell.ID, Range: lineRange(lines, s.Line), Message: where + ": " + text})
	}
}
