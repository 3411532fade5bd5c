package llm

import "strings"

// cellNames is what the slicer needs to know about one cell: the global names it binds, the
// names it changes in place, the names it reads from the namespace before binding them.
type cellNames struct {
	// binds are global names the cell (re)binds; killed are those bound unconditionally at
	// top level, which hide every earlier definition.
	binds  map[string]bool
	killed map[string]bool
	// mutates are names the cell changes in place: df['a'] = ..., df.dropna(inplace=True),
	// model.fit(...), xs.append(...).
	mutates map[string]bool
	// uses are names read before the cell binds them, in first-read order.
	uses  []string
	used  map[string]bool
	ports map[string]bool // names bound by import statements
	// star is true when the cell has `from m import *` (it may bind any name).
	star bool
	// setupOnly is true for cells that only import, configure libraries or run magics.
	setupOnly bool
}

// mutatingMethods change their receiver in place when called as a statement.
var mutatingMethods = map[string]bool{
	"append": true, "extend": true, "insert": true, "pop": true, "remove": true, "clear": true,
	"update": true, "add": true, "discard": true, "sort": true, "reverse": true,
	"setdefault": true, "popitem": true, "fit": true, "partial_fit": true,
	"fit_transform": true, "fit_resample": true, "compile": true, "train": true, "eval": true,
	"to": true, "cuda": true, "cpu": true, "double": true, "float": true, "half": true,
	"load_state_dict": true, "zero_grad": true, "step": true, "backward": true,
	"set_params": true, "add_module": true, "register_buffer": true, "apply": true,
	"requires_grad_": true, "fill_": true, "zero_": true, "build": true, "load_weights": true,
	"set_weights": true, "freeze": true, "unfreeze": true,
	"resize": true, "put": true, "itemset": true, "setflags": true,
	"__setitem__": true, "__delitem__": true, "insert_column": true,
}

// block is an open compound statement while scanning a cell.
type block struct {
	indent      int
	function    bool // def or class body: bindings are local
	conditional bool // if/for/while/else/except body: bindings may not happen
	locals      map[string]bool
}

// analyzeCell extracts the names of one cell.
func analyzeCell(src string) *cellNames {
	cn := &cellNames{
		binds: map[string]bool{}, killed: map[string]bool{}, mutates: map[string]bool{},
		used: map[string]bool{}, ports: map[string]bool{}, setupOnly: true,
	}
	var stack []block
	for _, ll := range splitLogicalLines(src) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= ll.indent {
			stack = stack[:len(stack)-1]
		}
		cn.line(ll.toks, ll.indent, &stack)
	}
	if len(cn.binds) == 0 && len(cn.mutates) == 0 && len(cn.ports) == 0 {
		cn.setupOnly = false
	}
	return cn
}

// scope summarises the open blocks.
func scope(stack []block) (inFunc, conditional bool) {
	for _, b := range stack {
		inFunc = inFunc || b.function
		conditional = conditional || b.conditional
	}
	return inFunc, conditional
}

func isLocal(stack []block, name string) bool {
	for _, b := range stack {
		if b.function && b.locals[name] {
			return true
		}
	}
	return false
}

// bind records a binding of name in the current scope.
func (cn *cellNames) bind(stack []block, name string) {
	inFunc, conditional := scope(stack)
	if inFunc {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].function {
				stack[i].locals[name] = true
				return
			}
		}
	}
	cn.binds[name] = true
	if !conditional {
		cn.killed[name] = true
	}
}

// read records a read of name.
func (cn *cellNames) read(stack []block, name string) {
	if pyKeywords[name] || isLocal(stack, name) || cn.killed[name] || cn.used[name] {
		return
	}
	if inFunc, _ := scope(stack); !inFunc && cn.binds[name] {
		return
	}
	cn.used[name] = true
	cn.uses = append(cn.uses, name)
}

