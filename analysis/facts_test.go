package analysis

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/finding"
)

func defNames(f *CellFacts) []string {
	var out []string
	for _, d := range f.Defs {
		s := d.Name + ":" + string(d.Kind)
		if d.Conditional {
			s += "?"
		}
		out = append(out, s)
	}
	return out
}

func useNames(f *CellFacts) []string {
	var out []string
	for _, u := range f.Uses {
		s := u.Name
		if u.InFunction != "" {
			s += "@" + u.InFunction
		}
		if u.Guarded {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

func TestParseCellNames(t *testing.T) {
	tests := []struct {
		name string
		text string
		defs string // space-separated name:kind, '?' when conditional
		uses string // space-separated free names, name@func when read via a call, '!' guarded
	}{
		{"assign", "a = b = c", "a:assign b:assign", "c"},
		{"tuple unpack", "x, (y, *z) = w", "x:assign y:assign z:assign", "w"},
		{"augassign reads", "n += 1", "n:augassign", "n"},
		{"flow", "print(x)\nx = 1\nprint(x)", "x:assign", "print x print"},
		{"for", "for i, j in pairs:\n    t = i", "i:for? j:for? t:assign?", "pairs"},
		{"loop carried", "for i in r:\n    if i: print(prev)\n    prev = i", "i:for? prev:assign?", "r print"},
		{"with", "with open(p) as fh, g() as (a, b):\n    pass", "fh:with? a:with? b:with?", "open p g"},
		{"except", "try:\n    v = 1\nexcept ValueError as e:\n    print(e, v)", "v:assign? e:except?", "ValueError print"},
		{"imports", "import a.b.c\nimport d as e\nfrom f.g import h, i as j\nfrom __future__ import annotations",
			"a:import e:import h:import j:import", ""},
		{"def", "@dec\ndef f(a, b=dflt, *c, d: T = 1, **e) -> R:\n    return a + b + c + d + e + g", "f:def", "dec dflt T R"},
		{"def called", "def f(a):\n    return a + g\nf(1)\ng = 2", "f:def g:assign", "g@f"},
		{"def called after def", "def f():\n    return g\ng = 2\nf()", "f:def g:assign", ""},
		{"transitive call", "def f():\n    return h()\ndef h():\n    return k\nf()", "f:def h:def", "k@h"},
		{"local not free", "def f(x):\n    y = 1\n    for z in x: y += z\n    return y\nf(0)", "f:def", ""},
		{"global", "def f():\n    global gg\n    gg = 1\nf()\nprint(gg)", "gg:global? f:def", "print"},
		{"class", "class C(Base):\n    a = 1\n    b = a + outer\n    def m(self):\n        return a", "C:class", "Base outer"},
		{"lambda", "f = lambda x, y=d: x + y + q", "f:assign", "d q"},
		{"lambda later binding", "f = lambda: q\nq = 1", "f:assign q:assign", ""},
		{"comprehension", "r = [x * k for x in xs if x]\nprint(x)", "r:assign", "k xs print x"},
		{"nested comprehension", "m = [[i+j for j in row] for row in grid for i in row]", "m:assign", "grid"},
		{"generator argument", "t = tuple(s.detach() for s in states)\n' '.join(str(j) for j in range(n))", "t:assign", "tuple states str range n"},
		{"dict comprehension", "d = {k: v for k, v in items.items()}", "d:assign", "items"},
		{"comprehension first iterable", "y = [x for x in x]", "y:assign", "x"},
		{"walrus", "if (n := len(a)) > 10:\n    print(n)", "n:walrus", "len a print"},
		{"walrus in comprehension", "ys = [z for x in xs if (z := f(x))]\nprint(z)", "z:walrus ys:assign", "xs f print"},
		{"del", "x = 1\ndel x\nprint(x)", "x:assign x:del", "print x"},
		{"del undefined", "del ghost", "ghost:del", "ghost"},
		{"guard try", "try:\n    model\nexcept NameError:\n    model = None", "model:assign?", "model! NameError"},
		{"guard bare except", "try:\n    w\nexcept:\n    pass", "", "w!"},
		{"no guard for ValueError", "try:\n    w\nexcept ValueError:\n    pass", "", "w ValueError"},
		{"guard globals", "if 'df' in globals():\n    print(df)", "", "globals print df!"},
		{"annotation only", "x: int\nprint(x)", "", "int print x"},
		{"annassign", "x: int = 3", "x:assign", "int"},
		{"attr target", "df.col = v\ndf['a'] = w", "", "df v df w"},
		{"keyword names", "f(a=1, b=c)", "", "f c"},
		{"fstring", "s = f'{a!r:>{w}} {b}'", "s:assign", "a w b"},
		{"star import", "from m import *\nx = foo", "x:assign", "foo"},
		{"match", "match cmd:\n    case Point(x=0, y=yy):\n        pass\n    case [a, *rest]:\n        pass\n    case other:\n        pass",
			"yy:assign? a:assign? rest:assign? other:assign?", "cmd Point"},
		{"decorated class", "@dataclass\nclass P:\n    x: int = 0", "P:class", "dataclass int"},
		{"nested function free", "def outer():\n    v = 1\n    def inner():\n        return v + w\n    return inner()\nouter()", "outer:def", "w@outer"},
		{"recursive", "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\nfact(5)", "fact:def", ""},
		{"redefined function not called", "def f():\n    return nope\nf = 3\nf()", "f:def f:assign", ""},
		{"timeit cell", "%%timeit\ny = x + 1", "", "x"},
		{"capture", "%%capture out\nz = 1", "out:assign z:assign", ""},
		{"time line", "%time y = f(x)\nprint(y)", "y:assign", "f x print"},
		{"bash cell", "%%bash\necho $x\nls -l", "", ""},
		{"help", "df?\n?np.mean\nx = 1", "x:assign", ""},
		{"shell assign", "files = !ls *.csv\nprint(files)", "files:assign", "print"},
		{"magic in block", "for i in r:\n    %time f(i)", "i:for?", "r f"},
		{"percent continuation", "x = (a\n     % b)", "x:assign", "a b"},
		{"string with percent line", "s = \"\"\"\n%d items\n!not shell\n\"\"\"", "s:assign", ""},
		{"leading blank then cell magic", "\n\n%%time\nq = 1", "q:assign", ""},
		{"run magic", "%run helpers.py\nhelp_fn()", "", "help_fn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseCell(tt.text)
			if got, want := strings.Join(defNames(f), " "), tt.defs; got != want {
				t.Errorf("defs = %q, want %q", got, want)
			}
			if got, want := strings.Join(useNames(f), " "), tt.uses; got != want {
				t.Errorf("uses = %q, want %q", got, want)
			}
		})
	}
}

func TestParseCellAccesses(t *testing.T) {
	f := ParseCell("m = df.Age.mean()\ncols = df[['a', 'b']]\nX[:, 3]\ns = df['Age']\nimport sklearn.model_selection as ms\nms.train_test_split(X, y, test_size=0.2)\ndef g(df):\n    return df['inner']\nlast = xs[-1]\n")
	var attrs []string
	for _, a := range f.Attrs {
		attrs = append(attrs, fmt.Sprintf("%s%v", strings.Join(a.Parts, "."), map[bool]string{true: "()", false: ""}[a.Called]))
	}
	if want := []string{"df.Age.mean()", "ms.train_test_split()"}; !reflect.DeepEqual(attrs, want) {
		t.Errorf("attrs = %v, want %v", attrs, want)
	}
	var subs []string
	for _, s := range f.Subscripts {
		subs = append(subs, fmt.Sprintf("%s%v list=%v", s.Object.Text, s.Keys, s.List))
	}
	if want := []string{"df[a b] list=true", "X[3] list=false", "df[Age] list=false", "xs[-1] list=false"}; !reflect.DeepEqual(subs, want) {
		t.Errorf("subscripts = %v, want %v", subs, want)
	}
	if got := f.Subscripts[1].Index; got.Kind != ExprTuple || got.Args[0].Kind != ExprSlice || got.Args[1].Const != int64(3) {
		t.Errorf("X[:, 3] index = %+v", got)
	}
	if got := f.Subscripts[2].KeyRanges[0]; got != (finding.Range{Start: finding.Position{Line: 3, Character: 7}, End: finding.Position{Line: 3, Character: 12}}) {
		t.Errorf("key range = %v", got)
	}
	var calls []string
	for _, c := range f.Calls {
		calls = append(calls, c.Callee)
	}
	if want := []string{"df.Age.mean", "ms.train_test_split"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	c := f.Calls[1].Expr
	if len(c.Args) != 2 || c.Keyword("test_size").Const != 0.2 {
		t.Errorf("call args = %+v", c)
	}
	imp := f.Imports[0]
	if imp.Module != "sklearn.model_selection" || imp.Alias != "ms" || imp.Bound() != "ms" {
		t.Errorf("import = %+v", imp)
	}
}

func TestParseCellMagics(t *testing.T) {
	tests := []struct {
		text  string
		kinds string // kind:name of each magic
		py    bool   // cell body is Python (the first magic's PythonBody for cell magics)
	}{
		{"%matplotlib inline\nx = 1", "line:matplotlib", true},
		{"!pip install x\n  !!ls", "shell:pip shell:ls", true},
		{"%%time\nx = 1", "cell:time", true},
		{"%%bash\nif [ x ]; then echo; fi", "cell:bash", false},
		{"%%writefile a.py\nimport os\n", "cell:writefile", false},
		{"%%html\n<b>hi</b>", "cell:html", false},
		{"obj?\n?obj\nobj??", "help:obj help:obj help:obj", true},
		{"x = %sx ls", "line:sx", true},
		{"%pip install \\\n  pandas", "line:pip", true},
	}
	for _, tt := range tests {
		f := ParseCell(tt.text)
		var kinds []string
		for _, m := range f.Magics {
			kinds = append(kinds, string(m.Kind)+":"+m.Name)
		}
		if got := strings.Join(kinds, " "); got != tt.kinds {
			t.Errorf("%q: magics = %q, want %q", tt.text, got, tt.kinds)
		}
		if len(f.SyntaxErrors) > 0 {
			t.Errorf("%q: syntax errors after masking: %v", tt.text, f.SyntaxErrors)
		}
		if f.Magics[0].Kind == MagicCell && f.Magics[0].PythonBody != tt.py {
			t.Errorf("%q: PythonBody = %v", tt.text, f.Magics[0].PythonBody)
		}
	}
}

func TestParseCellSideEffects(t *testing.T) {
	tests := []struct {
		text string
		want string // kind of each effect, space-separated
	}{
		{"df.to_csv('out.csv')", "file-write"},
		{"s = df.to_csv()", ""},
		{"with open('f.txt', 'w') as f:\n    f.write('x')", "file-write"},
		{"with open('f.txt') as f:\n    f.read()", ""},
		{"open(p, mode='a+')", "file-write"},
		{"plt.savefig('a.png')\ntorch.save(m, 'm.pt')\nnp.save('a.npy', a)\njoblib.dump(m, 'm.pkl')\npickle.dump(m, fh)\njson.dump(d, fh)", "file-write file-write file-write file-write file-write file-write"},
		{"Path('a').write_text('x')\nPath('d').mkdir()\nPath('b').unlink()", "file-write file-write file-delete"},
		{"os.remove(p)\nshutil.rmtree(d)\nos.rename(a, b)\nshutil.copy(a, b)", "file-delete file-delete file-move file-move"},
		{"os.chdir('..')\nos.environ['X'] = '1'\nos.makedirs('d')", "os-mutation os-mutation os-mutation"},
		{"r = requests.get(u)\nurllib.request.urlretrieve(u, p)\nwget.download(u)\ntorchvision.datasets.MNIST('.', download=True)", "network network network network"},
		{"subprocess.run(['ls'])\nos.system('ls')\n!ls\n%pip install x", "subprocess subprocess subprocess subprocess"},
		{"%%bash\nrm -rf /", "subprocess"},
		{"device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "cuda"},
		{"m.cuda()\nx.to('cuda')\nt = torch.zeros(3, device='cuda:0')\nd = torch.device('cuda')", "cuda cuda cuda cuda"},
		{"model.fit(X, y, epochs=50)\nfor epoch in range(10):\n    pass", "long-run long-run"},
		{"model.fit(X, y)", ""},
		{"def save():\n    df.to_parquet('x.pq')", "file-write"},
	}
	for _, tt := range tests {
		f := ParseCell(tt.text)
		var kinds []string
		for _, e := range f.SideEffects {
			kinds = append(kinds, string(e.Kind))
		}
		if got := strings.Join(kinds, " "); got != tt.want {
			t.Errorf("%q: effects = %q, want %q (%+v)", tt.text, got, tt.want, f.SideEffects)
		}
	}
}

func TestParseCellPython2Print(t *testing.T) {
	if f := ParseCell("print 'hello'"); len(f.SyntaxErrors) != 1 {
		t.Errorf("print statement: syntax errors = %v", f.SyntaxErrors)
	}
	if f := ParseCell("print('hello')\nprint"); len(f.SyntaxErrors) != 0 {
		t.Errorf("print call: syntax errors = %v", f.SyntaxErrors)
	}
}

func TestParseCellSyntaxError(t *testing.T) {
	f := ParseCell("x = 1\ny = (2 +\nprint(x)\n")
	if len(f.SyntaxErrors) == 0 {
		t.Fatal("no syntax error reported")
	}
	if len(f.Defs) == 0 || f.Defs[0].Name != "x" {
		t.Errorf("facts before the error lost: %v", defNames(f))
	}
}
