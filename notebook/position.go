package notebook

import (
	"fmt"
)

// OffsetOf returns the byte offset in text of the LSP position (line, char16): line is
// 0-based and char16 counts UTF-16 code units, as LSP's default position encoding does.
//
// Lines end at "\n", "\r\n" or "\r" (LSP 3.17). A character past the end of its line
// clamps to the line end, before the terminator, as LSP specifies; a character that falls
// inside a surrogate pair (the second half of an emoji) snaps back to the start of that
// character, so an edit never splits one. A negative position or a line past the last line
// is an error.
func OffsetOf(text string, line, char16 int) (int, error) {
	if line < 0 || char16 < 0 {
		return 0, fmt.Errorf("position %d:%d is negative", line, char16)
	}
	x := NewLineIndex(text)
	if line >= x.Lines() {
		return 0, fmt.Errorf("line %d is past the end of the text (it has %d lines)", line, x.Lines())
	}
	return x.Offset(line, char16), nil
}

// PositionOf returns the LSP position (0-based line, UTF-16 character) of a byte offset in
// text, the inverse of OffsetOf. An offset outside text clamps to its ends; an offset inside
// a multi-byte character or between "\r" and "\n" counts as that character's start.
func PositionOf(text string, offset int) (line, char16 int) {
	return NewLineIndex(text).Position(offset)
}

// ApplyEdits applies LSP content changes to text in order: each ranged edit's positions
// refer to the text as left by the edits before it, as TextDocumentContentChangeEvent
// arrays do. Positions follow OffsetOf (a character past the line end clamps; a line past
// the end is an error); a range whose start is after its end is an error. On error text is
// returned unchanged.
func ApplyEdits(text string, edits []TextEdit) (string, error) {
	orig := text
	for i, e := range edits {
		if e.Full {
			text = e.Text
			continue
		}
		start, err := OffsetOf(text, e.StartLine, e.StartChar)
		if err != nil {
			return orig, fmt.Errorf("edit %d: range start: %w", i, err)
		}
		end, err := OffsetOf(text, e.EndLine, e.EndChar)
		if err != nil {
			return orig, fmt.Errorf("edit %d: range end: %w", i, err)
		}
		if start > end {
			return orig, fmt.Errorf("edit %d: range start %d:%d is after its end %d:%d", i, e.StartLine, e.StartChar, e.EndLine, e.EndChar)
		}
		text = text[:start] + e.Text + text[end:]
	}
	return text, nil
}
