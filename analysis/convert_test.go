package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

// sexpr renders an Expr compactly for comparisons.
func sexpr(e *Expr) string {
	if e == nil {
		return "nil"
	}
	star := ""
	if e.Starred {
		star = "*"
	}
	switch e.Kind {
	case ExprName:
		return star + e.Name
	case ExprConst:
		return fmt.Sprintf("%s%#v", star, e.Const)
	case ExprAttribute:
		return star + sexpr(e.Value) + "." + e.Name
	case ExprSubscript:
		return star + sexpr(e.Value) + "[" + sexpr(e.Index) + "]"
	case ExprCall:
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, sexpr(a))
		}
		for _, k := range e.Keywords {
			parts = append(parts, k.Name+"="+sexpr(k.Value))
		}
		return star + sexpr(e.Value) + "(" + strings.Join(parts, ", ") + ")"
	case ExprLambda:
		return "lambda:" + sexpr(e.Value)
	case ExprOther:
		return "other<" + e.Text + ">"
	}
	var parts []string
	for _, a := range e.Args {
		parts = append(parts, sexpr(a))
	}
	return fmt.Sprintf("%s%s%s(%s)", star, e.Kind, e.Name, strings.Join(parts, " "))
}

func sstmt(s *Statement) string {
	var b strings.Builder
	b.WriteString(string(s.Kind))
	if s.Name != "" {
		b.WriteString(" " + s.Name)
	}
	for _, t := range s.Targets {
		b.WriteString(" t:" + sexpr(t))
	}
	if s.Op != "" {
		b.WriteString(" op:" + s.Op)
	}
	if s.Value != nil {
		b.WriteString(" v:" + sexpr(s.Value))
	}
	if len(s.Body) > 0 {
		var body []string
		for _, c := range s.Body {
			body = append(body, sstmt(c))
		}
		b.WriteString(" {" + strings.Join(body, "; ") + "}")
	}
	return b.String()
}

func TestStatements(t *testing.T) {
	tests := []struct{ text, want string }{
		{"a = b = 1", "assign t:a t:b v:1"},
		{"x, (y, *z) = f()", "assign t:tuple(x tuple(y *z)) v:f()"},
		{"n += 2", "augassign t:n op:+ v:2"},
		{"m @= w", "augassign t:m op:@ v:w"},
		{"v: int = 3", "annassign t:v v:3"},
		{"import os", "import"},
		{"def f(a):\n    return a", "def f {return v:a}"},
		{"@dec\nclass C:\n    x = 1", "class C {assign t:x v:1}"},
		{"for i in range(3):\n    s += i\nelse:\n    pass", "for t:i v:range(3) {augassign t:s op:+ v:i; other}"},
		{"while ok:\n    go()", "while v:ok {expr v:go()}"},
		{"if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    x = 3", "if v:a {assign t:x v:1; assign t:x v:2; assign t:x v:3}"},
		{"with open(p) as f, g() as (h, k):\n    f.read()", "with t:f t:tuple(h k) v:open(p) {expr v:f.read()}"},
		{"try:\n    a()\nexcept E as e:\n    b()\nfinally:\n    c()", "try {expr v:a(); expr v:b(); expr v:c()}"},
		{"del x, y[0]", "del t:x t:y[0]"},
		{"%matplotlib inline\nx = 1", "assign t:x v:1"},
		{"files = !ls", "assign t:files v:other<!ls>"},
	}
	for _, tt := range tests {
		f := ParseCell(tt.text)
		var got []string
		for _, s := range f.Statements {
			got = append(got, sstmt(s))
		}
		if g := strings.Join(got, " | "); g != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.text, g, tt.want)
		}
	}
}

func TestExprs(t *testing.T) {
	tests := []struct{ text, want string }{
		{"f(a, *b, k=1, **kw)", "f(a, *b, k=1, =kw)"},
		{"'s'", `"s"`},
		{"'a' 'b'", `"ab"`},
		{`"tab\t"`, `"tab\t"`},
		{"r'\\d'", `"\\d"`},
		{"f'{x}'", "other<f'{x}'>"},
		{"b'x'", "other<b'x'>"},
		{"1_000", "1000"},
		{"0x1F", "31"},
		{"2.5", "2.5"},
		{"1e3", "1000"},
		{"3j", "other<3j>"},
		{"True", "true"},
		{"None", "<nil>"},
		{"[1, x]", "list(1 x)"},
		{"(1,)", "tuple(1)"},
		{"{1: 'a', **m}", `dict(1 "a" other<**> *m)`},
		{"{1, 2}", "set(1 2)"},
		{"a @ b", "binop@(a b)"},
		{"-x", "unaryop-(x)"},
		{"not x", "unaryopnot(x)"},
		{"a < b <= c", "compare<(a b c)"},
		{"a not in b", "comparenot in(a b)"},
		{"a and b and c", "boolopand(a b c)"},
		{"a or b and c", "boolopor(a boolopand(b c))"},
		{"X[:, 3]", "X[tuple(slice(nil nil nil) 3)]"},
		{"X[1:2:3]", "X[slice(1 2 3)]"},
		{"X[::2]", "X[slice(nil nil 2)]"},
		{"lambda r: r.a", "lambda:r.a"},
		{"df.Age.mean()", "df.Age.mean()"},
		{"(a)", "a"},
	}
	for _, tt := range tests {
		f := ParseCell(tt.text)
		if len(f.Statements) != 1 || f.Statements[0].Value == nil {
			t.Errorf("%q: statements = %+v", tt.text, f.Statements)
			continue
		}
		if got := sexpr(f.Statements[0].Value); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.text, got, tt.want)
		}
	}
	// NameRange of an attribute is the part after the dot.
	e := ParseCell("df.Age").Statements[0].Value
	if e.NameRange != (finding.Range{Start: finding.Position{Line: 0, Character: 3}, End: finding.Position{Line: 0, Character: 6}}) || e.Text != "df.Age" {
		t.Errorf("attribute = %+v", e)
	}
	if c, ok := e.Chain(); !ok || c != "df.Age" {
		t.Errorf("Chain = %q, %v", c, ok)
	}
}

// TestExprNode: an ExprOther carries its tree-sitter node type, so a conditional expression
// is known as one however it is written; other kinds leave Node empty.
func TestExprNode(t *testing.T) {
	for _, tt := range []struct {
		src, node string
		args      int
	}{
		{"a if c else b", "conditional_expression", 3},
		{"(a\nif c\nelse b)", "conditional_expression", 3},
		{"a if(c)else b", "conditional_expression", 3},
		{"f(' if ', ' else ')", "", 2},
		{"yield x", "yield", 0},
	} {
		e := ParseCell(tt.src).Statements[0].Value
		for e.Kind == ExprTuple && len(e.Args) == 1 { // parenthesised
			e = e.Args[0]
		}
		if e.Node != tt.node || len(e.Args) != tt.args {
			t.Errorf("%q: Node %q with %d args, want %q with %d", tt.src, e.Node, len(e.Args), tt.node, tt.args)
		}
	}
}
