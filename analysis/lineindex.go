package analysis

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// LineIndex converts between byte offsets in a cell's text (what tree-sitter reports) and
// LSP positions (0-based line, UTF-16 code unit column). It is the only place premortem
// makes that conversion. Lines end at "\n", "\r\n" or a lone "\r", as LSP specifies.
type LineIndex struct {
	text  string
	lines []int // byte offset where each line starts
	ascii bool  // no byte >= 0x80: columns equal byte distances
	// For text that is not ASCII, marks[k] is the first rune start at or after byte
	// k*markEvery and units[k] the UTF-16 units of the text before it, so a column costs at
	// most markEvery bytes of counting even on a line megabytes long (pasted data).
	marks, units []int
}

// markEvery is the spacing of LineIndex's UTF-16 checkpoints.
const markEvery = 512

// NewLineIndex indexes text.
func NewLineIndex(text string) *LineIndex {
	x := &LineIndex{text: text, lines: []int{0}, ascii: true}
	for i := 0; i < len(text); i++ {
		switch b := text[i]; {
		case b == '\n':
			x.lines = append(x.lines, i+1)
		case b == '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			x.lines = append(x.lines, i+1)
		case b >= utf8.RuneSelf:
			x.ascii = false
		}
	}
	if !x.ascii && len(text) > markEvery {
		units := 0
		for i, r := range text {
			for i >= len(x.marks)*markEvery {
				x.marks = append(x.marks, i)
				x.units = append(x.units, units)
			}
			units++
			if r >= 0x10000 {
				units++
			}
		}
	}
	return x
}

// unitsBefore returns the UTF-16 units of text[:off], off a rune start.
func (x *LineIndex) unitsBefore(off int) int {
	k := sort.Search(len(x.marks), func(k int) bool { return x.marks[k] > off }) - 1
	if k < 0 {
		return UTF16Len(x.text[:off])
	}
	return x.units[k] + UTF16Len(x.text[x.marks[k]:off])
}

// Lines returns the number of lines (a text ending with a newline has an empty last line).
func (x *LineIndex) Lines() int { return len(x.lines) }

// Position returns the LSP position of byte offset off, clamped to the text. An offset
// inside a multi-byte character maps to the start of that character.
func (x *LineIndex) Position(off int) Position {
	if off < 0 {
		off = 0
	}
	if off > len(x.text) {
		off = len(x.text)
	}
	for off > 0 && off < len(x.text) && !utf8.RuneStart(x.text[off]) {
		off--
	}
	line := sort.Search(len(x.lines), func(i int) bool { return x.lines[i] > off }) - 1
	start := x.lines[line]
	if x.ascii {
		return Position{Line: line, Character: off - start}
	}
	if off-start > markEvery && len(x.marks) > 0 {
		return Position{Line: line, Character: x.unitsBefore(off) - x.unitsBefore(start)}
	}
	return Position{Line: line, Character: UTF16Len(x.text[start:off])}
}

// Range returns the LSP range of the byte span [start, end).
func (x *LineIndex) Range(start, end int) Range {
	return Range{Start: x.Position(start), End: x.Position(end)}
}

// Offset returns the byte offset of p, clamped: a line past the end gives the text's
// length, a character past the end of its line gives the line's end, and a character in
// the middle of a surrogate pair gives the start of that character.
func (x *LineIndex) Offset(p Position) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(x.lines) {
		return len(x.text)
	}
	start := x.lines[p.Line]
	end := x.lineEnd(p.Line)
	if p.Character <= 0 {
		return start
	}
	if x.ascii {
		if start+p.Character > end {
			return end
		}
		return start + p.Character
	}
	units := 0
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(x.text[i:])
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > p.Character {
			return i
		}
		units += n
		i += size
	}
	return end
}

// lineEnd returns the byte offset of the end of line i, before its line terminator.
func (x *LineIndex) lineEnd(i int) int {
	if i+1 >= len(x.lines) {
		return len(x.text)
	}
	end := x.lines[i+1] - 1
	if x.text[end] == '\n' && end > x.lines[i] && x.text[end-1] == '\r' {
		end--
	}
	return end
}

// UTF16Len counts the UTF-16 code units of s, the unit of LSP columns. Invalid bytes count
// as one unit each, as
// editors show them as U+FFFD. Everything that turns text into LSP columns uses it.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// SplitLines splits text into its lines, without their terminators, numbered as
// LineIndex and Python number them: a line ends at "\n", "\r\n" or a lone "\r". A text
// ending with a terminator has an empty last line, as strings.Split gives. Every place that
// turns a line number (a finding's, a traceback's) into the line's text uses it.
func SplitLines(text string) []string {
	out := make([]string, 0, strings.Count(text, "\n")+1)
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out = append(out, text[start:i])
			start = i + 1
		case '\r':
			out = append(out, text[start:i])
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	return append(out, text[start:])
}

// SplitLinesKeep is SplitLines with each line keeping its terminator; the last line,
// when the text does not end with one, has none, and an empty text has no lines.
func SplitLinesKeep(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out = append(out, text[start:i+1])
			start = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
