package llm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Prompt is what is sent to the model for one prediction.
type Prompt struct {
	System string
	User   string
	// Tokens is the estimated size of System plus User (see TokenizerName).
	Tokens int
	// Cells are the indexes into Input.Executed that were sent, in execution order.
	Cells []int
	// DroppedCells counts dependency cells left out to fit MaxPromptTokens.
	DroppedCells int
	// SummarisedCells counts dependency cells left out because the runtime facts describe
	// the values they produced.
	SummarisedCells int
	// FactsDetail is the detail level the facts were rendered at (0 = full); higher levels
	// were needed to fit MaxPromptTokens.
	FactsDetail int
	// ValuesWithheld is true when some value facts were left out (SendValues false).
	ValuesWithheld bool
	// Redactions counts secrets replaced by Redacted.
	Redactions int
}

// systemPrompt frames the task. It carries no API documentation: CRANE-LLM found that docs
// add 73.6% tokens for no gain.
const systemPrompt = `You predict whether a Python ML notebook cell crashes if run now. Given: the executed cells it depends on (already ran, in execution order; "(excerpt)" shows only the needed statements), runtime facts from the live kernel (structural, type, value; they override what the code suggests; a missing fact is unknown), evidence from premortem's checks (a shadow run really executed the cell in a copy of the kernel: explain and fix its crash, do not contradict it), and the target cell with line numbers.
Predict a crash only if the code and facts show it; if unsure, answer crash false with low confidence.
Reason step by step, briefly, in "reasoning", then output exactly one JSON object and nothing else:
{"reasoning": "...", "crash": true|false, "confidence": 0-1, "line": 1-based target line that raises, or 0, "exception": "e.g. KeyError, or empty", "category": "short cause, e.g. missing column, shape mismatch, undefined name", "explanation": "1-2 sentences for the user", "fix": null or {"start_line": N, "end_line": N, "replacement": "new text of those target lines, same indentation"}}`

// explainSystemPrompt asks for a longer diagnosis of one finding.
const explainSystemPrompt = `You are premortem, a crash diagnostician for Python machine-learning notebooks. You get the executed cells the target cell depends on, runtime facts from the live kernel (they describe the kernel as it is now), evidence from premortem's checks, the target cell with line numbers, and one finding about the target cell. Explain the finding for the notebook's user in Markdown: what goes wrong, on which line and why (cite the facts), and how to fix it, with the corrected lines in a python code block. Be concise (at most about 200 words). If the facts show the finding is wrong, say so.`

// BuildPrompt builds the prediction prompt for in: the executed cells sliced to the target's
// dependencies (plus the import cells binding names they use), the runtime facts of the
// names the target uses, the other layers' evidence and the numbered target cell, with
// secrets redacted, fitted to cfg.MaxPromptTokens by dropping the least relevant cells
// first, then rendering facts with less detail.
func BuildPrompt(in Input, cfg Config) Prompt {
	return buildPrompt(in, cfg.withDefaults(), systemPrompt, "")
}

