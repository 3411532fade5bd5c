package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func dumpNode(b *strings.Builder, src string, n *node, depth int) {
	txt := ""
	if len(n.kids) == 0 {
		txt = " " + fmt.Sprintf("%q", src[n.start:n.end])
	}
	f := ""
	if n.field != "" {
		f = n.field + ": "
	}
	if !n.named && len(n.kids) == 0 {
		fmt.Fprintf(b, "%s%s'%s'\n", strings.Repeat("  ", depth), f, n.typ)
		return
	}
	fmt.Fprintf(b, "%s%s%s%s\n", strings.Repeat("  ", depth), f, n.typ, txt)
	for _, k := range n.kids {
		dumpNode(b, src, k, depth+1)
	}
}

func TestDump(t *testing.T) {
	src := os.Getenv("DUMP")
	if src == "" {
		t.Skip()
	}
	tr := parseTree([]byte(src), nil)
	var b strings.Builder
	dumpNode(&b, src, mirror(tr), 0)
	fmt.Println(b.String())
}

func TestDumpFacts(t *testing.T) {
	src := os.Getenv("FACTS")
	if src == "" {
		t.Skip()
	}
	f := ParseCell(src)
	b, _ := json.MarshalIndent(f, "", " ")
	if os.Getenv("FULL") == "" {
		f.Statements = nil
		b, _ = json.Marshal(struct{ Defs, Uses, Globals, Imports, Magics, SideEffects, SyntaxErrors, StarImports any }{f.Defs, f.Uses, f.Globals, f.Imports, f.Magics, f.SideEffects, f.SyntaxErrors, f.StarImports})
	}
	fmt.Println(string(b))
}
