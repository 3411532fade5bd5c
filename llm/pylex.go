package llm

import (
	"strings"
	"unicode"
)

// This file holds a small, forgiving Python lexer used only to slice the executed cells to
// the ones a target depends on when the caller has no dataflow (Input.Dependencies nil is
// "unknown"; the eval harness and CLI use SliceDependencies). It never fails: IPython
// magics, shell lines and broken code just yield fewer names. The tree-sitter analysis of
// package analysis is the precise source; this is the offline fallback.

// tokKind classifies a lexical token.
type tokKind int

const (
	tokIdent tokKind = iota
	tokOp
	tokString
	tokNumber
)

// token is one lexical token of a logical line.
type token struct {
	kind tokKind
	text string
	// attr is true for identifiers right after a '.', i.e. attribute names, not variables.
	attr bool
	// depth is the bracket depth the token sits at (0 = statement level).
	depth int
}

// logicalLine is one Python logical line: physical lines joined across open brackets and
// backslash continuations.
type logicalLine struct {
	indent int
	toks   []token
	// start and end are the 0-based physical lines the logical line spans (inclusive).
	start, end int
}

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
}

// splitLogicalLines lexes a cell into logical lines. IPython magics (%x, %%x), shell
// escapes (!cmd) and help lines (x?) are skipped; the body of a non-Python cell magic
// (%%bash, %%html, ...) is skipped whole.
func splitLogicalLines(src string) []logicalLine {
	physical := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	if len(physical) > 0 {
		first := strings.TrimSpace(physical[0])
		if strings.HasPrefix(first, "%%") {
			name := strings.Fields(strings.TrimPrefix(first, "%%"))
			if len(name) == 0 || !pythonCellMagics[name[0]] {
				return nil
			}
			physical[0] = ""
		}
	}
	var (
		out   []logicalLine
		cur   *logicalLine
		depth int
	)
	lx := &lexer{}
	for ln, line := range physical {
		if cur == nil {
			trimmed := strings.TrimLeft(line, " \t")
			if trimmed == "" || trimmed[0] == '#' {
				continue
			}
			if trimmed[0] == '%' || trimmed[0] == '!' || strings.HasSuffix(strings.TrimSpace(trimmed), "?") {
				continue
			}
			cur = &logicalLine{indent: indentWidth(line), start: ln}
		}
		cur.end = ln
		var cont bool
		cur.toks, depth, cont = lx.lexLine(line, cur.toks, depth)
		if depth > 0 || cont || lx.inTriple != "" {
			continue
		}
		if len(cur.toks) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	if cur != nil && len(cur.toks) > 0 {
		out = append(out, *cur)
	}
	return out
}

// pythonCellMagics are cell magics whose body is Python.
var pythonCellMagics = map[string]bool{"time": true, "timeit": true, "capture": true, "prun": true, "debug": true}

func indentWidth(line string) int {
	n := 0
	for _, r := range line {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		default:
			return n
		}
	}
	return n
}

// lexer keeps the state that spans physical lines: an open triple-quoted string.
type lexer struct {
	inTriple string // the closing quote of an open triple-quoted string, or ""
	fTriple  bool   // whether that string is an f-string
	buf      strings.Builder
}

