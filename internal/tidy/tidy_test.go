// Package tidy holds repository-wide checks that keep the code base readable:
// every package and every exported name carries a doc comment, as the
// developers' guide asks.
package tidy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/premortem/premortem/internal/testkit/scenario"
)

// TestDocComments fails when a package of the module has no package doc
// comment, or an exported top-level name has no doc comment. It uses go/parser
// directly rather than golang.org/x/tools/go/packages so it stays fast and does
// not need the packages to type-check (others may be mid-edit).
func TestDocComments(t *testing.T) {
	root := scenario.Root(t) // go.mod's directory
	pkgs, err := parsePackages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatalf("no Go packages found under %s", root)
	}
	var misses []string
	for _, dir := range sortedKeys(pkgs) {
		misses = append(misses, undocumented(root, dir, pkgs[dir])...)
	}
	for _, m := range misses {
		t.Error(m)
	}
}

// TestUndocumentedFindsMisses keeps the checker itself honest: a checker that
// reports nothing would pass every tree.
func TestUndocumentedFindsMisses(t *testing.T) {
	const src = `package p

// Documented is fine.
func Documented() {}

func Bare() {}

func unexported() {}

type T struct{}

// M is fine.
func (T) M() {}

func (*T) N() {}

type hidden struct{}

func (hidden) Exported() {}

// Grouped constants share the group's comment.
const (
	A = 1
	B = 2
)

const (
	C = 3
	// D has its own.
	D = 4
	e = 5
)

var V int

type (
	// G1 is fine.
	G1 int
	G2 int
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := undocumented("/r", "/r/p", []*parsedFile{{path: "/r/p/p.go", fset: fset, file: f}})
	want := []string{
		"p: package has no doc comment",
		"p/p.go:6: func Bare has no doc comment",
		"p/p.go:10: type T has no doc comment",
		"p/p.go:15: method T.N has no doc comment",
		"p/p.go:28: const C has no doc comment",
		"p/p.go:34: var V has no doc comment",
		"p/p.go:39: type G2 has no doc comment",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("undocumented:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type parsedFile struct {
	path string
	fset *token.FileSet
	file *ast.File
}

// parsePackages parses every non-test Go file below root, grouped by directory.
// Directories the go tool ignores (testdata, _x, .x) and node_modules are skipped.
func parsePackages(root string) (map[string][]*parsedFile, error) {
	pkgs := map[string][]*parsedFile{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module is not ours to judge
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w (fix the syntax error first)", path, err)
		}
		dir := filepath.Dir(path)
		pkgs[dir] = append(pkgs[dir], &parsedFile{path: path, fset: fset, file: f})
		return nil
	})
	return pkgs, err
}

// undocumented lists the doc comment misses of one package's files.
func undocumented(root, dir string, files []*parsedFile) []string {
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	var misses []string
	hasPkgDoc := false
	for _, pf := range files {
		if pf.file.Doc != nil && strings.TrimSpace(pf.file.Doc.Text()) != "" {
			hasPkgDoc = true
		}
	}
	if !hasPkgDoc {
		misses = append(misses, rel(dir)+": package has no doc comment")
	}
	for _, pf := range files {
		miss := func(pos token.Pos, what string) {
			misses = append(misses, fmt.Sprintf("%s:%d: %s has no doc comment", rel(pf.path), pf.fset.Position(pos).Line, what))
		}
		for _, decl := range pf.file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv == nil {
					miss(d.Pos(), "func "+d.Name.Name)
					continue
				}
				recv := receiverName(d.Recv)
				if recv != "" && ast.IsExported(recv) {
					miss(d.Pos(), "method "+recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				if d.Tok == token.IMPORT {
					continue
				}
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && (d.Doc == nil || d.Lparen.IsValid()) {
							miss(s.Pos(), "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						// A commented const/var group documents its members.
						if d.Doc != nil || s.Doc != nil || s.Comment != nil {
							continue
						}
						for _, n := range s.Names {
							if n.IsExported() {
								miss(n.Pos(), d.Tok.String()+" "+n.Name)
								break
							}
						}
					}
				}
			}
		}
	}
	return misses
}

// receiverName returns the base type name of a method receiver.
func receiverName(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func sortedKeys(m map[string][]*parsedFile) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
