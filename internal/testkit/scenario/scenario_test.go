package scenario

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `The fixed twin of x: prose, not a key.
verdict: crash
no-shadow.verdict: unknown
# code: commented out
modes: shadow  no-shadow
-- ran.py --
import pandas as pd
-- notify textDocument/didOpen --
{"a": 1}
-- target.py --
df["Age"]

-- people.csv --
Name,Age
-- unrun.py --
print(1)
`

func TestParse(t *testing.T) {
	f := Parse("dir/pandas_ok.txtar", []byte(sample))
	if f.Name != "pandas_ok" {
		t.Errorf("Name = %q", f.Name)
	}
	wantHeader := map[string]string{"verdict": "crash", "no-shadow.verdict": "unknown", "modes": "shadow  no-shadow"}
	if !reflect.DeepEqual(f.Header, wantHeader) {
		t.Errorf("Header = %v, want %v", f.Header, wantHeader)
	}
	var names []string
	for _, s := range f.Sections {
		names = append(names, s.Name)
	}
	if want := []string{"ran.py", "notify textDocument/didOpen", "target.py", "people.csv", "unrun.py"}; !reflect.DeepEqual(names, want) {
		t.Errorf("sections %q, want %q", names, want)
	}
	s, ok := f.Lookup("notify textDocument/didOpen")
	if !ok || s.Verb() != "notify" || s.Arg() != "textDocument/didOpen" {
		t.Errorf("Lookup: %v %q %q", ok, s.Verb(), s.Arg())
	}
	var v map[string]int
	f.JSON(t, s, &v)
	if v["a"] != 1 {
		t.Errorf("JSON = %v", v)
	}
	if s, _ := f.Lookup("target.py"); s.Text() != "df[\"Age\"]\n" || !reflect.DeepEqual(s.Lines(), []string{`df["Age"]`}) {
		t.Errorf("target.py: Text %q, Lines %q", s.Text(), s.Lines())
	}
	if s := (Section{Name: "cell"}); s.Verb() != "cell" || s.Arg() != "" {
		t.Errorf("a name without argument: %q %q", s.Verb(), s.Arg())
	}
}

func TestSetFormat(t *testing.T) {
	f := Parse("x.txtar", []byte(sample))
	f.Set("unrun.py", []byte("print(2)\n"))
	f.Set("facts.json", []byte("{}\n"))
	g := Parse("x.txtar", f.Format())
	if g.Comment != f.Comment || len(g.Sections) != 6 {
		t.Fatalf("round trip: %q, %d sections", g.Comment, len(g.Sections))
	}
	if s, _ := g.Lookup("unrun.py"); string(s.Data) != "print(2)\n" {
		t.Errorf("replaced section: %q", s.Data)
	}
	if s, _ := g.Lookup("facts.json"); string(s.Data) != "{}\n" || g.Sections[5].Name != "facts.json" {
		t.Errorf("added section: %q", s.Data)
	}
}

func TestNotebook(t *testing.T) {
	f := Parse("x.txtar", []byte(strings.Replace(sample, "notify textDocument/didOpen", "config.json", 1)))
	nb, target := f.Notebook(t)
	if target != 1 || len(nb.Cells) != 3 {
		t.Fatalf("target %d of %d cells", target, len(nb.Cells))
	}
	for i, want := range []struct {
		text  string
		order int
	}{{"import pandas as pd", 1}, {"df[\"Age\"]\n", 0}, {"print(1)", 0}} {
		if c := nb.Cells[i]; c.Text != want.text || c.ExecutionOrder != want.order {
			t.Errorf("cell %d: %q run %d, want %q run %d", i, c.Text, c.ExecutionOrder, want.text, want.order)
		}
	}
	dir := t.TempDir()
	f.WriteData(t, dir)
	path := WriteNotebook(t, dir, nb)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The data files and the notebook; no cell is written as a file.
	if want := []string{"config.json", "people.csv", "scenario.ipynb"}; !reflect.DeepEqual(names, want) || filepath.Base(path) != "scenario.ipynb" {
		t.Errorf("dir holds %q, want %q", names, want)
	}
}

// TestOneTwinSuffix: every scenario file under testdata names its twin with TwinSuffix or
// NoFixSuffix, never with the suffixes they replaced, so a suite that pairs scenarios by
// name (internal/testkit/twins) finds every pair.
func TestOneTwinSuffix(t *testing.T) {
	n := 0
	err := filepath.WalkDir(Dir(t), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, Ext) {
			return err
		}
		n++
		name := strings.TrimSuffix(d.Name(), Ext)
		for _, old := range []string{"-ok", "_fixed", "-fixed", "-nofix"} {
			if strings.HasSuffix(name, old) {
				t.Errorf("%s: a twin is named NAME%s (or NAME%s where no fix may be offered), not NAME%s", path, TwinSuffix, NoFixSuffix, old)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("found %d scenario files under testdata, want the suites' hundreds", n)
	}
}
