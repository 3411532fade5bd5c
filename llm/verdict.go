package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Verdict is the model's answer about one target cell (the majority of Samples answers).
type Verdict struct {
	// Unknown is true when no usable answer came back; Reason says why. The other answer
	// fields are then zero.
	Unknown bool   `json:"unknown,omitempty"`
	Reason  string `json:"reason,omitempty"`

	Crash bool `json:"crash"`
	// Confidence in Crash, in [0,1]: the mean over the answers that agree with it.
	Confidence float64 `json:"confidence"`
	// Line is the 1-based line of the target cell that raises (0 when unknown or no crash).
	Line        int      `json:"line,omitempty"`
	Exception   string   `json:"exception,omitempty"`
	Category    string   `json:"category,omitempty"`
	Explanation string   `json:"explanation,omitempty"`
	Fix         *FixSpec `json:"fix,omitempty"`
	Reasoning   string   `json:"reasoning,omitempty"`

	// Samples is the number of usable answers voted on; Votes how many agree with Crash.
	Samples int `json:"samples,omitempty"`
	Votes   int `json:"votes,omitempty"`
	// Model that answered; PromptTokens the estimated prompt size; Cached whether the
	// verdict came from the cache.
	Model        string `json:"model,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Cached       bool   `json:"cached,omitempty"`
}

// clone copies v deeply enough that the copy's owner may change it: the cache keeps v and
// hands out clones.
func (v *Verdict) clone() *Verdict {
	out := *v
	if v.Fix != nil {
		fix := *v.Fix
		out.Fix = &fix
	}
	return &out
}

// FixSpec replaces lines StartLine..EndLine (1-based, inclusive) of the target cell.
type FixSpec struct {
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	Replacement string `json:"replacement"`
}

// answer is the wire form of one model answer; pointers tell absent from zero.
type answer struct {
	Reasoning   *string          `json:"reasoning"`
	Crash       *bool            `json:"crash"`
	Confidence  *float64         `json:"confidence"`
	Line        *int             `json:"line"`
	Exception   *string          `json:"exception"`
	Category    *string          `json:"category"`
	Explanation *string          `json:"explanation"`
	Fix         *json.RawMessage `json:"fix"`
}

// ParseAnswer parses one model answer strictly: exactly one JSON object (optionally inside a
// Markdown code fence, optionally after prose), "crash" a boolean, "confidence" a number in
// [0,1], "line" a non-negative integer, the strings strings, "fix" null or an object with
// integer start_line <= end_line and a string replacement. Unknown fields are ignored.
func ParseAnswer(text string) (*Verdict, error) {
	raw, err := extractJSON(text)
	if err != nil {
		return nil, err
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("answer is not the JSON object asked for: %w", err)
	}
	if a.Crash == nil {
		return nil, errors.New(`answer lacks the boolean "crash"`)
	}
	v := &Verdict{Crash: *a.Crash}
	if a.Confidence != nil {
		if *a.Confidence < 0 || *a.Confidence > 1 {
			return nil, fmt.Errorf(`"confidence" %v is outside [0,1]`, *a.Confidence)
		}
		v.Confidence = *a.Confidence
	} else if v.Crash {
		return nil, errors.New(`answer lacks "confidence"`)
	}
	if a.Line != nil {
		if *a.Line < 0 {
			return nil, fmt.Errorf(`"line" %d is negative`, *a.Line)
		}
		v.Line = *a.Line
	}
	if v.Crash && v.Line == 0 {
		return nil, errors.New(`a crash answer needs "line", the 1-based line of the target cell that raises`)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	v.Reasoning = str(a.Reasoning)
	v.Exception = normalizeException(str(a.Exception))
	v.Category = str(a.Category)
	v.Explanation = str(a.Explanation)
	if v.Crash && v.Exception == "" {
		return nil, errors.New(`a crash answer needs "exception", the Python exception class`)
	}
	if a.Fix != nil && string(*a.Fix) != "null" {
		var f struct {
			StartLine   *int    `json:"start_line"`
			EndLine     *int    `json:"end_line"`
			Replacement *string `json:"replacement"`
		}
		if err := json.Unmarshal(*a.Fix, &f); err != nil {
			return nil, fmt.Errorf(`"fix" must be null or {"start_line", "end_line", "replacement"}: %w`, err)
		}
		if f.StartLine == nil || f.Replacement == nil {
			return nil, errors.New(`"fix" needs "start_line" and "replacement"`)
		}
		end := *f.StartLine
		if f.EndLine != nil {
			end = *f.EndLine
		}
		if *f.StartLine < 1 || end < *f.StartLine {
			return nil, fmt.Errorf(`"fix" lines %d..%d are not a 1-based range`, *f.StartLine, end)
		}
		v.Fix = &FixSpec{StartLine: *f.StartLine, EndLine: end, Replacement: *f.Replacement}
	}
	if !v.Crash {
		v.Line, v.Exception = 0, ""
	}
	return v, nil
}

// extractJSON finds the one JSON object in text: after optional prose or a code fence, with
// nothing but whitespace or a closing fence after it.
func extractJSON(text string) ([]byte, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, errors.New("the answer is empty")
	}
	start := strings.IndexByte(t, '{')
	if start < 0 {
		return nil, errors.New("the answer holds no JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(t[start:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the JSON object is invalid or truncated: %w", err)
	}
	rest := strings.TrimSpace(t[start+int(dec.InputOffset()):])
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "```"))
	if rest != "" {
		return nil, fmt.Errorf("text follows the JSON object: %q", oneLine(rest, 40))
	}
	return raw, nil
}

