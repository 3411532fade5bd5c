package notebook

import (
	"strings"
	"testing"
)

func TestOffsetOf(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		line, char int
		want       int
		wantErr    string
	}{
		{name: "start", text: "abc", want: 0},
		{name: "ascii middle", text: "abc", char: 2, want: 2},
		{name: "end of last line", text: "abc", char: 3, want: 3},
		{name: "past line end clamps", text: "abc\ndef", char: 9, want: 3},
		{name: "past last line end clamps", text: "abc\ndef", line: 1, char: 9, want: 7},
		{name: "second line", text: "abc\ndef", line: 1, char: 1, want: 5},
		{name: "empty text", text: "", want: 0},
		{name: "empty line after final newline", text: "a\n", line: 1, want: 2},
		{name: "line past end", text: "a\n", line: 2, wantErr: "line 2 is past the end of the text (it has 2 lines)"},
		{name: "line past end of empty text", text: "", line: 1, wantErr: "line 1 is past the end"},
		{name: "negative line", text: "a", line: -1, wantErr: "negative"},
		{name: "negative char", text: "a", char: -1, wantErr: "negative"},
		// 😀 is U+1F600: 4 bytes, 2 UTF-16 units.
		{name: "after emoji", text: "😀x", char: 2, want: 4},
		{name: "inside emoji snaps back", text: "😀x", char: 1, want: 0},
		{name: "after emoji and x", text: "😀x", char: 3, want: 5},
		{name: "two emoji", text: "a😀😀b", char: 5, want: 9},
		// 数 is 3 bytes, 1 UTF-16 unit.
		{name: "after CJK", text: "数据x", char: 2, want: 6},
		{name: "é two bytes", text: "éa", char: 1, want: 2},
		{name: "CRLF second line", text: "ab\r\ncd", line: 1, char: 1, want: 5},
		{name: "CRLF clamps before CR", text: "ab\r\ncd", char: 5, want: 2},
		{name: "CR alone ends a line", text: "ab\rcd", line: 1, char: 1, want: 4},
		{name: "LF CR is two lines", text: "a\n\rb", line: 2, char: 1, want: 4},
		{name: "CR CR LF", text: "a\r\r\nb", line: 2, want: 4},
		{name: "CRLF counted once", text: "a\r\nb", line: 2, wantErr: "past the end"},
		{name: "invalid UTF-8 byte is one unit", text: "\xffab", char: 2, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OffsetOf(tt.text, tt.line, tt.char)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("OffsetOf(%q, %d, %d) error = %v, want %q", tt.text, tt.line, tt.char, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("OffsetOf(%q, %d, %d) = %d, %v, want %d", tt.text, tt.line, tt.char, got, err, tt.want)
			}
		})
	}
}

func TestPositionOf(t *testing.T) {
	tests := []struct {
		text             string
		offset           int
		wantLine, wantCh int
	}{
		{"abc", 0, 0, 0},
		{"abc", 3, 0, 3},
		{"abc", 99, 0, 3},
		{"abc", -4, 0, 0},
		{"a\nb", 2, 1, 0},
		{"😀x", 4, 0, 2},
		{"😀x", 2, 0, 0}, // inside the emoji: its start
		{"x😀", 5, 0, 3},
		{"数据\n数", 7, 1, 0},
		{"数据\n数", 10, 1, 1},
		{"ab\r\ncd", 3, 0, 2}, // between CR and LF: end of line 0
		{"ab\r\ncd", 4, 1, 0},
		{"ab\rcd", 3, 1, 0},
	}
	for _, tt := range tests {
		l, c := PositionOf(tt.text, tt.offset)
		if l != tt.wantLine || c != tt.wantCh {
			t.Errorf("PositionOf(%q, %d) = %d:%d, want %d:%d", tt.text, tt.offset, l, c, tt.wantLine, tt.wantCh)
		}
	}
}

// TestPositionRoundTrip checks OffsetOf(PositionOf(o)) == o at every character boundary.
func TestPositionRoundTrip(t *testing.T) {
	for _, text := range []string{"", "abc\ndef\n", "a😀b\r\n数据\rz", "\n\n\r\n", "x🇫🇷y\r\n"} {
		for off := 0; off <= len(text); off++ {
			if off < len(text) && (text[off]&0xC0 == 0x80 || (off > 0 && text[off-1] == '\r' && text[off] == '\n')) {
				continue // not a position boundary
			}
			l, c := PositionOf(text, off)
			got, err := OffsetOf(text, l, c)
			if err != nil || got != off {
				t.Errorf("%q: offset %d -> %d:%d -> %d, %v", text, off, l, c, got, err)
			}
		}
	}
}