// line handles one logical line at the given indentation.
func (cn *cellNames) line(toks []token, indent int, stack *[]block) {
	if len(toks) == 0 {
		return
	}
	head := toks[0].text
	if toks[0].kind == tokIdent && head == "async" && len(toks) > 1 {
		toks = toks[1:]
		head = toks[0].text
	}
	switch head {
	case "def", "class":
		if len(toks) < 2 || toks[1].kind != tokIdent {
			return
		}
		cn.setupOnly = false
		cn.bind(*stack, toks[1].text)
		colon := headerColon(toks)
		locals := map[string]bool{}
		if head == "def" {
			for _, p := range paramNames(toks[2:colon]) {
				locals[p] = true
			}
		}
		// Defaults, annotations and base classes are read when the def runs.
		for k := 2; k < colon; k++ {
			t := toks[k]
			if t.kind == tokIdent && !t.attr && !locals[t.text] {
				cn.read(*stack, t.text)
			}
		}
		*stack = append(*stack, block{indent: indent, function: true, locals: locals})
		if colon+1 < len(toks) {
			cn.statement(toks[colon+1:], *stack)
		}
		return
	case "if", "elif", "else", "while", "for", "try", "except", "finally", "with":
		colon := headerColon(toks)
		header := toks[:colon]
		cond := head != "try" && head != "finally" && head != "with"
		switch head {
		case "for":
			in := indexOf(header, "in")
			if in < 0 {
				in = len(header)
			}
			cn.reads(header[in:], *stack)
			for _, t := range header[1:in] {
				if t.kind == tokIdent {
					cn.bind(*stack, t.text)
				}
			}
		case "with", "except":
			cn.withAs(header[1:], *stack)
		default:
			cn.reads(header[1:], *stack)
		}
		cn.setupOnly = false
		*stack = append(*stack, block{indent: indent, conditional: cond})
		if colon+1 < len(toks) {
			cn.statement(toks[colon+1:], *stack)
		}
		return
	}
	cn.statement(toks, *stack)
}

// statement handles a simple statement (possibly several separated by ';').
func (cn *cellNames) statement(toks []token, stack []block) {
	for len(toks) > 0 {
		end := len(toks)
		for i, t := range toks {
			if t.depth == 0 && t.kind == tokOp && t.text == ";" {
				end = i
				break
			}
		}
		cn.simple(toks[:end], stack)
		if end == len(toks) {
			return
		}
		toks = toks[end+1:]
	}
}

func (cn *cellNames) simple(toks []token, stack []block) {
	if len(toks) == 0 {
		return
	}
	switch toks[0].text {
	case "import":
		for _, name := range importBindings(toks) {
			cn.bind(stack, name)
			cn.ports[name] = true
		}
		return
	case "from":
		if indexOf(toks, "*") >= 0 {
			cn.star = true
		}
		for _, name := range importBindings(toks) {
			cn.bind(stack, name)
			cn.ports[name] = true
		}
		return
	case "global", "nonlocal":
		for _, t := range toks[1:] {
			if t.kind == tokIdent {
				cn.binds[t.text] = true
			}
		}
		return
	case "del":
		cn.setupOnly = false
		for _, seg := range splitTop(toks[1:], ",") {
			if len(seg) == 1 && seg[0].kind == tokIdent {
				cn.bind(stack, seg[0].text)
			} else if len(seg) > 0 && seg[0].kind == tokIdent {
				cn.read(stack, seg[0].text)
				cn.mutate(stack, seg[0].text)
				cn.reads(seg[1:], stack)
			}
		}
		return
	}
	// Walrus bindings anywhere in the statement.
	for i := 1; i < len(toks); i++ {
		if toks[i].kind == tokOp && toks[i].text == ":=" && toks[i-1].kind == tokIdent {
			cn.bind(stack, toks[i-1].text)
		}
	}
	segs, aug := assignmentTargets(toks)
	value := toks
	if len(segs) > 0 {
		value = segs[len(segs)-1]
		segs = segs[:len(segs)-1]
	}
	cn.reads(value, stack)
	if len(segs) == 0 {
		cn.expressionStatement(toks, stack)
		return
	}
	cn.setupOnly = false
	for _, target := range segs {
		if aug && len(target) > 0 && target[0].kind == tokIdent {
			cn.read(stack, target[0].text)
		}
		cn.target(target, stack)
	}
}

// target handles one assignment target.
func (cn *cellNames) target(seg []token, stack []block) {
	if len(seg) >= 2 && seg[0].kind == tokIdent && seg[1].kind == tokOp && seg[1].text == ":" {
		// Annotated assignment: x: int = 1.
		cn.reads(seg[2:], stack)
		cn.bind(stack, seg[0].text)
		return
	}
	plain := true
	for _, t := range seg {
		if t.kind == tokIdent && t.attr {
			plain = false
		}
		if t.kind == tokOp && !strings.Contains(",()[]*", t.text) {
			plain = false
		}
		if t.kind != tokIdent && t.kind != tokOp {
			plain = false
		}
		if t.kind == tokOp && t.text == "[" && t.depth == 0 && len(seg) > 0 && seg[0].kind == tokIdent {
			plain = false
		}
	}
	if plain {
		for _, t := range seg {
			if t.kind == tokIdent {
				cn.bind(stack, t.text)
			}
		}
		return
	}
	for _, part := range splitTop(seg, ",") {
		if len(part) == 0 {
			continue
		}
		root := part[0]
		if root.kind == tokOp && (root.text == "(" || root.text == "[" || root.text == "*") && len(part) > 1 {
			root = part[1]
		}
		if root.kind != tokIdent {
			cn.reads(part, stack)
			continue
		}
		if len(part) == 1 {
			cn.bind(stack, root.text)
			continue
		}
		cn.read(stack, root.text)
		cn.mutate(stack, root.text)
		cn.reads(part[1:], stack)
	}
}

