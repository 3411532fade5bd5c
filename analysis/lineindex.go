package analysis

import (
	"strings"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// LineIndex converts between byte offsets in a cell's text (what tree-sitter reports) and
// LSP positions, in the analysis's own Position and Range. It is notebook.LineIndex, the one
// mapper, seen through those types.
type LineIndex struct{ x *notebook.LineIndex }

// NewLineIndex indexes text.
func NewLineIndex(text string) *LineIndex { return &LineIndex{notebook.NewLineIndex(text)} }

// Lines returns the number of lines (a text ending with a newline has an empty last line).
func (x *LineIndex) Lines() int { return x.x.Lines() }

// Position returns the LSP position of byte offset off, clamped to the text. An offset
// inside a multi-byte character maps to the start of that character.
func (x *LineIndex) Position(off int) finding.Position {
	l, c := x.x.Position(off)
	return finding.Position{Line: l, Character: c}
}

// Range returns the LSP range of the byte span [start, end).
func (x *LineIndex) Range(start, end int) finding.Range {
	return finding.Range{Start: x.Position(start), End: x.Position(end)}
}

// Offset returns the byte offset of p, clamped: a line past the end gives the text's
// length, a character past the end of its line gives the line's end, and a character in
// the middle of a surrogate pair gives the start of that character.
func (x *LineIndex) Offset(p finding.Position) int { return x.x.Offset(p.Line, p.Character) }

// UTF16Len counts the UTF-16 code units of s, the unit of LSP columns (notebook.UTF16Len).
func UTF16Len(s string) int { return notebook.UTF16Len(s) }

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
