package analysis

import (
	"math"
	"strconv"
	"strings"

	"github.com/premortem/premortem/finding"
)

// converter turns mirrored tree-sitter nodes into the Expr/Statement tree of expr.go.
type converter struct {
	text string // original cell text (Text fields show what the user wrote)
	idx  *LineIndex
	mask *masked
	// memo holds each node's conversion: facts convert the same subtrees again and again
	// (every call and subscript of a chain records its whole expression), and without it a
	// chain n long costs n² nodes. Converted expressions are shared, never modified.
	memo map[*node]*Expr
}

func (c *converter) rng(n *node) finding.Range { return c.idx.Range(n.start, n.end) }

func (c *converter) src(n *node) string {
	if n == nil {
		return ""
	}
	return c.text[n.start:n.end]
}

// expr converts an expression node. It never returns nil for a non-nil node.
func (c *converter) expr(n *node) *Expr {
	if n == nil {
		return nil
	}
	if e, ok := c.memo[n]; ok {
		return e
	}
	e := c.convert(n)
	if c.memo != nil {
		c.memo[n] = e
	}
	return e
}

// starred returns a copy of e marked as *e or **e (e itself may be shared).
func starred(e *Expr) *Expr {
	cp := *e
	cp.Starred = true
	return &cp
}

// convert converts n; use expr, which memoises.
func (c *converter) convert(n *node) *Expr {
	e := &Expr{Kind: ExprOther, Range: c.rng(n), Text: c.src(n)}
	if c.mask.inMask(n.start) {
		// IPython syntax (x = !ls): the filler stands for the whole masked text.
		end := n.start + len(strings.TrimRight(c.text[n.start:maskEnd(c.mask, n.start)], " \t\r\n"))
		e.Text, e.Range = c.text[n.start:end], c.idx.Range(n.start, end)
		return e
	}
	switch n.typ {
	case "identifier":
		e.Kind, e.Name = ExprName, e.Text
	case "attribute":
		e.Kind = ExprAttribute
		e.Value = c.expr(n.child("object"))
		if a := n.child("attribute"); a != nil {
			e.Name, e.NameRange = c.src(a), c.rng(a)
		}
	case "subscript":
		e.Kind = ExprSubscript
		e.Value = c.expr(n.child("value"))
		subs := n.children("subscript")
		switch {
		case len(subs) == 1:
			e.Index = c.expr(subs[0])
		case len(subs) > 1:
			t := &Expr{Kind: ExprTuple, Range: c.idx.Range(subs[0].start, subs[len(subs)-1].end),
				Text: c.text[subs[0].start:subs[len(subs)-1].end]}
			for _, s := range subs {
				t.Args = append(t.Args, c.expr(s))
			}
			e.Index = t
		}
	case "call":
		e.Kind = ExprCall
		e.Value = c.expr(n.child("function"))
		args := n.child("arguments")
		if args != nil && args.typ == "generator_expression" {
			e.Args = append(e.Args, c.expr(args))
			break
		}
		for _, a := range args.namedKids() {
			switch a.typ {
			case "keyword_argument":
				k := Keyword{Range: c.rng(a), Value: c.expr(a.child("value"))}
				if nm := a.child("name"); nm != nil {
					k.Name = c.src(nm)
				}
				e.Keywords = append(e.Keywords, k)
			case "dictionary_splat":
				e.Keywords = append(e.Keywords, Keyword{Range: c.rng(a), Value: c.expr(a.firstNamed())})
			default:
				e.Args = append(e.Args, c.expr(a))
			}
		}
	case "string":
		if s, ok := c.stringConst(n); ok {
			e.Kind, e.Const = ExprConst, s
		}
	case "concatenated_string":
		var b strings.Builder
		ok := true
		for _, k := range n.namedKids() {
			s, sok := c.stringConst(k)
			ok = ok && sok
			b.WriteString(s)
		}
		if ok {
			e.Kind, e.Const = ExprConst, b.String()
		}
	case "integer":
		if v, ok := parseInt(e.Text); ok {
			e.Kind, e.Const = ExprConst, v
		}
	case "float":
		if v, ok := parseFloat(e.Text); ok {
			e.Kind, e.Const = ExprConst, v
		}
	case "true", "false":
		e.Kind, e.Const = ExprConst, n.typ == "true"
	case "none":
		e.Kind = ExprConst
	case "list", "list_pattern":
		e.Kind, e.Args = ExprList, c.exprs(n.namedKids())
	case "tuple", "expression_list", "pattern_list", "tuple_pattern":
		e.Kind, e.Args = ExprTuple, c.exprs(n.namedKids())
	case "set":
		e.Kind, e.Args = ExprSet, c.exprs(n.namedKids())
	case "dictionary":
		e.Kind = ExprDict
		for _, p := range n.namedKids() {
			switch p.typ {
			case "pair":
				e.Args = append(e.Args, c.expr(p.child("key")), c.expr(p.child("value")))
			case "dictionary_splat":
				v := c.expr(p.firstNamed())
				if v == nil {
					continue
				}
				v = starred(v)
				e.Args = append(e.Args, &Expr{Kind: ExprOther, Text: "**", Range: c.idx.Range(p.start, p.start+2)}, v)
			}
		}
	case "list_splat", "list_splat_pattern", "dictionary_splat_pattern":
		inner := c.expr(n.firstNamed())
		if inner == nil {
			return e
		}
		return starred(inner)
	case "parenthesized_expression":
		if in := n.firstNamed(); in != nil {
			return c.expr(in)
		}
	case "binary_operator":
		e.Kind = ExprBinOp
		e.Name = c.opText(n.child("operator"))
		e.Args = []*Expr{c.expr(n.child("left")), c.expr(n.child("right"))}
	case "unary_operator":
		e.Kind = ExprUnaryOp
		e.Name = c.opText(n.child("operator"))
		e.Args = []*Expr{c.expr(n.child("argument"))}
	case "not_operator":
		e.Kind, e.Name = ExprUnaryOp, "not"
		e.Args = []*Expr{c.expr(n.child("argument"))}
	case "comparison_operator":
		e.Kind = ExprCompare
		for _, k := range n.kids {
			switch {
			case k.field == "operators":
				if e.Name == "" {
					e.Name = strings.Join(strings.Fields(c.src(k)), " ")
				}
			case k.named && k.typ != "comment":
				e.Args = append(e.Args, c.expr(k))
			}
		}
	case "boolean_operator":
		e.Kind = ExprBoolOp
		e.Name = c.opText(n.child("operator"))
		for _, side := range []*node{n.child("left"), n.child("right")} {
			if side != nil && side.typ == "boolean_operator" && c.opText(side.child("operator")) == e.Name {
				e.Args = append(e.Args, c.expr(side).Args...)
			} else {
				e.Args = append(e.Args, c.expr(side))
			}
		}
	case "slice":
		e.Kind = ExprSlice
		e.Args = make([]*Expr, 3)
		part := 0
		for _, k := range n.kids {
			if !k.named && k.typ == ":" {
				part++
			} else if k.named && k.typ != "comment" && part < 3 {
				e.Args[part] = c.expr(k)
			}
		}
	case "lambda":
		e.Kind = ExprLambda
		e.Value = c.expr(n.child("body"))
	case "named_expression":
		// Walrus: Name is the target, Value the assigned expression.
		if nm := n.child("name"); nm != nil {
			e.Name = c.src(nm)
		}
		e.Value = c.expr(n.child("value"))
	case "conditional_expression":
		e.Args = c.exprs(n.namedKids())
	case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
		for _, k := range n.namedKids() {
			switch k.typ {
			case "comment":
			case "pair":
				e.Parts = append(e.Parts, c.exprs(k.namedKids())...)
			case "for_in_clause":
				e.Parts = append(e.Parts, c.expr(k.child("right")))
			case "if_clause":
				e.Parts = append(e.Parts, c.exprs(k.namedKids())...)
			default:
				e.Parts = append(e.Parts, c.expr(k))
			}
		}
	case "keyword_argument":
		return c.expr(n.child("value"))
	}
	if e.Kind == ExprOther {
		e.Node = n.typ
	}
	return e
}

