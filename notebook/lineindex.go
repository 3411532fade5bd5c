package notebook

import (
	"sort"
	"unicode/utf8"
)

// LineIndex converts between byte offsets in a text and LSP positions (0-based line,
// UTF-16 code unit column). It is the only place premortem makes that conversion: the
// analysis's syntax-tree ranges, the editor's edits, the check reports' columns and the
// repair edits all go through it. Lines end at "\n", "\r\n" or a lone "\r", as LSP 3.17 and
// Python number them.
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
			units += utf16Len(r)
		}
	}
	return x
}

// Lines returns the number of lines (a text ending with a line terminator has an empty
// last line).
func (x *LineIndex) Lines() int { return len(x.lines) }

// Position returns the line and UTF-16 column of byte offset off, clamped to the text. An
// offset inside a multi-byte character maps to the start of that character, one between
// "\r" and "\n" to the end of its line.
func (x *LineIndex) Position(off int) (line, char16 int) {
	off = max(0, min(off, len(x.text)))
	for off > 0 && off < len(x.text) && !utf8.RuneStart(x.text[off]) {
		off--
	}
	if off > 0 && off < len(x.text) && x.text[off-1] == '\r' && x.text[off] == '\n' {
		off--
	}
	line = sort.Search(len(x.lines), func(i int) bool { return x.lines[i] > off }) - 1
	start := x.lines[line]
	switch {
	case x.ascii:
		return line, off - start
	case off-start > markEvery && len(x.marks) > 0:
		return line, x.unitsBefore(off) - x.unitsBefore(start)
	}
	return line, UTF16Len(x.text[start:off])
}

// Offset returns the byte offset of a line and UTF-16 column, clamped: a line past the
// end gives the text's length, a column past the end of its line gives the line's end
// (before its terminator, as LSP specifies), and a column in the middle of a surrogate
// pair gives the start of that character, so an edit never splits one.
func (x *LineIndex) Offset(line, char16 int) int {
	if line < 0 {
		return 0
	}
	if line >= len(x.lines) {
		return len(x.text)
	}
	start, end := x.lines[line], x.LineEnd(line)
	if char16 <= 0 {
		return start
	}
	if x.ascii {
		return min(start+char16, end)
	}
	units := 0
	for i := start; i < end; {
		if x.text[i] < utf8.RuneSelf {
			if units+1 > char16 {
				return i
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(x.text[i:])
		n := utf16Len(r)
		if units+n > char16 {
			return i
		}
		units += n
		i += size
	}
	return end
}

// Len returns the byte length of the indexed text.
func (x *LineIndex) Len() int { return len(x.text) }

// LineStart returns the byte offset where line i starts (the text's length past the end).
func (x *LineIndex) LineStart(i int) int {
	if i >= len(x.lines) {
		return len(x.text)
	}
	return x.lines[max(i, 0)]
}

// LineEnd returns the byte offset of the end of line i, before its line terminator.
func (x *LineIndex) LineEnd(i int) int {
	if i+1 >= len(x.lines) {
		return len(x.text)
	}
	end := x.lines[i+1] - 1
	if x.text[end] == '\n' && end > x.lines[i] && x.text[end-1] == '\r' {
		end--
	}
	return end
}

// unitsBefore returns the UTF-16 units of text[:off], off a rune start.
func (x *LineIndex) unitsBefore(off int) int {
	k := sort.Search(len(x.marks), func(k int) bool { return x.marks[k] > off }) - 1
	if k < 0 {
		return UTF16Len(x.text[:off])
	}
	return x.units[k] + UTF16Len(x.text[x.marks[k]:off])
}

// UTF16Len counts the UTF-16 code units of s, the unit of LSP columns. An invalid byte
// counts as one unit, as editors show it as U+FFFD.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}

// SliceUTF16 returns s between two UTF-16 columns of its first line, clamped as Offset
// clamps them.
func SliceUTF16(s string, from, to int) string {
	x := NewLineIndex(s)
	a, b := x.Offset(0, from), x.Offset(0, to)
	if a >= b {
		return ""
	}
	return s[a:b]
}

// utf16Len is the number of UTF-16 code units encoding r; an invalid byte (RuneError)
// counts as one.
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