// lexLine appends the tokens of one physical line. It returns the new bracket depth and
// whether the line ends with a backslash continuation.
func (lx *lexer) lexLine(line string, toks []token, depth int) ([]token, int, bool) {
	i := 0
	if lx.inTriple != "" {
		end := strings.Index(line, lx.inTriple)
		if end < 0 {
			lx.buf.WriteString(line)
			lx.buf.WriteByte('\n')
			return toks, depth, false
		}
		lx.buf.WriteString(line[:end])
		body := lx.buf.String()
		toks = append(toks, token{kind: tokString, text: body, depth: depth})
		if lx.fTriple {
			toks = appendFStringNames(toks, body, depth)
		}
		lx.inTriple = ""
		lx.buf.Reset()
		i = end + 3
	}
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			return toks, depth, false
		case c == '\\' && i == len(strings.TrimRight(line, " \t"))-1:
			return toks, depth, true
		case isIdentStart(rune(c)) || c >= 0x80:
			j := i
			for j < len(line) {
				r := rune(line[j])
				if r >= 0x80 {
					j++
					continue
				}
				if !isIdentPart(r) {
					break
				}
				j++
			}
			word := line[i:j]
			if j < len(line) && (line[j] == '\'' || line[j] == '"') && isStringPrefix(word) {
				var consumed int
				toks, consumed = lx.lexString(line[j:], strings.ContainsAny(word, "fF"), toks, depth)
				i = j + consumed
				continue
			}
			attr := false
			if n := len(toks); n > 0 && toks[n-1].kind == tokOp && toks[n-1].text == "." {
				attr = true
			}
			toks = append(toks, token{kind: tokIdent, text: word, attr: attr, depth: depth})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && (isIdentPart(rune(line[j])) || line[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tokNumber, text: line[i:j], depth: depth})
			i = j
		case c == '\'' || c == '"':
			var consumed int
			toks, consumed = lx.lexString(line[i:], false, toks, depth)
			i += consumed
		case c == '(' || c == '[' || c == '{':
			toks = append(toks, token{kind: tokOp, text: string(c), depth: depth})
			depth++
			i++
		case c == ')' || c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
			toks = append(toks, token{kind: tokOp, text: string(c), depth: depth})
			i++
		default:
			op := string(c)
			if i+2 < len(line) && (line[i:i+3] == "**=" || line[i:i+3] == "//=" || line[i:i+3] == ">>=" || line[i:i+3] == "<<=") {
				op = line[i : i+3]
			} else if i+1 < len(line) {
				two := line[i : i+2]
				switch two {
				case "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", "->", "**", "//", "<<", ">>":
					op = two
				}
			}
			toks = append(toks, token{kind: tokOp, text: op, depth: depth})
			i += len(op)
		}
	}
	return toks, depth, false
}

// lexString lexes a string literal starting at s[0] (a quote). It returns the tokens and the
// number of bytes consumed. Names inside f-string replacement fields become identifier
// tokens, since they are reads.
func (lx *lexer) lexString(s string, fstring bool, toks []token, depth int) ([]token, int) {
	q := s[0]
	if len(s) >= 3 && s[1] == q && s[2] == q {
		quote := s[:3]
		end := strings.Index(s[3:], quote)
		if end < 0 {
			lx.inTriple = quote
			lx.fTriple = fstring
			lx.buf.Reset()
			lx.buf.WriteString(s[3:])
			lx.buf.WriteByte('\n')
			return toks, len(s)
		}
		body := s[3 : 3+end]
		toks = append(toks, token{kind: tokString, text: body, depth: depth})
		if fstring {
			toks = appendFStringNames(toks, body, depth)
		}
		return toks, 3 + end + 3
	}
	j := 1
	for j < len(s) && s[j] != q {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	body := s[1:min(j, len(s))]
	toks = append(toks, token{kind: tokString, text: body, depth: depth})
	if fstring {
		toks = appendFStringNames(toks, body, depth)
	}
	return toks, min(j+1, len(s))
}

// appendFStringNames adds the identifiers read in the {...} fields of an f-string body.
func appendFStringNames(toks []token, body string, depth int) []token {
	for {
		open := strings.IndexByte(body, '{')
		if open < 0 {
			return toks
		}
		if open+1 < len(body) && body[open+1] == '{' {
			body = body[open+2:]
			continue
		}
		closeAt := strings.IndexByte(body[open:], '}')
		if closeAt < 0 {
			return toks
		}
		expr := body[open+1 : open+closeAt]
		if k := strings.IndexAny(expr, "!:"); k >= 0 && !strings.Contains(expr[:k], "[") {
			expr = expr[:k]
		}
		sub := &lexer{}
		inner, _, _ := sub.lexLine(expr, nil, 0)
		for _, t := range inner {
			if t.kind == tokIdent {
				t.depth = depth + 1
				toks = append(toks, t)
			}
		}
		body = body[open+closeAt+1:]
	}
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func isStringPrefix(w string) bool {
	if len(w) > 3 {
		return false
	}
	for _, r := range strings.ToLower(w) {
		if r != 'r' && r != 'b' && r != 'f' && r != 'u' {
			return false
		}
	}
	return true
}
