package finding

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestRegistry checks that every entry is complete: a kebab-case code registered once, at
// least one layer, a one-line summary and a paragraph, exceptions that look like Python
// class names, and a reason exactly when no static or rules scenario can show the code.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Registry {
		if !kebab.MatchString(r.Code) {
			t.Errorf("%q: a code is kebab case", r.Code)
		}
		if seen[r.Code] {
			t.Errorf("%s: registered twice", r.Code)
		}
		seen[r.Code] = true
		if len(r.Layers) == 0 {
			t.Errorf("%s: no layer", r.Code)
		}
		for _, l := range r.Layers {
			switch l {
			case SourceStatic, SourceRules, SourceShadow, SourceLLM:
			default:
				t.Errorf("%s: unknown layer %q", r.Code, l)
			}
		}
		if r.Summary == "" || strings.ContainsAny(r.Summary, "\n") || strings.HasSuffix(r.Summary, ".") || len(r.Summary) > 100 {
			t.Errorf("%s: the summary is one line of at most 100 characters without a final period: %q", r.Code, r.Summary)
		}
		if len(r.Doc) < 40 || !strings.HasSuffix(r.Doc, ".") {
			t.Errorf("%s: the doc is a paragraph ending in a period: %q", r.Code, r.Doc)
		}
		for _, e := range r.Exceptions {
			if !regexp.MustCompile(`^[A-Z][A-Za-z]*(Error|Exception)$`).MatchString(e) {
				t.Errorf("%s: %q is not an exception class name", r.Code, e)
			}
		}
		scenario := r.Has(SourceStatic) || r.Has(SourceRules)
		if scenario && r.NoScenario != "" {
			t.Errorf("%s: a static or rules code needs a scenario, not a reason (%q)", r.Code, r.NoScenario)
		}
		if !scenario && r.NoScenario == "" {
			t.Errorf("%s: emitted only by %v, it needs NoScenario to say why no scenario shows it", r.Code, r.Layers)
		}
		if got, ok := Lookup(r.Code); !ok || got.Code != r.Code {
			t.Errorf("Lookup(%q) = %v, %v", r.Code, got, ok)
		}
	}
	if _, ok := Lookup("no-such-code"); ok {
		t.Error("Lookup of an unregistered code succeeded")
	}
}

// TestConstantsRegistered parses codes.go: every string constant declared there (but
// ShadowCodes, which is prose) is a registered code, and every registered code has one.
func TestConstantsRegistered(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if name.Name == "ShadowCodes" {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: declare a code as a string literal", name.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				if other, dup := declared[v]; dup {
					t.Errorf("%s and %s both declare %q", other, name.Name, v)
				}
				declared[v] = name.Name
			}
		}
	}
	for code, name := range declared {
		if _, ok := Lookup(code); !ok {
			t.Errorf("constant %s = %q is not in Registry", name, code)
		}
	}
	for _, r := range Registry {
		if _, ok := declared[r.Code]; !ok {
			t.Errorf("registered code %q has no constant in codes.go", r.Code)
		}
	}
}

// TestRulesDocFresh fails when docs/rules.md is not what the registry generates.
func TestRulesDocFresh(t *testing.T) {
	got, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatalf("reading the rules page: %v (run go generate ./finding)", err)
	}
	if !bytes.Equal(got, Markdown()) {
		t.Error("docs/rules.md is stale: run go generate ./finding")
	}
	for _, r := range Registry {
		if !bytes.Contains(got, []byte("\n### "+r.Code+"\n")) {
			t.Errorf("docs/rules.md has no section for %s", r.Code)
		}
	}
}