// buildPrompt assembles a prompt with the given system text and an optional extra section
// appended to the user text (Explain's finding).
func buildPrompt(in Input, cfg Config, system, extra string) Prompt {
	sel := selectCells(in, cfg.WholeCells)
	cells, depth := sel.cells, sel.depth
	order, _ := factOrder(in.Facts, in.Target.Text)
	mentioned := subscriptStrings(in.Target.Text)

	target := numberLines(in.Target.Text)
	evidence := renderEvidence(in.Evidence)
	budget := cfg.MaxPromptTokens - CountTokens(system) - CountTokens(target) - CountTokens(evidence) - CountTokens(extra) - 40

	// Fit the budget: drop the least relevant cells (keeping the target's direct
	// dependencies and setup cells), then render facts with less detail, then drop the
	// remaining cells, least relevant first.
	renderAt := func(level int) (string, bool) {
		d := detailLevels[level]
		d.sendValues = cfg.SendValues
		d.mentioned = mentioned
		return renderFacts(in.Facts, order, d)
	}
	level := 0
	factsText, withheld := renderAt(level)
	factsTokens := CountTokens(factsText)

	cellTokens := make(map[int]int, len(cells))
	total := 0
	for _, i := range cells {
		cellTokens[i] = CountTokens(sel.text[i]) + 8
		total += cellTokens[i]
	}
	order2 := dropOrder(cells, depth, in.Executed)
	dropped := 0
	drop := func(protect bool) {
		for _, i := range order2 {
			if total+factsTokens <= budget {
				return
			}
			if _, ok := cellTokens[i]; !ok || (protect && (depth[i] <= 1 || analyzeCell(in.Executed[i].Text).setupOnly)) {
				continue
			}
			total -= cellTokens[i]
			delete(cellTokens, i)
			dropped++
		}
	}
	drop(true)
	for total+factsTokens > budget && level < len(detailLevels)-1 {
		level++
		factsText, withheld = renderAt(level)
		factsTokens = CountTokens(factsText)
	}
	drop(false)
	if dropped > 0 {
		kept := cells[:0:0]
		for _, i := range cells {
			if _, ok := cellTokens[i]; ok {
				kept = append(kept, i)
			}
		}
		cells = kept
	}

	var u strings.Builder
	switch {
	case len(in.Executed) == 0:
		u.WriteString("# Executed cells\n(none: the kernel has run nothing yet)\n")
	case in.Dependencies == nil && dropped == 0:
		fmt.Fprintf(&u, "# Executed cells (execution order, all %d)\n", len(in.Executed))
	default:
		fmt.Fprintf(&u, "# Executed cells (execution order; %d of %d: the ones the target depends on", len(cells), len(in.Executed))
		if sel.summarised > 0 {
			fmt.Fprintf(&u, "; %d earlier ones summarised by the runtime facts", sel.summarised)
		}
		if dropped > 0 {
			fmt.Fprintf(&u, "; %d more left out for length", dropped)
		}
		u.WriteString(")\n")
	}
	if len(in.Executed) > 0 && len(cells) == 0 {
		u.WriteString("(none)\n")
	}
	for _, i := range cells {
		c := in.Executed[i]
		if c.ExecutionOrder > 0 {
			fmt.Fprintf(&u, "## In [%d]:", c.ExecutionOrder)
		} else {
			fmt.Fprintf(&u, "## Cell %d:", c.Index+1)
		}
		if sel.excerpt[i] {
			u.WriteString(" (excerpt)")
		}
		u.WriteString("\n")
		u.WriteString(strings.TrimRight(sel.text[i], " \t\n"))
		u.WriteString("\n")
	}
	if factsText != "" {
		u.WriteString("# Runtime facts (live kernel, now)\n")
		u.WriteString(factsText)
		if withheld {
			u.WriteString("(sample values and value ranges withheld by the user's settings)\n")
		}
	}
	if evidence != "" {
		u.WriteString("# Evidence from premortem's other checks\n")
		u.WriteString(evidence)
	}
	u.WriteString("# Target cell\n")
	u.WriteString(target)
	if extra != "" {
		u.WriteString(extra)
	}
	user, redactions := RedactSecrets(u.String())
	return Prompt{
		System:          system,
		User:            user,
		Tokens:          CountTokens(system) + CountTokens(user),
		Cells:           cells,
		DroppedCells:    dropped,
		SummarisedCells: sel.summarised,
		FactsDetail:     level,
		ValuesWithheld:  withheld,
		Redactions:      redactions,
	}
}

// selection is the executed cells a prompt shows.
type selection struct {
	cells []int       // indexes into Input.Executed, ascending
	depth map[int]int // distance from the target (1 = binds a name it reads; larger = less relevant)
	text  map[int]string
	// excerpt marks cells shown with only the statements the target depends on.
	excerpt map[int]bool
	// summarised counts dependency cells left out because runtime facts describe what
	// they produced.
	summarised int
}

