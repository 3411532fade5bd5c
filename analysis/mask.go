package analysis

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// masked is a cell's text with IPython syntax blanked out so tree-sitter sees plain Python.
// Byte offsets and newlines are unchanged, so every range computed on the masked text is a
// range of the original text.
type masked struct {
	src     []byte
	regions []span // masked byte spans; statements starting inside one are filler
	maxEnd  []int  // running maximum of regions' ends, built by index
	magics  []rawMagic
	// pythonBody is false when the whole cell body is not Python (%%bash, %%html, ...).
	pythonBody bool
	// noDefs is true for cells whose bindings do not reach the user namespace (%%timeit).
	noDefs bool
	// bad holds the offsets of NUL bytes and invalid UTF-8 bytes (blanked).
	bad []int
}

type span struct{ start, end int }

// rawMagic is a Magic before its range is converted to a Position.
type rawMagic struct {
	kind       MagicKind
	name       string
	start, end int // the whole original line
	pythonBody bool
}

// pythonCellMagics run their body as Python in the user namespace.
var pythonCellMagics = map[string]bool{
	"time": true, "timeit": true, "capture": true, "prun": true, "debug": true,
	"memit": true, "snakeviz": true, "pyinstrument": true, "scalene": true,
}

// payloadLineMagics take a Python statement after their options (%time x = f()).
var payloadLineMagics = map[string]bool{"time": true, "timeit": true, "prun": true, "memit": true}

// maskCell masks magics, shell escapes and help syntax in text.
func maskCell(text string) *masked {
	m := &masked{src: []byte(text), pythonBody: true}
	// Python refuses NUL bytes and invalid UTF-8. tree-sitter reads NUL as the end of
	// input, and random invalid bytes have been seen to send it into a loop: blank them
	// (offsets unchanged) and report each as a syntax error.
	//
	// Python ends a line at "\n", "\r\n" or a lone "\r"; tree-sitter's grammar knows only
	// the first two, so a lone "\r" becomes "\n" (one byte for one: offsets, and the line
	// numbers LineIndex gives them, are unchanged).
	for i := 0; i < len(m.src); {
		r, size := utf8.DecodeRune(m.src[i:])
		switch {
		case r == 0 || r == utf8.RuneError && size == 1:
			m.src[i] = ' '
			m.bad = append(m.bad, i)
		case r == '\r' && (i+1 == len(m.src) || m.src[i+1] != '\n'):
			m.src[i] = '\n'
		}
		i += size
	}
	starts := logicalLineStarts(text)
	// A cell magic must be the first non-blank line (IPython drops leading empty lines).
	first := 0
	for first < len(starts) && isBlank(text, starts[first]) {
		first++
	}
	if first < len(starts) {
		ls := starts[first]
		ind := indentEnd(text, ls)
		if strings.HasPrefix(text[ind:], "%%") {
			le := lineEnd(text, ls)
			name := magicName(text[ind+2 : le])
			py := pythonCellMagics[name]
			m.magics = append(m.magics, rawMagic{kind: MagicCell, name: name, start: ind, end: le, pythonBody: py})
			m.fill(ind, le)
			if !py {
				m.pythonBody = false
				m.blank(le, len(text))
				return m
			}
			m.noDefs = name == "timeit"
			starts = starts[first+1:]
		}
	}
	for _, ls := range starts {
		m.maskLine(text, ls)
	}
	return m
}

