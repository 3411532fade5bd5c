package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// ipynbLocator places cell-relative ranges in the notebook file's own lines and columns.
type ipynbLocator struct {
	raw   []byte
	cells []cellSource // by cell index; nil entries for cells it could not place
}

// newIpynbLocator reads the notebook file again; on any surprise it places nothing.
func newIpynbLocator(rep *judge.Report) *ipynbLocator {
	raw, err := notebook.ReadFile(rep.Notebook)
	if err != nil {
		return &ipynbLocator{}
	}
	cells := locateSources(raw)
	if rep.Source != nil {
		for i := range cells {
			// Only trust the map when the file's text is the text that was judged.
			if i >= len(rep.Source.Cells) || cells[i].text() != rep.Source.Cells[i].Text {
				cells[i] = cellSource{}
			}
		}
	}
	return &ipynbLocator{raw: raw, cells: cells}
}

// region converts a cell-relative range to a region of the notebook file, or nil.
func (l *ipynbLocator) region(cell int, r finding.Range) *sarifRegion {
	if l == nil || cell < 0 || cell >= len(l.cells) || l.cells[cell].parts == nil {
		return nil
	}
	sl, sc, ok1 := l.cells[cell].place(l.raw, r.Start)
	el, ec, ok2 := l.cells[cell].place(l.raw, r.End)
	if !ok1 || !ok2 {
		return nil
	}
	return &sarifRegion{StartLine: sl, StartColumn: sc, EndLine: el, EndColumn: ec}
}

// cellSource is where one cell's source lives in the raw .ipynb: nbformat stores it as a
// string or as a list of strings (usually one per line), each a JSON string token.
type cellSource struct {
	parts []sourcePart
}

// sourcePart is one string of a cell's source: its decoded text and the byte offset of its
// opening quote in the file.
type sourcePart struct {
	text  string
	quote int
}

func (c cellSource) text() string {
	var b strings.Builder
	for _, p := range c.parts {
		b.WriteString(p.text)
	}
	return b.String()
}

// locateSources finds every cell's source strings in a raw notebook, by cell index. It
// returns nil when the file is not the JSON it expects.
func locateSources(raw []byte) []cellSource {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "cells" {
			if skipValue(dec) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		var cells []cellSource
		for dec.More() {
			c, ok := locateCell(dec, raw)
			if !ok {
				return nil
			}
			cells = append(cells, c)
		}
		return cells
	}
	return nil
}

func locateCell(dec *json.Decoder, raw []byte) (cellSource, bool) {
	var c cellSource
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return c, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return c, false
		}
		if key != "source" {
			if skipValue(dec) != nil {
				return c, false
			}
			continue
		}
		t, err := dec.Token()
		if err != nil {
			return c, false
		}
		switch t := t.(type) {
		case string:
			c.parts = append(c.parts, sourcePart{text: t, quote: openingQuote(raw, int(dec.InputOffset()))})
		case json.Delim:
			if t != '[' {
				return c, false
			}
			c.parts = []sourcePart{}
			for dec.More() {
				s, err := dec.Token()
				str, ok := s.(string)
				if err != nil || !ok {
					return c, false
				}
				c.parts = append(c.parts, sourcePart{text: str, quote: openingQuote(raw, int(dec.InputOffset()))})
			}
			if _, err := dec.Token(); err != nil {
				return c, false
			}
		default:
			return c, false
		}
	}
	_, err := dec.Token() // '}'
	return c, err == nil
}

// skipValue consumes one JSON value.
func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// openingQuote finds the quote that opens the string token ending at end.
func openingQuote(raw []byte, end int) int {
	for i := end - 2; i >= 0; i-- {
		if raw[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && raw[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return -1
}

// place returns the 1-based line and UTF-16 column in the file of a cell position.
func (c cellSource) place(raw []byte, p finding.Position) (int, int, bool) {
	text := c.text()
	off, ok := offsetIn(text, p.Line, p.Character)
	if !ok {
		return 0, 0, false
	}
	start := 0
	for i, part := range c.parts {
		end := start + len(part.text)
		if off < end || (off == end && i == len(c.parts)-1) {
			if part.quote < 0 {
				return 0, 0, false
			}
			at, ok := rawOffset(raw, part.quote+1, off-start)
			if !ok {
				return 0, 0, false
			}
			lineStart := bytes.LastIndexByte(raw[:at], '\n') + 1
			line := bytes.Count(raw[:at], []byte{'\n'}) + 1
			return line, analysis.UTF16Len(string(raw[lineStart:at])) + 1, true
		}
		start = end
	}
	return 0, 0, false
}

// rawOffset walks a JSON string's raw bytes from i until want decoded bytes have passed,
// whatever escaping the writer chose, and returns the raw offset reached.
func rawOffset(raw []byte, i, want int) (int, bool) {
	got := 0
	for got < want {
		if i >= len(raw) || raw[i] == '"' {
			return 0, false
		}
		if raw[i] != '\\' {
			got++
			i++
			continue
		}
		if i+1 >= len(raw) {
			return 0, false
		}
		if raw[i+1] != 'u' {
			got++
			i += 2
			continue
		}
		r, n := decodeU(raw[i:])
		if n == 0 {
			return 0, false
		}
		got += utf8.RuneLen(r)
		i += n
	}
	return i, got == want
}

// decodeU decodes \uXXXX (and a following low surrogate) at the start of b.
func decodeU(b []byte) (rune, int) {
	if len(b) < 6 {
		return 0, 0
	}
	v, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	if err != nil {
		return 0, 0
	}
	r := rune(v)
	if utf16.IsSurrogate(r) && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if w, err := strconv.ParseUint(string(b[8:12]), 16, 16); err == nil {
			if d := utf16.DecodeRune(r, rune(w)); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	if utf16.IsSurrogate(r) {
		return utf8.RuneError, 6
	}
	return r, 6
}
