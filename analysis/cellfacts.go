package analysis

import "github.com/premortem/premortem/finding"

// CellFacts is everything the static layer learns from one cell's text with tree-sitter.
// Every fact carries its range in the cell (UTF-16 columns, see Position). Parsing never
// fails: a cell with syntax errors still yields the facts of the parts that parsed, and
// SyntaxErrors says where the rest is.
type CellFacts struct {
	// Defs are the names the cell binds at its top level (module scope), in source order.
	Defs []Def
	// Uses are the free names of the cell: names read before the cell itself binds them,
	// including names read inside functions the cell defines and calls. Builtins are
	// included (the dataflow filters them).
	Uses []Use
	// Globals are names declared `global` inside functions (they bind at module scope).
	Globals []string
	// Imports in source order (also present in Defs as DefImport).
	Imports []Import
	// Attrs are attribute chains rooted at a name: df.Age.mean, model.predict.
	Attrs []AttrChain
	// Subscripts are subscripts whose key is a constant: df['Age'], df[['a','b']], X[:, 3].
	Subscripts []Subscript
	// Calls are calls whose callee is a name or attribute chain, with their arguments.
	Calls []Call
	// Magics are IPython magics and shell lines, masked before parsing.
	Magics []Magic
	// SideEffects are operations a shadow run must not perform for real.
	SideEffects []SideEffect
	// Statements are the cell's top-level statements as a small syntax tree, in order, for
	// rules that propagate known facts line by line.
	Statements []*Statement
	// SyntaxErrors are ranges tree-sitter could not parse (after masking magics).
	SyntaxErrors []finding.Range
	// StarImports lists modules imported with `from m import *`: after one, any free name
	// may come from it. Constructs that define names nobody can list statically are listed
	// too, by their text: "%run helpers.py", "%store -r", "exec()", "globals()".
	StarImports []string
	// Functions are the functions the cell defines at module level, with the global names
	// their bodies read, so a call from another cell can be checked. (Added by the analysis
	// helper; additive.)
	Functions []Function
	// Limits are the parts of the cell premortem did not analyse because they exceed a
	// bound on the work one cell may cost (see MaxCellBytes): the facts of those parts are
	// missing, the rest are complete.
	Limits []Limit
}

// Function is a function a cell defines at module level.
type Function struct {
	Name  string
	Range finding.Range // the name in the def
	// Reads are the names the body (and nested functions) reads from module scope, with
	// their ranges in the defining cell; InFunction is Name.
	Reads []Use
	// Calls are the bare names the body calls: their reads count when this one is called.
	Calls []string
	// Globals are names the body declares global and assigns.
	Globals []string
}

// DefKind says how a name got bound.
type DefKind string

// Binding forms.
const (
	DefAssign    DefKind = "assign"
	DefAugAssign DefKind = "augassign"
	DefFor       DefKind = "for"
	DefWith      DefKind = "with"
	DefExcept    DefKind = "except"
	DefFunction  DefKind = "def"
	DefClass     DefKind = "class"
	DefImport    DefKind = "import"
	DefWalrus    DefKind = "walrus"
	DefGlobal    DefKind = "global"
	DefDelete    DefKind = "del"
)

// Def is one binding of a name at the cell's top level.
type Def struct {
	Name  string
	Kind  DefKind
	Range finding.Range // the name's occurrence
	// Conditional is true when the binding sits inside if/for/while/try/with, so it may not
	// happen.
	Conditional bool
}

// Use is one read of a free name.
type Use struct {
	Name  string
	Range finding.Range
	// InFunction names the function the read sits in when the read happens through a call
	// to a function defined in this cell ("" at top level).
	InFunction string
	// Guarded is true when the read sits under try/except NameError or an `if 'x' in
	// globals()`-style check, so NameError is not certain.
	Guarded bool
}

// Import is one imported name.
type Import struct {
	// Module is the dotted module ("sklearn.model_selection"); Name is the imported name for
	// from-imports ("train_test_split"), "" for plain imports; Alias the `as` name.
	Module string
	Name   string
	Alias  string
	Star   bool
	Range  finding.Range
}

// Bound returns the name this import binds in the namespace.
func (i Import) Bound() string {
	switch {
	case i.Alias != "":
		return i.Alias
	case i.Name != "":
		return i.Name
	}
	for j := 0; j < len(i.Module); j++ {
		if i.Module[j] == '.' {
			return i.Module[:j]
		}
	}
	return i.Module
}

// AttrChain is a dotted access rooted at a name: ["df", "Age", "mean"].
type AttrChain struct {
	Parts []string
	Range finding.Range
	// PartRanges[i] is the range of Parts[i], so a rule can mark the missing attribute.
	PartRanges []finding.Range
	// Called is true when the chain is the callee of a call (model.predict(...)).
	Called bool
}

// Subscript is obj[key] with a constant key.
type Subscript struct {
	// Object is the subscripted expression (Kind Name or Attribute usually).
	Object *Expr
	// Keys are the constant keys: one for df['a'], several for df[['a','b']]. Strings stay
	// strings, ints are int64, floats float64.
	Keys []any
	// List is true for the df[['a','b']] form.
	List bool
	// Index is the whole index expression (a Tuple for X[:, 3]).
	Index *Expr
	Range finding.Range
	// KeyRanges[i] is the range of Keys[i] (the string literal).
	KeyRanges []finding.Range
}

// Call is a call with a name or attribute chain as callee.
type Call struct {
	// Callee is the dotted callee text: "pd.get_dummies", "model.fit", "print".
	Callee string
	// Expr is the call expression itself.
	Expr  *Expr
	Range finding.Range
}

// MagicKind distinguishes IPython syntax.
type MagicKind string

// Magic kinds.
const (
	MagicLine  MagicKind = "line"  // %matplotlib inline
	MagicCell  MagicKind = "cell"  // %%time (first line; the body may or may not be Python)
	MagicShell MagicKind = "shell" // !pip install x, also x = !ls
	MagicHelp  MagicKind = "help"  // obj? / obj??
)

// Magic is one masked IPython construct.
type Magic struct {
	Kind  MagicKind
	Name  string // "matplotlib", "time", "bash", "pip" (shell: the command word)
	Text  string // the whole original line
	Range finding.Range
	// PythonBody is false for cell magics whose body is not Python (%%bash, %%html,
	// %%writefile...): the body is masked and yields no facts.
	PythonBody bool
}

// SideEffectKind groups operations a shadow run must refuse.
type SideEffectKind string

// Side-effect kinds.
const (
	EffectFileWrite  SideEffectKind = "file-write"  // open(..., 'w'), to_csv, savefig, torch.save, np.save, pickle.dump to file
	EffectFileDelete SideEffectKind = "file-delete" // os.remove, shutil.rmtree, Path.unlink
	EffectFileMove   SideEffectKind = "file-move"   // os.rename, shutil.move
	EffectOSMutation SideEffectKind = "os-mutation" // os.chdir, os.environ[...] =, os.makedirs, chmod
	EffectNetwork    SideEffectKind = "network"     // requests, urllib, socket, download helpers
	EffectSubprocess SideEffectKind = "subprocess"  // subprocess.*, os.system, os.popen, shell magics
	EffectGPU        SideEffectKind = "cuda"        // .cuda(), device='cuda' (not shadowable after fork)
	EffectLongRun    SideEffectKind = "long-run"    // fit loops, training epochs: may exceed the shadow budget
)

// SideEffect is one operation found in the cell.
type SideEffect struct {
	Kind  SideEffectKind
	Call  string // the callee or construct, e.g. "df.to_csv", "open(mode='w')", "!pip"
	Range finding.Range
}