// normalizeException keeps the class name: "pandas.errors.KeyError: 'x'" -> "KeyError".
func normalizeException(s string) string {
	if i := strings.IndexAny(s, ":( "); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Findings turns a crash verdict into findings on the target cell: Source llm, Severity
// warning (the model is never certain; the deterministic layers own errors), the range of
// the given line without its indentation, clamped to the cell, and the fix as an edit
// replacing the given lines. An unknown or no-crash verdict yields none.
func (v Verdict) Findings(cellID, cellText string) []finding.Finding {
	if v.Unknown || !v.Crash {
		return nil
	}
	lines := analysis.SplitLines(cellText)
	ln := min(max(v.Line, 1), len(lines)) - 1
	f := finding.Finding{
		Cell:        cellID,
		Source:      finding.SourceLLM,
		Severity:    finding.SeverityWarning,
		Code:        finding.LLMPredictedCrash,
		Exception:   v.Exception,
		Message:     v.message(),
		Range:       lineRange(lines, ln),
		Confidence:  v.Confidence,
		Explanation: v.markdown(),
	}
	if v.Samples > 1 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%d of %d answers of %s predict this crash", v.Votes, v.Samples, v.Model))
	}
	if fix := v.edit(lines); fix != nil {
		f.Fixes = []finding.Fix{*fix}
	}
	return []finding.Finding{f}
}

func (v Verdict) message() string {
	msg := "may raise " + v.Exception
	if v.Explanation != "" {
		msg += ": " + oneLine(v.Explanation, 300)
	}
	return msg
}

func (v Verdict) markdown() string {
	var b strings.Builder
	b.WriteString(v.Explanation)
	if v.Reasoning != "" {
		b.WriteString("\n\n**Reasoning:** ")
		b.WriteString(v.Reasoning)
	}
	return strings.TrimSpace(b.String())
}

// edit converts the fix to an finding.Fix, or nil when it does not fit the cell.
func (v Verdict) edit(lines []string) *finding.Fix {
	if v.Fix == nil || v.Fix.StartLine < 1 || v.Fix.StartLine > len(lines) || v.Fix.EndLine < v.Fix.StartLine {
		return nil
	}
	end := min(v.Fix.EndLine, len(lines))
	repl := strings.TrimRight(v.Fix.Replacement, "\n")
	var r finding.Range
	r.Start = finding.Position{Line: v.Fix.StartLine - 1}
	r.End = finding.Position{Line: end - 1, Character: analysis.UTF16Len(lines[end-1])}
	title := "Apply the LLM's fix"
	if v.Exception != "" {
		title += " for " + v.Exception
	}
	return &finding.Fix{Title: title, Edits: []finding.Edit{{Range: r, NewText: repl}}}
}

// lineRange spans line ln without its leading indentation and trailing blanks.
func lineRange(lines []string, ln int) finding.Range {
	l := lines[ln]
	trimmed := strings.TrimLeft(l, " \t")
	start := analysis.UTF16Len(l[:len(l)-len(trimmed)])
	end := analysis.UTF16Len(strings.TrimRight(l, " \t\r"))
	if end < start {
		end = start
	}
	return finding.Range{
		Start: finding.Position{Line: ln, Character: start},
		End:   finding.Position{Line: ln, Character: end},
	}
}
