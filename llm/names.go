package llm

import (
	"sync"
	"unicode"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// This file derives what the dependency slicer needs from analysis's tree-sitter facts, so
// the prompt reads cells with the same Python front end as every other layer.

// cellNames is what the slicer needs to know about one cell or statement: the global names
// it binds, the names it changes in place, the names it reads from the namespace before
// binding them.
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

func newCellNames() *cellNames {
	return &cellNames{binds: map[string]bool{}, killed: map[string]bool{}, mutates: map[string]bool{},
		used: map[string]bool{}, ports: map[string]bool{}, setupOnly: true}
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

// analyzeCell extracts the names of one cell.
func analyzeCell(src string) *cellNames {
	return mergeNames(src, cellStatements(src))
}

// parsed memoizes analysis.CellStatements by cell text: one prompt reads every cell several
// times (two slices, the import cells, the drop order) and the next prompt mostly the same
// cells again. The facts are only read, never changed, so callers share them.
var parsed struct {
	sync.Mutex
	m map[string][]analysis.StatementFacts
}

// maxParsed bounds the memo; when full it starts over (cells of old prompts go first).
const maxParsed = 2048

func cellStatements(src string) []analysis.StatementFacts {
	parsed.Lock()
	st, ok := parsed.m[src]
	parsed.Unlock()
	if ok {
		return st
	}
	st = analysis.CellStatements(src)
	parsed.Lock()
	if parsed.m == nil || len(parsed.m) >= maxParsed {
		parsed.m = map[string][]analysis.StatementFacts{}
	}
	parsed.m[src] = st
	parsed.Unlock()
	return st
}

// mergeNames combines the names of a cell's statements, in order, into the cell's: a name
// an earlier statement binds is no longer a use of the cell.
func mergeNames(src string, stmts []analysis.StatementFacts) *cellNames {
	cn := newCellNames()
	setup := true
	for _, st := range stmts {
		sn := statementNames(src, st)
		for _, n := range sn.uses {
			if !cn.used[n] && !cn.binds[n] {
				cn.used[n] = true
				cn.uses = append(cn.uses, n)
			}
		}
		for n := range sn.binds {
			cn.binds[n] = true
		}
		for n := range sn.killed {
			cn.killed[n] = true
		}
		for n := range sn.mutates {
			cn.mutates[n] = true
		}
		for n := range sn.ports {
			cn.ports[n] = true
		}
		cn.star = cn.star || sn.star
		setup = setup && sn.setupOnly
	}
	cn.setupOnly = setup && (len(cn.binds) > 0 || len(cn.mutates) > 0 || len(cn.ports) > 0)
	return cn
}

// statementNames reads the names of one statement (or of a cell) from its facts. setupOnly
// is whether the statement only imports or configures (not yet checked for binding anything).
func statementNames(src string, st analysis.StatementFacts) *cellNames {
	f := st.Facts
	cn := newCellNames()
	for _, d := range f.Defs {
		cn.binds[d.Name] = true
		if !d.Conditional && d.Kind != analysis.DefGlobal {
			cn.killed[d.Name] = true
		}
	}
	for _, g := range f.Globals {
		cn.binds[g] = true
	}
	read := func(n string) {
		if !cn.used[n] {
			cn.used[n] = true
			cn.uses = append(cn.uses, n)
		}
	}
	// `del a` unbinds a without reading it (whatever tree-sitter's walker says).
	deleted := map[finding.Range]bool{}
	for _, d := range f.Defs {
		if d.Kind == analysis.DefDelete {
			deleted[d.Range] = true
		}
	}
	for _, u := range f.Uses {
		if !deleted[u.Range] {
			read(u.Name)
		}
	}
	// A function's body reads module names when it is called: what it reads is needed as
	// soon as the definition is.
	globalReads := map[string]map[string]bool{}
	for _, fn := range f.Functions {
		reads := map[string]bool{}
		for _, r := range fn.Reads {
			reads[r.Name] = true
			read(r.Name)
		}
		globalReads[fn.Name] = reads
		for _, g := range fn.Globals {
			cn.binds[g] = true
		}
	}
	for _, r := range st.MethodReads {
		if !cn.binds[r.Name] { // a method naming its own class (super(Net, self))
			read(r.Name)
		}
	}
	bound := map[string]bool{}
	for _, s := range f.Statements {
		cn.loopReads(s, bound, false, read)
	}
	for _, im := range f.Imports {
		if im.Star {
			cn.star = true
			continue
		}
		cn.ports[im.Bound()] = true
	}
	for _, s := range f.Statements {
		cn.mutations(s, nil)
		if !setupStatement(src, s) {
			cn.setupOnly = false
		}
	}
	return cn
}

// loopReads reads the names a loop reads before, in source order, it binds them: the first
// iteration reads the value from before the loop. analysis's Uses leave them out (a
// NameError there is not certain), but the slice needs the definition they may read.
// bound holds the names bound so far in source order.
func (cn *cellNames) loopReads(s *analysis.Statement, bound map[string]bool, inLoop bool, read func(string)) {
	reads := func(e *analysis.Expr, loop bool) {
		if loop {
			exprNames(e, func(n string) {
				if !bound[n] {
					read(n)
				}
			})
		}
	}
	switch s.Kind {
	case analysis.StmtAssign, analysis.StmtAugAssign, analysis.StmtAnnAssign:
		reads(s.Value, inLoop)
		for _, t := range s.Targets {
			if s.Kind == analysis.StmtAugAssign {
				reads(t, inLoop)
			} else {
				targetReads(t, func(e *analysis.Expr) { reads(e, inLoop) })
			}
			bindTargets(t, bound)
		}
		return
	case analysis.StmtFor:
		reads(s.Value, inLoop)
		for _, t := range s.Targets {
			bindTargets(t, bound)
		}
		inLoop = true
	case analysis.StmtWhile:
		inLoop = true
		reads(s.Value, inLoop)
	case analysis.StmtDef, analysis.StmtClass:
		bound[s.Name] = true
		return
	case analysis.StmtImport, analysis.StmtDelete:
		return
	default:
		reads(s.Value, inLoop)
	}
	for _, b := range s.Body {
		cn.loopReads(b, bound, inLoop, read)
	}
}

// targetReads calls read with the parts of an assignment target that are read: the
// objects of df['a'] and model.fc, and those inside tuple targets.
func targetReads(t *analysis.Expr, read func(*analysis.Expr)) {
	switch t.Kind {
	case analysis.ExprTuple, analysis.ExprList:
		for _, a := range t.Args {
			targetReads(a, read)
		}
	case analysis.ExprAttribute, analysis.ExprSubscript:
		read(t)
	}
}

// bindTargets marks the names an assignment target binds.
func bindTargets(t *analysis.Expr, bound map[string]bool) {
	switch t.Kind {
	case analysis.ExprName:
		bound[t.Name] = true
	case analysis.ExprTuple, analysis.ExprList:
		for _, a := range t.Args {
			bindTargets(a, bound)
		}
	}
}

// exprNames calls f with every name e reads, outside lambdas and comprehensions (their
// variables are their own; analysis reports their free names as uses already).
func exprNames(e *analysis.Expr, f func(string)) {
	if e == nil {
		return
	}
	switch e.Kind {
	case analysis.ExprName:
		f(e.Name)
		return
	case analysis.ExprLambda, analysis.ExprOther:
		return
	}
	exprNames(e.Value, f)
	exprNames(e.Index, f)
	for _, a := range e.Args {
		exprNames(a, f)
	}
	for _, k := range e.Keywords {
		exprNames(k.Value, f)
	}
}

// mutations records the names s changes in place. Inside a function body (globals non-nil)
// only names the body reads from module scope count: the others are the function's own.
func (cn *cellNames) mutations(s *analysis.Statement, globals map[string]bool) {
	mutate := func(n string) {
		if n != "" && (globals == nil || globals[n]) {
			cn.mutates[n] = true
		}
	}
	switch s.Kind {
	case analysis.StmtAssign, analysis.StmtAugAssign, analysis.StmtAnnAssign:
		for _, t := range s.Targets {
			targetMutations(t, mutate)
		}
	case analysis.StmtDelete:
		for _, t := range s.Targets {
			if t.Kind != analysis.ExprName {
				mutate(t.Root())
			}
		}
	case analysis.StmtExpr:
		root, method := leftmostCall(s.Value)
		if mutatingMethods[method] || hasInplace(s.Value) {
			mutate(root)
		}
	}
	body := globals
	if s.Kind == analysis.StmtDef || s.Kind == analysis.StmtClass {
		// The function's module reads are not known here; a body changing a global also
		// reads it (df['a'] = 1 reads df), so the statement's uses stand in for them.
		body = cn.used
	}
	for _, b := range s.Body {
		cn.mutations(b, body)
	}
}

// targetMutations reports the root of every target that changes an object rather than
// binding a name: df['a'], model.fc, and those inside tuple targets.
func targetMutations(t *analysis.Expr, mutate func(string)) {
	switch t.Kind {
	case analysis.ExprName:
	case analysis.ExprTuple, analysis.ExprList:
		for _, a := range t.Args {
			targetMutations(a, mutate)
		}
	case analysis.ExprAttribute, analysis.ExprSubscript:
		mutate(t.Root())
	}
}

// leftmostCall returns the root name of an expression statement and the method of its
// first call in source order: "groupby" for df.groupby(k).apply(f), "append" for
// xs.append(1), "" when the first call is not a method call.
func leftmostCall(e *analysis.Expr) (root, method string) {
	var first *analysis.Expr
	for e != nil {
		switch e.Kind {
		case analysis.ExprName:
			if first != nil && first.Value != nil && first.Value.Kind == analysis.ExprAttribute {
				method = first.Value.Name
			}
			return e.Name, method
		case analysis.ExprCall:
			first = e
			e = e.Value
		case analysis.ExprAttribute, analysis.ExprSubscript:
			e = e.Value
		default:
			return "", ""
		}
	}
	return "", ""
}

// hasInplace reports a call with inplace=True anywhere in e.
func hasInplace(e *analysis.Expr) bool {
	if e == nil {
		return false
	}
	if e.Kind == analysis.ExprCall {
		if v := e.Keyword("inplace"); v != nil && v.Kind == analysis.ExprConst && v.Const == true {
			return true
		}
	}
	if hasInplace(e.Value) || hasInplace(e.Index) {
		return true
	}
	for _, a := range e.Args {
		if hasInplace(a) {
			return true
		}
	}
	for _, k := range e.Keywords {
		if hasInplace(k.Value) {
			return true
		}
	}
	return false
}

// setupStatement reports whether s only imports, configures a library or does nothing a
// later cell depends on by value (pass, global, a docstring, raise and assert excepted).
func setupStatement(src string, s *analysis.Statement) bool {
	switch s.Kind {
	case analysis.StmtImport:
		return true
	case analysis.StmtExpr, analysis.StmtOther:
		word := leadingWord(statementText(src, s.Range))
		switch {
		case word == "raise" || word == "assert":
			return false
		case word == "" || pyKeywords[word] || s.Kind == analysis.StmtOther:
			return true
		}
		_, method := leftmostCall(s.Value)
		return setupCall(word, method)
	}
	return false
}

// pyKeywords are Python's keywords: a statement starting with one is no call.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
}

// leadingWord is the identifier text starts with ("" if it starts otherwise).
func leadingWord(text string) string {
	for i, r := range text {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return text[:i]
		}
	}
	return text
}

// statementText returns the source of r in src (a cell).
func statementText(src string, r finding.Range) string {
	idx := analysis.NewLineIndex(src)
	return src[idx.Offset(r.Start):idx.Offset(r.End)]
}

func isIdentPart(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
