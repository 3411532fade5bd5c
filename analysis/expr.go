package analysis

import "github.com/premortem/premortem/finding"

// ExprKind is the kind of a node in the small expression tree rules work on.
type ExprKind string

// Expression kinds. Anything else tree-sitter knows becomes ExprOther with its text.
const (
	ExprName      ExprKind = "name"      // Name = identifier
	ExprAttribute ExprKind = "attribute" // Value.Name
	ExprSubscript ExprKind = "subscript" // Value[Index]
	ExprCall      ExprKind = "call"      // Value(Args..., Keywords...)
	ExprConst     ExprKind = "const"     // Const: string, int64, float64, bool, or nil for None
	ExprList      ExprKind = "list"      // [Args...]
	ExprTuple     ExprKind = "tuple"     // (Args...) and bare a, b; also X[:, 3]'s index
	ExprDict      ExprKind = "dict"      // {Args[0]: Args[1], ...} flattened pairs
	ExprSet       ExprKind = "set"       // {Args...}
	ExprBinOp     ExprKind = "binop"     // Args[0] Name Args[1], Name is the operator ("+", "@")
	ExprUnaryOp   ExprKind = "unaryop"   // Name Args[0] ("-", "not")
	ExprCompare   ExprKind = "compare"   // Args[0] Name Args[1] (first operator only)
	ExprBoolOp    ExprKind = "boolop"    // Args joined by Name ("and"/"or")
	ExprSlice     ExprKind = "slice"     // Args = [lower, upper, step], nil where absent
	ExprLambda    ExprKind = "lambda"
	ExprOther     ExprKind = "other"
)

// Expr is an expression node with its range and source text.
type Expr struct {
	Kind  ExprKind
	Range finding.Range
	// Text is the expression's source text, for messages and fixes.
	Text string
	// Name: identifier (Name), attribute name (Attribute), operator (BinOp, UnaryOp,
	// Compare, BoolOp).
	Name string
	// NameRange is the range of Name for Attribute nodes (the part after the dot).
	NameRange finding.Range
	// Value: the object of Attribute and Subscript, the callee of Call.
	Value *Expr
	// Index: the index of Subscript.
	Index *Expr
	// Args: positional arguments of Call; elements of List/Tuple/Set; flattened key/value
	// pairs of Dict; operands of BinOp/UnaryOp/Compare/BoolOp; bounds of Slice.
	Args []*Expr
	// Keywords: keyword arguments of Call (**kwargs has Name "").
	Keywords []Keyword
	// Const: the literal value of a Const (string, int64, float64, bool, nil).
	Const any
	// Parts are the expressions inside a comprehension or generator (Node
	// "list_comprehension", "generator_expression"...): its element (a dict comprehension's
	// key and value), the iterables and the conditions, in source order. They are apart from
	// Args because the comprehension binds names of its own: a walker that resolves names
	// against the cell's must not enter them, one that edits text may.
	Parts []*Expr
	// Starred is true for *args elements.
	Starred bool
	// Node is the tree-sitter node type of an ExprOther ("conditional_expression" for
	// `a if cond else b`, whose Args are then [a, cond, b]); empty for the other kinds and
	// for masked IPython syntax. Rules test it rather than searching Text, which a string
	// literal or a line break can fool.
	Node string
}

// Keyword is one keyword argument.
type Keyword struct {
	Name  string
	Value *Expr
	Range finding.Range
}

// Chain returns the dotted name of a Name or Attribute-of-Name chain ("pd.get_dummies"),
// Root is the name an attribute, subscript or call chain starts from (df in
// df["a"].fillna(0)); "" when it starts from anything else or e is nil.
func (e *Expr) Root() string {
	for e != nil {
		switch e.Kind {
		case ExprName:
			return e.Name
		case ExprAttribute, ExprSubscript, ExprCall:
			e = e.Value
		default:
			return ""
		}
	}
	return ""
}

// and false for anything else (calls, subscripts in the chain).
func (e *Expr) Chain() (string, bool) {
	switch {
	case e == nil:
		return "", false
	case e.Kind == ExprName:
		return e.Name, true
	case e.Kind == ExprAttribute:
		base, ok := e.Value.Chain()
		if !ok {
			return "", false
		}
		return base + "." + e.Name, true
	}
	return "", false
}

// Keyword returns the value of keyword argument name, or nil.
func (e *Expr) Keyword(name string) *Expr {
	for _, k := range e.Keywords {
		if k.Name == name {
			return k.Value
		}
	}
	return nil
}

// StmtKind is the kind of a statement.
type StmtKind string

// Statement kinds.
const (
	StmtAssign    StmtKind = "assign"    // Targets = Value (a = b = v gives two targets)
	StmtAugAssign StmtKind = "augassign" // Targets[0] Op= Value
	StmtAnnAssign StmtKind = "annassign" // Targets[0]: T = Value
	StmtExpr      StmtKind = "expr"      // Value
	StmtImport    StmtKind = "import"
	StmtDef       StmtKind = "def"
	StmtClass     StmtKind = "class"
	StmtFor       StmtKind = "for"   // for Targets[0] in Value: Body
	StmtWhile     StmtKind = "while" // Body
	StmtIf        StmtKind = "if"    // Body holds all branches' statements
	StmtWith      StmtKind = "with"  // Body
	StmtTry       StmtKind = "try"   // Body holds try/except/else/finally statements
	StmtDelete    StmtKind = "del"   // Targets
	StmtReturn    StmtKind = "return"
	StmtOther     StmtKind = "other"
)

// Statement is one statement of the cell.
type Statement struct {
	Kind    StmtKind
	Range   finding.Range
	Targets []*Expr
	Value   *Expr
	// Op is the augmented operator ("+") of AugAssign.
	Op string
	// Name of a def or class.
	Name string
	// Params are a def's parameter names, in order (self included; * and ** ones too).
	Params []string
	// Body holds nested statements of compound statements, in source order.
	Body []*Statement
}