// selectCells picks the executed cells to send: all of them, whole, when the dependencies
// are unknown; otherwise the dependencies plus the import cells binding names they and the
// target read, each cut to the statements the target depends on unless wholeCells.
func selectCells(in Input, wholeCells bool) selection {
	plain := sliceStatements(in.Executed, in.Target.Text, nil)
	sl := plain
	known := knownNames(in)
	if len(known) > 0 {
		sl = sliceStatements(in.Executed, in.Target.Text, known)
	}
	sel := selection{depth: sl.depth, text: map[int]string{}, excerpt: map[int]bool{}}
	if in.Dependencies == nil {
		for i, c := range in.Executed {
			sel.cells = append(sel.cells, i)
			sel.text[i] = dropBlankLines(c.Text)
		}
	} else {
		seen := map[int]bool{}
		for _, i := range in.Dependencies {
			if i < 0 || i >= len(in.Executed) || seen[i] {
				continue
			}
			seen[i] = true
			// History before the statements that produced names with runtime facts is
			// summarised by the facts; cells the statement slice does not understand stay.
			if _, cut := sl.kept[i]; !cut && len(known) > 0 {
				if _, understood := plain.kept[i]; understood {
					sel.summarised++
					continue
				}
			}
			sel.cells = append(sel.cells, i)
		}
		// Imports binding names the target or the kept cells read: cheap and they tell the
		// model which library an alias is.
		names := map[string]bool{}
		for _, n := range analyzeCell(in.Target.Text).uses {
			names[n] = true
		}
		for _, i := range sel.cells {
			for _, n := range analyzeCell(in.Executed[i].Text).uses {
				names[n] = true
			}
		}
		for _, i := range importCellsFor(in.Executed, names) {
			if !seen[i] {
				seen[i] = true
				sel.cells = append(sel.cells, i)
			}
		}
		sort.Ints(sel.cells)
		for _, i := range sel.cells {
			text := in.Executed[i].Text
			if !wholeCells {
				var cut bool
				text, cut = sl.excerpt(i, text)
				if !cut {
					text, cut = plain.excerpt(i, text)
				}
				sel.excerpt[i] = cut
			}
			sel.text[i] = dropBlankLines(text)
		}
	}
	far := len(in.Executed) + 1
	for _, i := range sel.cells {
		if _, ok := sel.depth[i]; !ok {
			sel.depth[i] = far
		}
	}
	return sel
}

// knownNames are the root names with runtime facts of values that exist.
func knownNames(in Input) map[string]bool {
	var known map[string]bool
	for name, v := range in.Facts {
		if !v.Exists {
			continue
		}
		root := name
		if i := strings.IndexAny(root, ".["); i >= 0 {
			root = root[:i]
		}
		if known == nil {
			known = map[string]bool{}
		}
		known[root] = true
	}
	return known
}

// dropBlankLines removes empty lines from an executed cell (they carry nothing and cost
// tokens; the target keeps them so that line numbers stay the user's).
func dropBlankLines(text string) string {
	lines := analysis.SplitLines(text)
	out := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// dropOrder lists cells from least to most relevant: farthest from the target first, then
// earliest executed; setup-only cells (imports, options) last, since they are cheap and name
// the libraries.
func dropOrder(cells []int, depth map[int]int, executed []CellText) []int {
	out := append([]int(nil), cells...)
	setup := map[int]bool{}
	for _, i := range out {
		setup[i] = analyzeCell(executed[i].Text).setupOnly
	}
	sort.SliceStable(out, func(a, b int) bool {
		i, j := out[a], out[b]
		if setup[i] != setup[j] {
			return !setup[i]
		}
		if depth[i] != depth[j] {
			return depth[i] > depth[j]
		}
		return i < j
	})
	return out
}

// numberLines prefixes each line of the cell with its 1-based number; blank lines are left
// out (the numbers of the others stay the user's).
func numberLines(text string) string {
	lines := analysis.SplitLines(strings.TrimRight(text, "\r\n"))
	width := len(fmt.Sprint(len(lines)))
	var b strings.Builder
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		fmt.Fprintf(&b, "%*d| %s\n", width, i+1, l)
	}
	return b.String()
}

// renderEvidence describes the other layers' findings; the LLM's own are skipped.
func renderEvidence(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Source == finding.SourceLLM {
			continue
		}
		line := f.Range.Start.Line + 1
		what := f.Message
		if f.Exception != "" && !strings.Contains(what, f.Exception) {
			what = f.Exception + ": " + what
		}
		switch f.Source {
		case finding.SourceShadow:
			fmt.Fprintf(&b, "- the shadow run (the cell executed in a copy of the kernel) raised at line %d: %s\n", line, oneLine(what, 400))
		case finding.SourceRules:
			certainty := "likely"
			if f.Severity == finding.SeverityError {
				certainty = "certain"
			}
			fmt.Fprintf(&b, "- runtime rule %s (%s) at line %d: %s\n", f.Code, certainty, line, oneLine(what, 400))
		default:
			fmt.Fprintf(&b, "- %s check %s at line %d: %s\n", f.Source, f.Code, line, oneLine(what, 400))
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "  because: %s\n", oneLine(e, 300))
		}
	}
	return b.String()
}