func (c *converter) exprs(ns []*node) []*Expr {
	out := make([]*Expr, 0, len(ns))
	for _, n := range ns {
		out = append(out, c.expr(n))
	}
	return out
}

func (c *converter) opText(n *node) string {
	if n == nil {
		return ""
	}
	return c.src(n)
}

// stringConst returns the value of a plain string literal; f-strings, byte strings and
// literals with errors are not constants.
func (c *converter) stringConst(n *node) (string, bool) {
	if n.typ != "string" {
		return "", false
	}
	var b strings.Builder
	raw := false
	for _, k := range n.kids {
		switch k.typ {
		case "string_start":
			prefix := strings.ToLower(strings.TrimRight(c.src(k), `'"`))
			if strings.ContainsAny(prefix, "fb") {
				return "", false
			}
			raw = strings.Contains(prefix, "r")
		case "string_content":
			b.WriteString(c.content(k, raw))
		case "interpolation", "ERROR", "MISSING":
			return "", false
		}
	}
	return b.String(), true
}

// content decodes a string_content node; escape sequences are its children.
func (c *converter) content(n *node, raw bool) string {
	s := c.src(n)
	if raw || !strings.Contains(s, `\`) {
		return s
	}
	if v, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(s, `"`, `\"`), `\'`, `'`) + `"`); err == nil {
		return v
	}
	return s
}

func parseInt(s string) (int64, bool) {
	s = strings.ReplaceAll(s, "_", "")
	ls := strings.ToLower(s)
	if strings.HasSuffix(ls, "j") || strings.HasSuffix(ls, "l") {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(ls, "0x"):
		base, s = 16, s[2:]
	case strings.HasPrefix(ls, "0o"):
		base, s = 8, s[2:]
	case strings.HasPrefix(ls, "0b"):
		base, s = 2, s[2:]
	}
	v, err := strconv.ParseInt(s, base, 64)
	return v, err == nil
}

func parseFloat(s string) (float64, bool) {
	s = strings.ReplaceAll(s, "_", "")
	if strings.HasSuffix(strings.ToLower(s), "j") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v)
}

// statements converts the statements of a block or module.
func (c *converter) statements(n *node) []*Statement {
	var out []*Statement
	for _, k := range n.kids {
		if !k.named || k.typ == "comment" {
			continue
		}
		if c.mask.inMask(k.start) {
			continue // filler standing in for a magic
		}
		if s := c.statement(k); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// statement converts one statement node; ERROR nodes become StmtOther.
func (c *converter) statement(n *node) *Statement {
	s := &Statement{Kind: StmtOther, Range: c.rng(n)}
	switch n.typ {
	case "expression_statement":
		kids := n.namedKids()
		if len(kids) == 1 {
			return c.simple(kids[0], s)
		}
		s.Kind = StmtExpr
		s.Value = &Expr{Kind: ExprTuple, Range: s.Range, Text: c.src(n), Args: c.exprs(kids)}
	case "import_statement", "import_from_statement", "future_import_statement":
		s.Kind = StmtImport
	case "decorated_definition":
		if d := n.child("definition"); d != nil {
			inner := c.statement(d)
			inner.Range = s.Range
			return inner
		}
	case "function_definition":
		s.Kind = StmtDef
		s.Name = c.src(n.child("name"))
		if ps := n.child("parameters"); ps != nil {
			for _, p := range ps.namedKids() {
				paramNames(p, c.text, func(name string) { s.Params = append(s.Params, name) })
			}
		}
		s.Body = c.block(n.child("body"))
	case "class_definition":
		s.Kind = StmtClass
		s.Name = c.src(n.child("name"))
		s.Body = c.block(n.child("body"))
	case "for_statement":
		s.Kind = StmtFor
		s.Targets = []*Expr{c.expr(n.child("left"))}
		s.Value = c.expr(n.child("right"))
		s.Body = c.block(n.child("body"))
		if alt := n.child("alternative"); alt != nil {
			s.Body = append(s.Body, c.block(alt.child("body"))...)
		}
	case "while_statement":
		s.Kind = StmtWhile
		s.Value = c.expr(n.child("condition"))
		s.Body = c.block(n.child("body"))
		if alt := n.child("alternative"); alt != nil {
			s.Body = append(s.Body, c.block(alt.child("body"))...)
		}
	case "if_statement":
		s.Kind = StmtIf
		s.Value = c.expr(n.child("condition"))
		s.Body = c.block(n.child("consequence"))
		for _, alt := range n.children("alternative") {
			s.Body = append(s.Body, c.block(alt.child("consequence"))...)
			s.Body = append(s.Body, c.block(alt.child("body"))...)
		}
	case "with_statement":
		s.Kind = StmtWith
		for _, item := range withItems(n) {
			v := item.child("value")
			if v != nil && v.typ == "as_pattern" {
				if s.Value == nil {
					s.Value = c.expr(v.firstNamed())
				}
				if t := v.child("alias"); t != nil {
					s.Targets = append(s.Targets, c.expr(t.firstNamed()))
				}
			} else if s.Value == nil {
				s.Value = c.expr(v)
			}
		}
		s.Body = c.block(n.child("body"))
	case "try_statement":
		s.Kind = StmtTry
		for _, k := range n.kids {
			switch k.typ {
			case "block":
				s.Body = append(s.Body, c.statements(k)...)
			case "except_clause", "except_group_clause", "else_clause", "finally_clause":
				for _, b := range k.kids {
					if b.typ == "block" {
						s.Body = append(s.Body, c.statements(b)...)
					}
				}
			}
		}
	case "delete_statement":
		s.Kind = StmtDelete
		if t := n.firstNamed(); t != nil {
			if t.typ == "expression_list" {
				s.Targets = c.exprs(t.namedKids())
			} else {
				s.Targets = []*Expr{c.expr(t)}
			}
		}
	case "return_statement":
		s.Kind = StmtReturn
		s.Value = c.expr(n.firstNamed())
	case "match_statement":
		for _, b := range n.children("body") {
			for _, cc := range b.namedKids() {
				s.Body = append(s.Body, c.block(cc.child("consequence"))...)
			}
		}
	}
	return s
}

// simple converts the single child of an expression statement.
func (c *converter) simple(n *node, s *Statement) *Statement {
	switch n.typ {
	case "assignment":
		if n.child("type") != nil {
			s.Kind = StmtAnnAssign
			s.Targets = []*Expr{c.expr(n.child("left"))}
			s.Value = c.expr(n.child("right"))
			return s
		}
		s.Kind = StmtAssign
		cur := n
		for cur != nil && cur.typ == "assignment" {
			s.Targets = append(s.Targets, c.expr(cur.child("left")))
			r := cur.child("right")
			if r == nil || r.typ != "assignment" {
				s.Value = c.expr(r)
				break
			}
			cur = r
		}
	case "augmented_assignment":
		s.Kind = StmtAugAssign
		s.Targets = []*Expr{c.expr(n.child("left"))}
		s.Value = c.expr(n.child("right"))
		s.Op = strings.TrimSuffix(c.opText(n.child("operator")), "=")
	default:
		s.Kind = StmtExpr
		s.Value = c.expr(n)
	}
	return s
}

func (c *converter) block(n *node) []*Statement {
	if n == nil {
		return nil
	}
	return c.statements(n)
}

// withItems returns the with_item nodes of a with statement.
func withItems(n *node) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.typ == "with_clause" {
			for _, it := range k.kids {
				if it.typ == "with_item" {
					out = append(out, it)
				}
			}
		}
	}
	return out
}
