package analysis

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/finding"
)

// Bounds on the work one cell may cost. Notebooks hold generated code, pasted data
// literals and huge cells; none of them may exhaust the language server. Past a bound the
// cell's facts carry a Limit, the static layer says so in an info finding, and the other
// cells are analysed as usual.
const (
	// MaxCellBytes is the largest cell text analysed. A larger cell is not parsed: it gets
	// a too-large finding and counts as defining names nobody can list (like a star import),
	// so the cells after it get no undefined-name errors on its account.
	MaxCellBytes = 256 << 10
	// MaxNotebookBytes bounds the code of one notebook analysed, counted over its Python
	// cells in page order (a cell over MaxCellBytes, never parsed, does not count): the
	// cells past it are not parsed either, so a notebook's facts, whatever its size, cost
	// at most what this much code costs (about a hundred times its size for the densest
	// code, short statements). Real notebooks hold tens of kilobytes of code, and the
	// 2,000-cell notebook of the lsp benchmarks about 420 KB; at 512 KB a 15 MB notebook of
	// short statements costs the server (GOGC 50, cmd/premortem/serve.go) 7.4× its size
	// with a kernel attached, where the issue asks for at most 10×. The not-analysed code's
	// doc in finding/codes.go names this bound.
	MaxNotebookBytes = 512 << 10
	// maxDepth bounds the depth of the syntax tree premortem walks. Every walk over the tree
	// and over the expressions converted from it (facts, effects, the rules) is recursive,
	// so this one cut bounds them all: a subtree below it is kept as one opaque node whose
	// names are not read. CPython itself refuses expressions a few thousand levels deep
	// ("RecursionError: maximum recursion depth exceeded during compilation").
	maxDepth = 1000
	// maxBrackets is how many brackets Python's tokenizer lets nest (MAXLEVEL): one more is
	// "SyntaxError: too many nested parentheses", so such a cell is not parsed at all.
	maxBrackets = 200
)

// LimitKind says which bound a cell exceeded.
type LimitKind string

// Limit kinds.
const (
	// LimitTooLarge: the cell is larger than MaxCellBytes and was not parsed.
	LimitTooLarge LimitKind = "too-large"
	// LimitTooDeep: a part of the cell nests deeper than premortem walks; that part was
	// not analysed, the rest was.
	LimitTooDeep LimitKind = "too-deep"
	// LimitBrackets: more than 200 nested brackets, which Python refuses to compile; the
	// cell was not parsed.
	LimitBrackets LimitKind = "too-many-brackets"
	// LimitNotebook: the cell ends past MaxNotebookBytes of the notebook's code and was
	// not parsed.
	LimitNotebook LimitKind = "notebook-too-large"
)

// Limit is a part of a cell premortem did not analyse because analysing it would cost
// more than one cell may.
type Limit struct {
	Kind LimitKind
	// Range is where: the first line of the deep expression, the offending bracket, the
	// cell's first line for a cell too large.
	Range finding.Range
	// Message says what was skipped and why, for logs and findings.
	Message string
}

// tooLargeFacts are the facts of a cell larger than MaxCellBytes: nothing is parsed.
func tooLargeFacts(text string) *CellFacts {
	end := strings.IndexAny(text, "\r\n")
	if end < 0 {
		end = len(text)
	}
	end = min(end, 200)
	idx := NewLineIndex(text[:end])
	msg := fmt.Sprintf("the cell is %s, larger than the %s premortem analyses: it is not checked, and names it may define count as defined",
		sizeText(len(text)), sizeText(MaxCellBytes))
	return &CellFacts{
		Limits:      []Limit{{Kind: LimitTooLarge, Range: idx.Range(0, end), Message: msg}},
		StarImports: []string{"<cell too large to analyse>"},
	}
}

