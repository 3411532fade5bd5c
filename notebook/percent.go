package notebook

import (
	"strconv"
	"strings"
)

// percentCell is how a cell was spelled in a percent-format file, so MarshalPercent can
// write it back the same way.
type percentCell struct {
	// marker is the cell's "# %%" line; "" for the header before the first marker.
	marker string
	// commented is set when the markdown/raw text was read from "# "-commented lines and
	// must be commented again when written.
	commented bool
}

// ParsePercent reads a percent-format Python notebook (the format of VS Code's Python
// interactive window, Spyder and jupytext): a line starting with "# %%" (or "#%%") starts a
// cell, "# %% [markdown]" (or [md]) a markdown cell and "# %% [raw]" a raw cell, whose
// "# "-commented lines become the cell text uncommented. Text before the first marker is a
// code cell too when it is not blank. Blank lines at the end of a cell are dropped (they
// separate cells). Lines may end in "\n", "\r\n" or "\r"; cell text uses "\n".
//
// Each cell's SourceLine is the file line of its first text line (the line after its
// marker), so a position in a code cell maps to the file by adding SourceLine to the line.
// Cell IDs are "cell-<index>". Parsing never fails: any text is a notebook.
func ParsePercent(text, uri string) *Notebook {
	lines, eol := percentLines(text)
	nb := &Notebook{URI: uri, Type: "jupyter-notebook", eol: eol}
	first := len(lines)
	for i, l := range lines {
		if isPercentMarker(l) {
			first = i
			break
		}
	}
	if body := trimBlankTail(lines[:first]); len(body) > 0 {
		nb.Cells = append(nb.Cells, &Cell{Kind: Code, Language: "python", Text: strings.Join(body, "\n"), percent: &percentCell{}})
	}
	for i := first; i < len(lines); {
		end := i + 1
		for end < len(lines) && !isPercentMarker(lines[end]) {
			end++
		}
		c := &Cell{Kind: Code, Language: "python", SourceLine: i + 1, percent: &percentCell{marker: lines[i]}}
		body := trimBlankTail(lines[i+1 : end])
		if lang := markerLanguage(lines[i]); lang != "python" {
			c.Kind, c.Language = Markup, lang
			body, c.percent.commented = uncomment(body)
		}
		c.Text = strings.Join(body, "\n")
		nb.Cells = append(nb.Cells, c)
		i = end
	}
	for i, c := range nb.Cells {
		c.ID = "cell-" + strconv.Itoa(i)
	}
	return nb
}

// MarshalPercent writes the notebook in percent format: each cell after a "# %%" marker
// (its original marker line when the kind is unchanged), markdown and raw cells as
// "# "-commented lines, one blank line between cells, the line ending the file was read
// with. A file ParsePercent read is written back byte for byte when it has exactly one blank
// line between cells, ends in one newline and its markdown is uniformly commented. Cell text
// containing a line that starts with "# %%" reads back as two cells.
func (nb *Notebook) MarshalPercent() []byte {
	eol := nb.eol
	if eol == "" {
		eol = "\n"
	}
	var b strings.Builder
	for i, c := range nb.Cells {
		if i > 0 {
			b.WriteString(eol)
		}
		lang := "python"
		if c.Kind == Markup {
			lang = "markdown"
			if c.Language == "raw" {
				lang = "raw"
			}
		}
		header := i == 0 && c.percent != nil && c.percent.marker == "" && lang == "python"
		if !header {
			switch {
			case c.percent != nil && c.percent.marker != "" && markerLanguage(c.percent.marker) == lang:
				b.WriteString(c.percent.marker)
			case lang == "python":
				b.WriteString("# %%")
			default:
				b.WriteString("# %% [" + lang + "]")
			}
			b.WriteString(eol)
		}
		if c.Text == "" && !header {
			continue
		}
		lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(c.Text, "\r\n", "\n"), "\r", "\n"), "\n")
		// Markdown is commented unless it was read uncommented (as a string, say).
		verbatim := c.percent != nil && c.percent.marker != "" && markerLanguage(c.percent.marker) != "python" && !c.percent.commented
		comment := lang != "python" && !verbatim
		for _, l := range lines {
			if comment {
				if l == "" {
					l = "#"
				} else {
					l = "# " + l
				}
			}
			b.WriteString(l)
			b.WriteString(eol)
		}
	}
	return []byte(b.String())
}

// percentLines splits text into lines at "\n", "\r\n" or "\r" (LSP's line terminators, so
// line numbers agree with an editor's) and returns the first terminator seen.
func percentLines(text string) ([]string, string) {
	var lines []string
	eol := ""
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			break
		}
		n := 1
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			n = 2
		}
		if eol == "" {
			eol = text[i : i+n]
		}
		lines = append(lines, text[:i])
		text = text[i+n:]
	}
	if text != "" {
		lines = append(lines, text)
	}
	return lines, eol
}

// isPercentMarker reports whether line starts a cell: "#", optional blanks, "%%", then the
// end of the line or a blank (so "# %%time" is a comment, not a marker).
func isPercentMarker(line string) bool {
	rest, ok := strings.CutPrefix(line, "#")
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "%%")
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// markerLanguage is the cell language a marker line declares.
func markerLanguage(marker string) string {
	for _, f := range strings.Fields(marker) {
		switch strings.ToLower(f) {
		case "[markdown]", "[md]":
			return "markdown"
		case "[raw]":
			return "raw"
		}
	}
	return "python"
}

// trimBlankTail drops trailing blank lines.
func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// uncomment strips "# " (or "#") from every line when all non-blank lines are comments,
// the way jupytext writes markdown; otherwise (a markdown cell written as a string, say) the
// lines are kept as they are.
func uncomment(lines []string) ([]string, bool) {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			return lines, false
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "# "); ok {
			out[i] = rest
		} else {
			out[i] = strings.TrimPrefix(l, "#")
		}
	}
	return out, true
}
