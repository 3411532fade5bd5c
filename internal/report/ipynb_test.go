package report

import (
	"testing"

	"github.com/premortem/premortem/finding"
)

// TestLocateSources places cell positions in the raw .ipynb, whatever the writer's escaping
// and whether a source is a list of lines or one string.
func TestLocateSources(t *testing.T) {
	raw := []byte(`{
 "metadata": {"x": [1, {"source": "not a cell"}]},
 "cells": [
  {"cell_type": "markdown", "source": "# title"},
  {
   "cell_type": "code",
   "source": [
    "df = load(\"data.csv\")\n",
    "m = df[\"age\"].mean()"
   ]
  },
  {"cell_type": "code", "source": "s = \"\u00e9t\u00e9\"\nprint(s[\"k\"])", "outputs": []},
  {"cell_type": "code", "source": ["x = \"😀\"; d[\"k\"]"]}
 ]
}`)
	cells := locateSources(raw)
	if len(cells) != 4 {
		t.Fatalf("got %d cells, want 4", len(cells))
	}
	if got := cells[1].text(); got != "df = load(\"data.csv\")\nm = df[\"age\"].mean()" {
		t.Errorf("cell 1 text %q", got)
	}
	tests := []struct {
		cell           int
		line, char     int // cell position, 0-based, UTF-16
		wantL, wantCol int // file position, 1-based, UTF-16
	}{
		{1, 0, 0, 8, 6},
		{1, 1, 7, 9, 13},   // the quote before age, after `m = df[` escaped as \"
		{1, 1, 12, 9, 20},  // the ] after "age" and its escaped quotes
		{2, 1, 8, 12, 67},  // second line of a one-string source, after \u00e9 escapes
		{3, 0, 4, 13, 41},  // the escaped quote before the emoji
		{3, 0, 11, 13, 50}, // the [ after `"😀"; d`: the emoji is two UTF-16 units in cell and file alike
	}
	for _, tt := range tests {
		l, c, ok := cells[tt.cell].place(raw, finding.Position{Line: tt.line, Character: tt.char})
		if !ok || l != tt.wantL || c != tt.wantCol {
			t.Errorf("cell %d %d:%d -> %d:%d (%v), want %d:%d", tt.cell, tt.line, tt.char, l, c, ok, tt.wantL, tt.wantCol)
		}
	}
	if _, _, ok := cells[1].place(raw, finding.Position{Line: 5, Character: 0}); ok {
		t.Error("a line past the cell was placed")
	}
	if locateSources([]byte(`[1, 2]`)) != nil || locateSources([]byte(`{"cells": 3}`)) != nil {
		t.Error("non-notebooks were placed")
	}
}