// maskLine masks the IPython construct starting the logical line at ls, if any.
func (m *masked) maskLine(text string, ls int) {
	ind := indentEnd(text, ls)
	le := logicalEnd(text, ls)
	if ind >= le {
		return
	}
	line := text[ind:le]
	switch {
	case line[0] == '%':
		body := strings.TrimLeft(line, "%")
		name := magicName(body)
		m.magics = append(m.magics, rawMagic{kind: MagicLine, name: name, start: ind, end: le})
		if payloadLineMagics[name] {
			if off := payloadOffset(body[len(name):]); off >= 0 {
				cut := ind + (len(line) - len(body)) + len(name) + off
				if cut < le && cut-ind >= len("pass;") {
					m.fill(ind, cut)
					copy(m.src[ind:], "pass;")
					return
				}
			}
		}
		m.fill(ind, le)
	case line[0] == '!':
		m.magics = append(m.magics, rawMagic{kind: MagicShell, name: magicName(strings.TrimLeft(line, "!")), start: ind, end: le})
		m.fill(ind, le)
	case line[0] == '?' || hasHelpMark(line):
		name := strings.Trim(strings.TrimSpace(stripComment(line)), "?")
		name = strings.TrimPrefix(name, "%")
		m.magics = append(m.magics, rawMagic{kind: MagicHelp, name: name, start: ind, end: le})
		m.fill(ind, le)
	default:
		// x = !ls, x = %sx ls: IPython assigns the command's output.
		eq := assignFromEscape(line)
		if eq < 0 {
			return
		}
		at := ind + eq
		kind, name := MagicShell, magicName(strings.TrimLeft(text[at:le], "!%"))
		if text[at] == '%' {
			kind = MagicLine
		}
		m.magics = append(m.magics, rawMagic{kind: kind, name: name, start: ind, end: le})
		m.fill(at, le)
	}
}

// fill masks [start, end): "pass" when the span is wide enough to hold a statement,
// otherwise "0", then spaces; newlines inside the span (continuations) are kept.
func (m *masked) fill(start, end int) {
	m.blank(start, end)
	filler := "0"
	if lineEndBytes(m.src, start) >= start+4 {
		filler = "pass"
	}
	copy(m.src[start:], filler)
	m.regions = append(m.regions, span{start, end})
}

// blank replaces every byte but newlines in [start, end) with a space.
func (m *masked) blank(start, end int) {
	for i := start; i < end && i < len(m.src); i++ {
		if m.src[i] != '\n' && m.src[i] != '\r' {
			m.src[i] = ' '
		}
	}
	// Continuation backslashes were blanked too: keep the lines independent statements.
	if start < end {
		m.regions = append(m.regions, span{start, end})
	}
}

// inMask reports whether byte offset off is inside a masked span.
func (m *masked) inMask(off int) bool { return m.spanEnd(off) > off }

// spanEnd returns the end of the masked spans containing off (the furthest one), or off
// when none does. It is called for every expression node, so it searches (regions are in
// text order; maxEnd is their running maximum end) instead of scanning every region.
func (m *masked) spanEnd(off int) int {
	if len(m.maxEnd) != len(m.regions) {
		m.index()
	}
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].start > off }) - 1
	if i < 0 || m.maxEnd[i] <= off {
		return off
	}
	return m.maxEnd[i]
}

// index sorts the regions by start and computes their running maximum end.
func (m *masked) index() {
	sort.SliceStable(m.regions, func(i, j int) bool { return m.regions[i].start < m.regions[j].start })
	m.maxEnd = make([]int, len(m.regions))
	end := 0
	for i, r := range m.regions {
		end = max(end, r.end)
		m.maxEnd[i] = end
	}
}

// lineEndBytes is lineEnd on the masked bytes.
func lineEndBytes(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' && src[off] != '\r' {
		off++
	}
	return off
}

// magicName returns the leading command word of s ("matplotlib" of "matplotlib inline").
func magicName(s string) string {
	s = strings.TrimLeft(s, " \t")
	i := 0
	for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	return s[:i]
}

// payloadOffset returns where the Python statement starts in a payload magic's arguments
// ("-n 10 f()" gives the offset of "f()"), or -1 when there is none.
func payloadOffset(args string) int {
	i := 0
	for {
		for i < len(args) && (args[i] == ' ' || args[i] == '\t') {
			i++
		}
		if i >= len(args) || args[i] == '\n' || args[i] == '\r' {
			return -1
		}
		if args[i] != '-' {
			return i
		}
		// Skip the option and a value that follows options taking one (-n 10, -r 3, -o).
		opt := magicName(args[i:])
		i += len(opt)
		if len(opt) == 2 && strings.ContainsRune("nrpsTDl", rune(opt[1])) {
			for i < len(args) && (args[i] == ' ' || args[i] == '\t') {
				i++
			}
			i += len(magicName(args[i:]))
		}
	}
}

