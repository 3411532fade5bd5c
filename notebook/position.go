package notebook

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
	start := 0
	for l := 0; l < line; l++ {
		i := strings.IndexAny(text[start:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the text (it has %d lines)", line, l+1)
		}
		start += i + 1
		if text[start-1] == '\r' && start < len(text) && text[start] == '\n' {
			start++
		}
	}
	off, n := start, 0
	for off < len(text) && n < char16 {
		c := text[off]
		if c == '\n' || c == '\r' {
			break
		}
		if c < utf8.RuneSelf {
			off++
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[off:])
		w := utf16Len(r)
		if n+w > char16 {
			break
		}
		off += size
		n += w
	}
	return off, nil
}

// PositionOf returns the LSP position (0-based line, UTF-16 character) of a byte offset in
// text, the inverse of OffsetOf. An offset outside text clamps to its ends; an offset inside
// a multi-byte character or between "\r" and "\n" counts as that character's start.
func PositionOf(text string, offset int) (line, char16 int) {
	offset = max(0, min(offset, len(text)))
	lineStart := 0
	for i := 0; i < offset; i++ {
		switch text[i] {
		case '\n':
			line++
			lineStart = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				if i+1 == offset {
					// Between "\r" and "\n": still the end of this line.
					return line, utf16Count(text[lineStart:i])
				}
				continue // the "\n" ends the line
			}
			line++
			lineStart = i + 1
		}
	}
	// Round an offset inside a UTF-8 sequence down to the character's start.
	for offset > lineStart && offset < len(text) && !utf8.RuneStart(text[offset]) {
		offset--
	}
	return line, utf16Count(text[lineStart:offset])
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

// utf16Len is the number of UTF-16 code units encoding r; an invalid byte (RuneError)
// counts as one, like the U+FFFD an editor would show for it.
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// utf16Count is the number of UTF-16 code units encoding s.
func utf16Count(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}
