package notebook

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"unicode/utf16"
)

// FuzzParseIpynb: any input parses or gives an error, never a panic; what parses writes
// back, reads again to the same cells, and writes again to the same bytes.
func FuzzParseIpynb(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(fixtures, "*.ipynb"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "{", "[]", "null", `{"nbformat": 4, "cells": []}`, `{"nbformat": 3}`,
		nbJSON(`{"cell_type": "code", "source": ["a\n", "b"], "execution_count": 1, "outputs": [{"output_type": "error"}]}`),
		nbJSON(`{"cell_type": "markdown", "source": "x", "outputs": [], "execution_count": 2, "attachments": {}}`),
		nbJSON(`{"cell_type": "raw", "source": 1}`),
		`{"nbformat": 4, "nbformat_minor": 5, "cells": [{"cell_type": "code", "source": "", "id": "x"}, {"cell_type": "code", "source": "\u2028\ud800"}]}`,
		`{"nbformat": 4, "cells": [], "metadata": {"n": -0.0e-0, "u": "\u0000<>&"}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := ParseIpynb(data, "f.ipynb")
		if err != nil {
			if nb != nil || err.Error() == "" {
				t.Fatalf("error %v with notebook %v", err, nb)
			}
			return
		}
		out, err := nb.MarshalIpynb()
		if err != nil {
			t.Fatalf("parsed but does not write: %v", err)
		}
		again, err := ParseIpynb(out, "f.ipynb")
		if err != nil {
			t.Fatalf("written notebook does not parse: %v\n%s", err, out)
		}
		if got, want := describe(again), describe(nb); !reflect.DeepEqual(got, want) {
			t.Fatalf("cells changed by a round trip:\n%q\nwant\n%q", got, want)
		}
		out2, err := again.MarshalIpynb()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("second write differs (%v):\n%s\n---\n%s", err, out, out2)
		}
	})
}

// FuzzApply drives Apply with generated changes, valid and not, and checks it against a
// simple model: a refused change leaves the notebook exactly as it was; an accepted one
// gives the spliced ID list, keeps the text of every cell that was not (re)opened, and
// edits text exactly as an independent UTF-16 implementation does.
func FuzzApply(f *testing.F) {
	// Seeds, spelled out with changeGen's layout; the notebook starts as A B C D.
	f.Add([]byte{1, 0, 4, 4, 0, 3, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0}, "x")    // move D to the front
	f.Add([]byte{4, 3, 2, 0, 1, 0, 6, 0, 6, 0, 4}, "😀")                                           // type an emoji in D
	f.Add([]byte{4, 1, 2, 0, 1, 0, 3, 1, 1, 0, 8}, "数据\r\n")                                      // replace across B's CRLF
	f.Add([]byte{1, 0, 0, 1, 1, 1, 0, 8}, "new cell")                                             // insert at the start
	f.Add([]byte{1, 0, 1, 0, 1}, "")                                                              // delete the top cell
	f.Add([]byte{1, 3, 1, 1, 0, 3, 1, 3, 1}, "")                                                  // language change of D
	f.Add([]byte{2, 3, 1, 0, 5, 0, 0, 2, 3, 1, 1}, "")                                            // summary arrives, then clears
	f.Add([]byte{4, 0, 2, 1, 1, 0, 30, 0, 30, 0, 1, 1, 9, 0, 9, 0, 0, 0}, "\r")                   // clamp, then line past end
	f.Add([]byte{7, 1, 0, 1, 1, 1, 0, 3, 4, 1, 0, 3, 0, 1, 4, 2, 0, 1, 0, 1, 0, 1, 0, 2}, "🚢\nx") // structure, data, text at once
	f.Add([]byte{1, 5, 0, 0, 2, 0, 2, 0, 0, 0, 4, 0xff, 0, 0, 1, 0, 0, 0, 0, 0, 0}, "")           // refused: bad splice, bad kind, duplicate cell
	f.Fuzz(func(t *testing.T, prog []byte, text string) {
		nb := openABCD(t)
		nb.Cells[1].Text = "a😀b\r\ncd\re数据\n"
		g := &changeGen{prog: prog, text: text}
		for step := 0; step < 16 && g.more(); step++ {
			ch := g.change(nb)
			before := nb.Clone()
			oldCells := slices.Clone(nb.Cells)
			err := nb.Apply(ch)
			if err != nil {
				if !reflect.DeepEqual(nb, before) || !slices.Equal(nb.Cells, oldCells) {
					t.Fatalf("step %d: refused change (%v) modified the notebook", step, err)
				}
				continue
			}
			checkApplied(t, before, ch, nb)
		}
	})
}

// checkApplied compares the notebook after an accepted change with the model.
func checkApplied(t *testing.T, before *Notebook, ch Change, nb *Notebook) {
	t.Helper()
	wantIDs := ids(before.Cells)
	wantText := map[string]string{}
	for _, c := range before.Cells {
		wantText[c.ID] = c.Text
	}
	if s := ch.Structure; s != nil {
		var added []string
		for _, d := range s.Cells {
			added = append(added, d.ID)
		}
		wantIDs = slices.Concat(wantIDs[:s.Start], added, wantIDs[s.Start+s.DeleteCount:])
		for _, o := range s.Opened {
			wantText[o.ID] = o.Text
		}
	}
	if got := ids(nb.Cells); !slices.Equal(got, wantIDs) {
		t.Fatalf("cell IDs %q, want %q", got, wantIDs)
	}
	for _, tc := range ch.Text {
		text := wantText[tc.ID]
		for _, e := range tc.Edits {
			var ok bool
			if text, ok = refApply(text, e); !ok {
				t.Fatalf("Apply accepted edit %+v the model refuses", e)
			}
		}
		wantText[tc.ID] = text
	}
	seen := map[string]bool{}
	for _, c := range nb.Cells {
		if c == nil || c.ID == "" || seen[c.ID] || (c.Kind != Code && c.Kind != Markup) || c.ExecutionOrder < 0 {
			t.Fatalf("inconsistent cell %+v", c)
		}
		seen[c.ID] = true
		if c.Text != wantText[c.ID] {
			t.Fatalf("cell %s text %q, want %q", c.ID, c.Text, wantText[c.ID])
		}
	}
}

var lineBreak = regexp.MustCompile(`\r\n|\r|\n`)

// refApply applies one edit the slow, obvious way: split lines with a regexp, count UTF-16
// units with package utf16.
func refApply(text string, e TextEdit) (string, bool) {
	if e.Full {
		return e.Text, true
	}
	s, ok1 := refOffset(text, e.StartLine, e.StartChar)
	end, ok2 := refOffset(text, e.EndLine, e.EndChar)
	if !ok1 || !ok2 || s > end {
		return text, false
	}
	return text[:s] + e.Text + text[end:], true
}

func refOffset(text string, line, char int) (int, bool) {
	breaks := lineBreak.FindAllStringIndex(text, -1)
	if line < 0 || char < 0 || line > len(breaks) {
		return 0, false
	}
	start, end := 0, len(text)
	if line > 0 {
		start = breaks[line-1][1]
	}
	if line < len(breaks) {
		end = breaks[line][0]
	}
	units := 0
	for i, r := range text[start:end] {
		n := len(utf16.Encode([]rune{r}))
		if units+n > char {
			return start + i, true
		}
		units += n
	}
	return end, true
}

// changeGen turns fuzz bytes into notebook changes, mostly plausible ones.
type changeGen struct {
	prog  []byte
	text  string
	fresh int
}

func (g *changeGen) more() bool { return len(g.prog) > 0 }

func (g *changeGen) next() int {
	if len(g.prog) == 0 {
		return 0
	}
	b := g.prog[0]
	g.prog = g.prog[1:]
	return int(b)
}

// snippet is a piece of the fuzz text.
func (g *changeGen) snippet() string {
	if g.text == "" {
		return ""
	}
	i := g.next() % len(g.text)
	j := i + g.next()%(len(g.text)-i+1)
	return g.text[i:j]
}

func (g *changeGen) pick(nb *Notebook) string {
	n := g.next()
	if len(nb.Cells) == 0 || n == 0xff {
		return "unknown-cell"
	}
	return nb.Cells[n%len(nb.Cells)].ID
}

// change reads one change. Byte layout (each field one byte, missing bytes read as 0):
//
//	op: bit 0 structure, 1 data, 2 text, 3 version, 4 metadata
//	structure: start, deleteCount, count, then per cell: sel (even: an existing cell, then
//	  pick, kind, reopen; odd: a new cell, then opened, snippet), then per deleted cell: close
//	data: pick, kind, summary, order, hasSuccess, success
//	text: pick, version, count, then per edit: full (0 mod 6), then either a snippet or
//	  startLine, startChar, endLine, endChar, snippet
//	version: version; metadata: value
func (g *changeGen) change(nb *Notebook) Change {
	var ch Change
	op := g.next()
	if op&1 != 0 {
		s := &StructureChange{Start: g.next() % (len(nb.Cells) + 2), DeleteCount: g.next() % (len(nb.Cells) + 2)}
		for range g.next() % 5 {
			if g.next()%2 == 0 {
				id := g.pick(nb)
				s.Cells = append(s.Cells, CellData{ID: id, Kind: Kind(1 + g.next()%2)})
				if g.next()%4 == 3 { // language change: close and reopen
					s.Opened = append(s.Opened, OpenedCell{ID: id, Language: "sql", Version: 1, Text: "SELECT 1"})
					s.Closed = append(s.Closed, id)
				}
				continue
			}
			g.fresh++
			id := "new-" + strconv.Itoa(g.fresh)
			s.Cells = append(s.Cells, CellData{ID: id, Kind: Code})
			if g.next()%8 != 7 {
				s.Opened = append(s.Opened, OpenedCell{ID: id, Language: "python", Version: 1, Text: g.snippet()})
			}
		}
		if s.Start < len(nb.Cells) {
			for _, c := range nb.Cells[s.Start:min(len(nb.Cells), s.Start+s.DeleteCount)] {
				if g.next()%4 != 0 {
					s.Closed = append(s.Closed, c.ID)
				}
			}
		}
		ch.Structure = s
	}
	if op&2 != 0 {
		d := CellData{ID: g.pick(nb), Kind: Kind(1 + g.next()%3), HasSummary: g.next()%2 == 0, ExecutionOrder: g.next() % 64}
		if d.ExecutionOrder == 63 {
			d.ExecutionOrder = -1
		}
		if g.next()%2 == 0 {
			d.Success = boolp(g.next()%2 == 0)
		}
		ch.Data = append(ch.Data, d)
	}
	if op&4 != 0 {
		tc := TextChange{ID: g.pick(nb), Version: g.next()}
		for range 1 + g.next()%3 {
			if g.next()%6 == 0 {
				tc.Edits = append(tc.Edits, TextEdit{Full: true, Text: g.snippet()})
				continue
			}
			tc.Edits = append(tc.Edits, TextEdit{
				StartLine: g.next() % 5, StartChar: g.next() % 12,
				EndLine: g.next() % 5, EndChar: g.next() % 12,
				Text: g.snippet(),
			})
		}
		ch.Text = append(ch.Text, tc)
	}
	if op&8 != 0 {
		ch.Version = g.next()
	}
	if op&16 != 0 {
		ch.Metadata = map[string]any{"step": g.next()}
	}
	return ch
}