// assignFromEscape returns the offset of '!' or '%' in "lhs = !cmd" / "lhs = %magic",
// or -1.
func assignFromEscape(line string) int {
	eq := strings.IndexByte(line, '=')
	if eq <= 0 || eq+1 < len(line) && line[eq+1] == '=' {
		return -1
	}
	lhs := strings.TrimSpace(line[:eq])
	if lhs == "" {
		return -1
	}
	for _, r := range lhs {
		if !(r == '_' || r == ',' || r == ' ' || r == '.' || r == '(' || r == ')' || r == '[' || r == ']' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x80) {
			return -1
		}
	}
	rest := line[eq+1:]
	j := 0
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
		j++
	}
	if j < len(rest) && (rest[j] == '!' || rest[j] == '%') {
		return eq + 1 + j
	}
	return -1
}

// hasHelpMark reports whether line has a '?' outside strings and comments: plain Python
// never does, IPython reads it as a help request (obj?, obj??).
func hasHelpMark(line string) bool {
	var quote byte
	triple := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote && (!triple || strings.HasPrefix(line[i:], strings.Repeat(string(quote), 3))) {
				if triple {
					i += 2
				}
				quote = 0
			}
		case c == '#':
			return false
		case c == '\'' || c == '"':
			quote = c
			triple = strings.HasPrefix(line[i:], strings.Repeat(string(c), 3))
			if triple {
				i += 2
			}
		case c == '?':
			return true
		}
	}
	return false
}

// stripComment drops a trailing # comment from a help line.
func stripComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

func isBlank(text string, ls int) bool {
	return strings.TrimSpace(text[ls:lineEnd(text, ls)]) == ""
}

// indentEnd returns the offset of the first non-blank byte of the line starting at ls.
func indentEnd(text string, ls int) int {
	for ls < len(text) && (text[ls] == ' ' || text[ls] == '\t' || text[ls] == '\f') {
		ls++
	}
	return ls
}

// lineEnd returns the offset of the line terminator of the physical line containing off.
func lineEnd(text string, off int) int {
	for off < len(text) && text[off] != '\n' && text[off] != '\r' {
		off++
	}
	return off
}

// logicalEnd returns the end of the logical line starting at ls: backslash continuations
// extend it (IPython joins them for magics).
func logicalEnd(text string, ls int) int {
	for {
		le := lineEnd(text, ls)
		if le > ls && text[le-1] == '\\' && le < len(text) {
			ls = le + 1
			if text[le] == '\r' && ls < len(text) && text[ls] == '\n' {
				ls++
			}
			continue
		}
		return le
	}
}

// logicalLineStarts returns the byte offsets of lines that start a logical Python line:
// not inside brackets, a string, or after a backslash continuation. Only there can an
// IPython escape (%, !, ?) appear.
func logicalLineStarts(text string) []int {
	starts := []int{0}
	depth := 0
	var quote byte
	triple := false
	cont := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if quote != 0 {
			switch {
			case c == '\\':
				i++
			case c == quote && (!triple || strings.HasPrefix(text[i:], strings.Repeat(string(quote), 3))):
				if triple {
					i += 2
				}
				quote = 0
			case (c == '\n' || c == '\r') && !triple:
				quote = 0 // unterminated string: tokenizers stop at the line end
				i--
			}
			continue
		}
		switch c {
		case '#':
			for i+1 < len(text) && text[i+1] != '\n' && text[i+1] != '\r' {
				i++
			}
		case '\'', '"':
			quote = c
			triple = strings.HasPrefix(text[i:], strings.Repeat(string(c), 3))
			if triple {
				i += 2
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '\\':
			if i+1 < len(text) && (text[i+1] == '\n' || text[i+1] == '\r') {
				cont = true
			}
		case '\r', '\n':
			if c == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			if depth == 0 && !cont {
				starts = append(starts, i+1)
			}
			cont = false
		}
	}
	return starts
}