// expressionStatement marks in-place changes made by a statement that is a call.
func (cn *cellNames) expressionStatement(toks []token, stack []block) {
	if toks[0].kind != tokIdent || pyKeywords[toks[0].text] {
		if len(toks) > 1 && (toks[0].text == "return" || toks[0].text == "yield" || toks[0].text == "raise" || toks[0].text == "assert") {
			cn.setupOnly = false
		}
		return
	}
	root := toks[0].text
	inplace := false
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].text == "inplace" && toks[i+1].text == "=" && toks[i+2].text == "True" {
			inplace = true
		}
	}
	method := ""
	for i := 1; i < len(toks); i++ {
		if toks[i].kind == tokOp && toks[i].text == "(" && toks[i].depth == 0 {
			if toks[i-1].kind == tokIdent && toks[i-1].attr {
				method = toks[i-1].text
			}
			break
		}
	}
	if inplace || mutatingMethods[method] {
		cn.mutate(stack, root)
	}
	if !setupCall(root, method) {
		cn.setupOnly = false
	}
}

// setupCall reports calls that configure a library rather than compute data.
func setupCall(root, method string) bool {
	switch method {
	case "filterwarnings", "simplefilter", "set_option", "set_style", "set_theme", "set",
		"use", "seed", "manual_seed", "set_printoptions", "set_context", "set_palette",
		"init_notebook_mode", "append", "style":
		return root != ""
	}
	return false
}

func (cn *cellNames) mutate(stack []block, name string) {
	if inFunc, _ := scope(stack); inFunc && isLocal(stack, name) {
		return
	}
	cn.mutates[name] = true
}

// reads records every variable read in toks, skipping names local to comprehensions and
// lambdas and keyword-argument names.
func (cn *cellNames) reads(toks []token, stack []block) {
	local := comprehensionLocals(toks)
	for i, t := range toks {
		if t.kind != tokIdent || t.attr || pyKeywords[t.text] || local[i] {
			continue
		}
		// keyword argument name: f(x=1)
		if t.depth > 0 && i+1 < len(toks) && toks[i+1].kind == tokOp && toks[i+1].text == "=" &&
			i > 0 && toks[i-1].kind == tokOp && (toks[i-1].text == "(" || toks[i-1].text == ",") {
			continue
		}
		cn.read(stack, t.text)
	}
}

// withAs handles `with a as b, c as d` and `except E as e`.
func (cn *cellNames) withAs(toks []token, stack []block) {
	for _, part := range splitTop(toks, ",") {
		as := indexOf(part, "as")
		if as < 0 {
			cn.reads(part, stack)
			continue
		}
		cn.reads(part[:as], stack)
		for _, t := range part[as+1:] {
			if t.kind == tokIdent {
				cn.bind(stack, t.text)
			}
		}
	}
}

// comprehensionLocals marks the token positions of names bound by comprehensions
// (`for x in` inside brackets) and lambdas within their extent.
func comprehensionLocals(toks []token) map[int]bool {
	var local map[int]bool
	for i, t := range toks {
		if t.kind != tokIdent || t.attr {
			continue
		}
		var names []string
		var lo, hi int
		switch {
		case t.text == "for" && t.depth > 0:
			j := i + 1
			for j < len(toks) && toks[j].text != "in" {
				if toks[j].kind == tokIdent {
					names = append(names, toks[j].text)
				}
				j++
			}
			lo, hi = bracketExtent(toks, i)
		case t.text == "lambda":
			j := i + 1
			for j < len(toks) && !(toks[j].kind == tokOp && toks[j].text == ":" && toks[j].depth == t.depth) {
				if toks[j].kind == tokIdent && (j == i+1 || toks[j-1].text == "," || toks[j-1].text == "*" || toks[j-1].text == "**") {
					names = append(names, toks[j].text)
				}
				j++
			}
			lo = i
			_, hi = bracketExtent(toks, i)
		default:
			continue
		}
		if local == nil {
			local = map[int]bool{}
		}
		set := map[string]bool{}
		for _, n := range names {
			set[n] = true
		}
		for k := lo; k < hi && k < len(toks); k++ {
			if toks[k].kind == tokIdent && !toks[k].attr && set[toks[k].text] {
				local[k] = true
			}
		}
	}
	return local
}