// overBudgetFacts are the facts of a cell that ends past MaxNotebookBytes of its
// notebook's code (total bytes of it): nothing is parsed, and like a cell too large it
// counts as defining names nobody can list.
func overBudgetFacts(text string, total int) *CellFacts {
	f := tooLargeFacts(text)
	f.Limits[0].Kind = LimitNotebook
	f.Limits[0].Message = fmt.Sprintf("the notebook's code is over the %s premortem analyses (%s so far, this cell included): this cell is not checked, and names it may define count as defined",
		sizeText(MaxNotebookBytes), sizeText(total))
	f.StarImports = []string{"<cell past the notebook's analysed size>"}
	return f
}

// bracketFacts are the facts of a cell with more than maxBrackets nested brackets at off.
func bracketFacts(text string, off int) *CellFacts {
	idx := NewLineIndex(text)
	r := idx.Range(off, off+1)
	return &CellFacts{
		SyntaxErrors: []finding.Range{r},
		Limits: []Limit{{Kind: LimitBrackets, Range: r, Message: fmt.Sprintf(
			"line %d opens bracket %d inside the others: Python refuses more than %d nested brackets (too many nested parentheses)",
			r.Start.Line+1, maxBrackets+1, maxBrackets)}},
	}
}

// tooDeep is the Limit for a subtree at [start, end) cut at maxDepth.
func tooDeep(idx *LineIndex, start int) Limit {
	p := idx.Position(start)
	return Limit{Kind: LimitTooDeep, Range: finding.Range{Start: p, End: finding.Position{Line: p.Line, Character: p.Character + 1}},
		Message: fmt.Sprintf("line %d nests more than %d levels deep: premortem does not analyse inside that expression; the rest of the cell is checked",
			p.Line+1, maxDepth)}
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// bracketOverflow returns the offset of the first bracket nested deeper than maxBrackets
// in Python source src, or -1. Brackets in strings and comments do not count. It runs
// before tree-sitter, in one pass.
func bracketOverflow(src []byte) int {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch b := src[i]; b {
		case '#':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case '\'', '"':
			i = stringEnd(src, i) - 1
		case '(', '[', '{':
			depth++
			if depth > maxBrackets {
				return i
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// stringEnd returns the offset just after the string literal whose opening quote is at
// i (an unterminated one-line string ends at the line's end).
func stringEnd(src []byte, i int) int {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(src) {
		switch c := src[j]; {
		case c == '\\':
			j += 2
			continue
		case c == q && !triple:
			return j + 1
		case c == q && j+2 < len(src) && src[j+1] == q && src[j+2] == q:
			return j + 3
		case (c == '\n' || c == '\r') && !triple:
			return j
		}
		j++
	}
	return len(src)
}

// limitFindings are the findings of a cell's limits: info, except the bracket limit,
// which Python itself refuses (a SyntaxError).
func limitFindings(cellID string, f *CellFacts) []finding.Finding {
	var out []finding.Finding
	for _, l := range f.Limits {
		fd := finding.Finding{Cell: cellID, Source: finding.SourceStatic, Severity: finding.SeverityInfo, Code: finding.NotAnalysed,
			Message: l.Message, Range: l.Range, Evidence: []string{boundEvidence(l.Kind)}}
		if l.Kind == LimitBrackets {
			fd.Severity, fd.Code, fd.Exception, fd.Confidence = finding.SeverityError, finding.SyntaxError, "SyntaxError", 0.95
			fd.Message = "too many nested parentheses: the cell will not run at all"
			fd.Evidence = []string{l.Message}
		}
		out = append(out, fd)
	}
	return out
}

func boundEvidence(k LimitKind) string {
	switch k {
	case LimitTooLarge:
		return fmt.Sprintf("premortem analyses cells up to %s", sizeText(MaxCellBytes))
	case LimitTooDeep:
		return fmt.Sprintf("premortem walks syntax trees up to %d levels deep", maxDepth)
	case LimitNotebook:
		return fmt.Sprintf("premortem analyses the first %s of a notebook's code, in page order", sizeText(MaxNotebookBytes))
	}
	return string(k)
}