func TestApplyEdits(t *testing.T) {
	ranged := func(sl, sc, el, ec int, text string) TextEdit {
		return TextEdit{StartLine: sl, StartChar: sc, EndLine: el, EndChar: ec, Text: text}
	}
	tests := []struct {
		name    string
		text    string
		edits   []TextEdit
		want    string
		wantErr string
	}{
		{name: "no edits", text: "abc", want: "abc"},
		{name: "insert", text: "df.mean()", edits: []TextEdit{ranged(0, 2, 0, 2, "[0]")}, want: "df[0].mean()"},
		{name: "replace across lines", text: "a = 1\nb = 2\nc = 3", edits: []TextEdit{ranged(0, 4, 2, 1, "9\nz")}, want: "a = 9\nz = 3"},
		{name: "delete line", text: "a\nb\nc", edits: []TextEdit{ranged(1, 0, 2, 0, "")}, want: "a\nc"},
		{name: "sequential edits see earlier ones", text: "x", edits: []TextEdit{ranged(0, 1, 0, 1, "y"), ranged(0, 2, 0, 2, "z")}, want: "xyz"},
		{name: "full then ranged", text: "old", edits: []TextEdit{{Full: true, Text: "new\ntext"}, ranged(1, 0, 1, 4, "TEXT")}, want: "new\nTEXT"},
		{name: "type after emoji", text: "s = \"😀\"", edits: []TextEdit{ranged(0, 7, 0, 7, "!")}, want: "s = \"😀!\""},
		{name: "replace emoji", text: "a😀b", edits: []TextEdit{ranged(0, 1, 0, 3, "🎉")}, want: "a🎉b"},
		{name: "end inside emoji keeps it", text: "a😀b", edits: []TextEdit{ranged(0, 0, 0, 2, "")}, want: "😀b"},
		{name: "CJK", text: "名前 = 1\nprint(名前)", edits: []TextEdit{ranged(1, 6, 1, 8, "姓名")}, want: "名前 = 1\nprint(姓名)"},
		{name: "emoji on an earlier line", text: "# 🚢🚢\nx = 1", edits: []TextEdit{ranged(1, 4, 1, 5, "2")}, want: "# 🚢🚢\nx = 2"},
		{name: "CRLF", text: "a = 1\r\nb = 2\r\n", edits: []TextEdit{ranged(1, 4, 1, 5, "3")}, want: "a = 1\r\nb = 3\r\n"},
		{name: "CRLF join lines", text: "a\r\nb", edits: []TextEdit{ranged(0, 1, 1, 0, " ")}, want: "a b"},
		{name: "CR only", text: "a\rb", edits: []TextEdit{ranged(1, 0, 1, 1, "c")}, want: "a\rc"},
		{name: "clamped end", text: "ab\ncd", edits: []TextEdit{ranged(0, 1, 0, 99, "X")}, want: "aX\ncd"},
		{name: "append at end after newline", text: "a\n", edits: []TextEdit{ranged(1, 0, 1, 0, "b")}, want: "a\nb"},
		{name: "line past end", text: "a\nb", edits: []TextEdit{ranged(5, 0, 5, 0, "x")}, wantErr: "edit 0: range start: line 5 is past the end"},
		{name: "end line past end", text: "a\nb", edits: []TextEdit{ranged(0, 0, 2, 0, "x")}, wantErr: "edit 0: range end: line 2"},
		{name: "second edit fails", text: "a", edits: []TextEdit{ranged(0, 0, 0, 0, "x"), ranged(3, 0, 3, 0, "y")}, wantErr: "edit 1:"},
		{name: "start after end", text: "abc", edits: []TextEdit{ranged(0, 2, 0, 1, "x")}, wantErr: "range start 0:2 is after its end 0:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyEdits(tt.text, tt.edits)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if got != tt.text {
					t.Fatalf("on error got %q, want the text unchanged", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ApplyEdits = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}