// bracketExtent returns the token span [lo, hi) of the innermost bracket group around i
// (the whole slice at depth 0).
func bracketExtent(toks []token, i int) (int, int) {
	d := toks[i].depth
	if d == 0 {
		return 0, len(toks)
	}
	lo := i
	for lo > 0 && !(toks[lo-1].depth == d-1 && toks[lo-1].kind == tokOp && strings.Contains("([{", toks[lo-1].text)) {
		lo--
	}
	hi := i
	for hi < len(toks) && !(toks[hi].depth == d-1 && toks[hi].kind == tokOp && strings.Contains(")]}", toks[hi].text)) {
		hi++
	}
	return lo, hi
}

// assignmentTargets splits `a = b = value` at top-level '=' (or an augmented operator),
// returning the target segments followed by the value segment; nil when the statement is
// not an assignment.
func assignmentTargets(toks []token) (segs [][]token, augmented bool) {
	start := 0
	for i, t := range toks {
		if t.depth != 0 || t.kind != tokOp {
			continue
		}
		switch t.text {
		case "=":
			segs = append(segs, toks[start:i])
			start = i + 1
		case "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "@=", ">>=", "<<=":
			if len(segs) == 0 {
				segs = append(segs, toks[start:i])
				start = i + 1
				augmented = true
			}
		}
	}
	if len(segs) == 0 {
		return nil, false
	}
	return append(segs, toks[start:]), augmented
}

// headerColon returns the index of the ':' ending a compound statement header, or
// len(toks) when absent.
func headerColon(toks []token) int {
	lambdas := 0
	for i, t := range toks {
		if t.depth != 0 {
			continue
		}
		if t.kind == tokIdent && t.text == "lambda" {
			lambdas++
		}
		if t.kind == tokOp && t.text == ":" {
			if lambdas > 0 {
				lambdas--
				continue
			}
			return i
		}
	}
	return len(toks)
}

// paramNames returns parameter names of a def header's parameter list tokens.
func paramNames(toks []token) []string {
	var out []string
	for i, t := range toks {
		if t.kind != tokIdent || t.depth != 1 {
			continue
		}
		if i == 0 {
			continue
		}
		if prev := toks[i-1]; prev.kind == tokOp && (prev.text == "(" || prev.text == "," || prev.text == "*" || prev.text == "**") {
			out = append(out, t.text)
		}
	}
	return out
}

// importBindings returns the names an import statement binds.
func importBindings(toks []token) []string {
	var out []string
	if toks[0].text == "import" {
		for _, part := range splitTop(toks[1:], ",") {
			if as := indexOf(part, "as"); as >= 0 && as+1 < len(part) {
				out = append(out, part[as+1].text)
			} else if len(part) > 0 && part[0].kind == tokIdent {
				out = append(out, part[0].text)
			}
		}
		return out
	}
	imp := indexOf(toks, "import")
	if imp < 0 {
		return nil
	}
	var flat []token
	for _, t := range toks[imp+1:] {
		if t.kind == tokOp && (t.text == "(" || t.text == ")") {
			continue
		}
		t.depth = 0
		flat = append(flat, t)
	}
	for _, part := range splitTop(flat, ",") {
		var names []token
		for _, t := range part {
			if t.kind == tokIdent {
				names = append(names, t)
			}
		}
		if as := indexOf(part, "as"); as >= 0 && as+1 < len(part) {
			out = append(out, part[as+1].text)
		} else if len(names) > 0 {
			out = append(out, names[0].text)
		}
	}
	return out
}

// splitTop splits toks at a top-level (depth of the first token) separator.
func splitTop(toks []token, sep string) [][]token {
	if len(toks) == 0 {
		return nil
	}
	base := toks[0].depth
	var out [][]token
	start := 0
	for i, t := range toks {
		if t.kind == tokOp && t.text == sep && t.depth == base {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

func indexOf(toks []token, text string) int {
	for i, t := range toks {
		if t.text == text && (t.kind == tokIdent || t.kind == tokOp) && t.depth == toks[0].depth {
			return i
		}
	}
	return -1
}
