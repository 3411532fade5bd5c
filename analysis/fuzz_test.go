package analysis

import (
	"reflect"
	"testing"

	"github.com/premortem/premortem/finding"
)

// FuzzParseCell checks that parsing never panics, that masking keeps offsets, and that an
// incremental re-parse agrees with a fresh one.
func FuzzParseCell(f *testing.F) {
	for _, s := range []string{
		"x = 1\nprint(x)", "%%time\ny = [i for i in z]", "!ls\n%cd ..\ndf?", "def f(:\n  pass",
		"s = 'é中😀' + t\n", "x = (a\n% b)", "%%bash\necho", "class C:\n    x = [y for y in x]",
		"try:\n    a\nexcept NameError:\n    pass", "x = !ls \\\n  -l", "\"\"\"\n%d\n\"\"\"",
	} {
		f.Add(s, "x = 1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		m := maskCell(a)
		if len(m.src) != len(a) {
			t.Fatalf("masking changed the length: %d -> %d", len(a), len(m.src))
		}
		// Every line end (a "\n", or a lone "\r", which Python ends a line at too) is a
		// "\n" for tree-sitter, and nothing else is.
		for i := range a {
			end := a[i] == '\n' || a[i] == '\r' && (i+1 == len(a) || a[i+1] != '\n')
			if end != (m.src[i] == '\n') {
				t.Fatalf("masking moved a newline at %d", i)
			}
		}
		fa := ParseCell(a)
		idx := NewLineIndex(a)
		check := func(r finding.Range) {
			if r.Start.Line >= idx.Lines() || r.End.Line >= idx.Lines() || r.End.Before(r.Start) {
				t.Fatalf("bad range %v in %q", r, a)
			}
		}
		for _, d := range fa.Defs {
			check(d.Range)
		}
		for _, u := range fa.Uses {
			check(u.Range)
		}
		for _, e := range fa.SideEffects {
			check(e.Range)
		}
		var c Cache
		c.Facts("c", b)
		if got := c.Facts("c", a); !reflect.DeepEqual(got, fa) {
			t.Fatalf("incremental parse of %q after %q differs", a, b)
		}
	})
}
