package rules_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

// codeConstants maps the names of the code constants in finding/codes.go to their values.
func codeConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "finding", "codes.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[n.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	return consts
}

// TestCodesRegistered reads the source of analysis, analysis/rules and llm: every code a finding
// is given (the code argument of report and reportModule, a Finding's Code field, what a
// variable named code is set to) is a constant of package finding naming a registered code,
// and no string literal spells a registered code (use the constant). So a new code cannot be
// emitted without being registered, documented and, by TestEveryCodeHasScenarios, shown.
func TestCodesRegistered(t *testing.T) {
	consts := codeConstants(t)
	registered := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Name != "finding" {
			return false
		}
		v, ok := consts[sel.Sel.Name]
		if !ok {
			return false
		}
		_, ok = finding.Lookup(v)
		return ok
	}
	var files []string
	for _, dir := range []string{".", "..", filepath.Join("..", "..", "llm")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	sites := 0
	for _, path := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// check accepts a registered constant, or a variable or parameter named code (its
		// assignments and the callers passing it are checked in turn).
		check := func(e ast.Expr, what string) {
			sites++
			if id, ok := e.(*ast.Ident); ok && id.Name == "code" {
				return
			}
			if !registered(e) {
				t.Errorf("%s: %s is not a registered finding.X code constant", fset.Position(e.Pos()), what)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				switch {
				case name == "report" && len(n.Args) == 8:
					check(n.Args[2], "report's code")
				case name == "reportModule" && len(n.Args) == 9:
					check(n.Args[4], "reportModule's code")
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Code" {
					check(n.Value, "a Finding's Code")
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name == "code" && i < len(n.Rhs) {
						check(n.Rhs[i], "the value of code")
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if v, err := strconv.Unquote(n.Value); err == nil {
						if _, ok := finding.Lookup(v); ok {
							t.Errorf("%s: the literal %s spells a registered code: use its finding constant", fset.Position(n.Pos()), n.Value)
						}
					}
				}
			}
			return true
		})
	}
	if sites < 80 {
		t.Errorf("found %d code sites in analysis and analysis/rules, want at least 80: the scan no longer sees them", sites)
	}
}
