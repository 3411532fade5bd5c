package analysis

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/premortem/premortem/notebook"
)

// cellTemplates are typical notebook cells; %d is the cell number, so names differ.
var cellTemplates = []string{
	"import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt\n%matplotlib inline",
	"df%d = pd.read_csv('data/part_%d.csv')\ndf%d.head()",
	"df%d = df%d.dropna(subset=['Age', 'Fare'])\ndf%d['Family'] = df%d['SibSp'] + df%d['Parch'] + 1\nprint(df%d.shape)",
	"def feature_%d(frame, col='Age'):\n    out = frame.copy()\n    out[col + '_log'] = np.log1p(out[col])\n    for c in ['Fare', 'Age']:\n        out[c] = out[c].fillna(out[c].median())\n    return out\nfeat%d = feature_%d(df%d)",
	"fig, ax = plt.subplots(1, 2, figsize=(10, 4))\nax[0].hist(df%d['Age'], bins=30)\nax[1].scatter(df%d['Age'], df%d['Fare'], alpha=0.3)\nplt.savefig('fig_%d.png')",
	"from sklearn.model_selection import train_test_split\nX%d = feat%d[['Age', 'Fare', 'Family']].values\ny%d = feat%d['Survived'].values\nX_train%d, X_test%d, y_train%d, y_test%d = train_test_split(X%d, y%d, test_size=0.2, random_state=%d)",
	"from sklearn.ensemble import RandomForestClassifier\nclf%d = RandomForestClassifier(n_estimators=100, max_depth=5)\nclf%d.fit(X_train%d, y_train%d)\nscore%d = clf%d.score(X_test%d, y_test%d)\nprint(f'accuracy: {score%d:.3f}')",
	"%%time\nresults%d = {name: [m.score(X_test%d, y_test%d) for m in models] for name, models in groups.items()}\nbest%d = max(results%d, key=lambda k: sum(results%d[k]))",
	"!pip install -q lightgbm\ncounts%d = df%d.groupby('Pclass')['Survived'].agg(['mean', 'count'])\ncounts%d.plot(kind='bar')",
	"try:\n    cache%d\nexcept NameError:\n    cache%d = {}\nfor i in range(10):\n    cache%d[i] = i ** 2\nsummary%d = sorted(cache%d.items(), key=lambda kv: -kv[1])[:3]",
}

// benchNotebook builds a 200-cell notebook: one in six is markdown, three in four code
// cells ran (in a slightly shuffled order), the rest did not.
func benchNotebook() *notebook.Notebook { return benchNotebookN(200) }

// benchNotebookN is benchNotebook with n cells.
func benchNotebookN(n int) *notebook.Notebook {
	nb := &notebook.Notebook{URI: "bench.ipynb"}
	order := 0
	for i := 0; i < n; i++ {
		c := &notebook.Cell{ID: fmt.Sprintf("cell-%d", i), Kind: notebook.Code, Language: "python"}
		switch {
		case i%6 == 5:
			c.Kind, c.Language = notebook.Markup, "markdown"
			c.Text = fmt.Sprintf("## Step %d\nSome notes about `df%d`.", i, i)
		default:
			tmpl := cellTemplates[i%len(cellTemplates)]
			n := strings.Count(tmpl, "%d")
			args := make([]any, n)
			for j := range args {
				args[j] = i - i%len(cellTemplates) + 1 // names shared by a block of cells
			}
			c.Text = fmt.Sprintf(tmpl, args...)
			if i%4 != 3 {
				order++
				c.ExecutionOrder = order
				if i%7 == 0 && order > 2 {
					c.ExecutionOrder = order + 1000 // re-run later, out of order
				}
			}
		}
		nb.Cells = append(nb.Cells, c)
	}
	return nb
}

func BenchmarkAnalyzeFromScratch(b *testing.B) {
	nb := benchNotebook()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewAnalyzer().Analyze(ctx, nb, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeystroke types one character into cell 150 and re-analyses the notebook.
func BenchmarkKeystroke(b *testing.B) {
	nb := benchNotebook()
	ctx := context.Background()
	a := NewAnalyzer()
	if _, err := a.Analyze(ctx, nb, Options{}); err != nil {
		b.Fatal(err)
	}
	cell := nb.Cells[150]
	base := cell.Text
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		// Alternate typing and deleting a character in the middle of the cell.
		mid := len(base) / 2
		if i%2 == 1 {
			cell.Text = base[:mid] + "x" + base[mid:]
		} else {
			cell.Text = base
		}
		res, err := a.Analyze(ctx, nb, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Findings[cell.ID]
	}
}

func TestBenchNotebookIsRealistic(t *testing.T) {
	nb := benchNotebook()
	res, err := NewAnalyzer().Analyze(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fs := range res.Findings {
		n += len(fs)
	}
	if len(res.Facts) < 150 || n == 0 {
		t.Errorf("facts for %d cells, %d findings: the benchmark notebook should exercise both", len(res.Facts), n)
	}
	for id, f := range res.Facts {
		if len(f.SyntaxErrors) > 0 {
			t.Errorf("%s does not parse: %q", id, nb.Cell(id).Text)
		}
	}
}

// keystrokeIn alternates typing and deleting one character in the middle of cell target,
// as BenchmarkKeystroke does, re-analysing the notebook each time.
func keystrokeIn(b *testing.B, nb *notebook.Notebook, target int) {
	ctx := context.Background()
	a := NewAnalyzer()
	if _, err := a.Analyze(ctx, nb, Options{}); err != nil {
		b.Fatal(err)
	}
	orig := nb.Cells[target]
	base := orig.Text
	mid := len(base) / 2
	b.ReportAllocs()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		i++
		c := *orig
		if i%2 == 1 {
			c.Text = base[:mid] + "x" + base[mid:]
		} else {
			c.Text = base
		}
		nb.Cells[target] = &c
		res, err := a.Analyze(ctx, nb, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Findings[c.ID]
	}
	reportCPU(b, cpu)
}

// cpuTime is the process's user and system CPU time so far. On a loaded machine it says
// more about the work a keystroke costs than the wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per iteration since start (GC included).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

// BenchmarkKeystroke200 is a keystroke in cell 122 (it ran) of the 200-cell notebook.
func BenchmarkKeystroke200(b *testing.B) {
	nb := benchNotebookN(200)
	if !nb.Cells[122].Executed() {
		b.Fatal("cell 122 should have run")
	}
	keystrokeIn(b, nb, 122)
}

// BenchmarkKeystroke2000Run is a keystroke in a cell that ran (same template as the
// 200-cell benchmark's), of 2,000 cells.
func BenchmarkKeystroke2000Run(b *testing.B) {
	nb := benchNotebookN(2000)
	if !nb.Cells[1002].Executed() {
		b.Fatal("cell 1002 should have run")
	}
	keystrokeIn(b, nb, 1002)
}

// BenchmarkKeystroke2000Imports is a keystroke in the imports of a cell that ran: the
// names every cell reads change, so every reader is judged again (the worst case).
func BenchmarkKeystroke2000Imports(b *testing.B) {
	nb := benchNotebookN(2000)
	keystrokeIn(b, nb, 1000)
}

// BenchmarkKeystroke2000Unrun is a keystroke in a cell that has not run, of 2,000 cells.
func BenchmarkKeystroke2000Unrun(b *testing.B) {
	nb := benchNotebookN(2000)
	if c := nb.Cells[1003]; c.Executed() || c.Kind != notebook.Code {
		b.Fatal("cell 1003 should be a code cell that has not run")
	}
	keystrokeIn(b, nb, 1003)
}

// BenchmarkHugeCell analyses a notebook whose one cell is 5 MB of code, then types in it,
// and reports the process's peak RSS and the heap left live.
func BenchmarkHugeCell(b *testing.B) {
	benchHuge(b, 5<<20, codeLine)
}

// BenchmarkHugeDataCell is BenchmarkHugeCell with a pasted 5 MB data literal, one row a
// line.
func BenchmarkHugeDataCell(b *testing.B) {
	benchHuge(b, 5<<20, func(i int) string { return fmt.Sprintf("    [%d, %d.5, 'row %d', None],\n", i, i, i) }, "data = [\n")
}

func codeLine(i int) string {
	return fmt.Sprintf("df%d = pd.read_csv('part_%d.csv').dropna(subset=['Age', 'Fare'])[['Age', 'Fare']]\n", i, i)
}

// BenchmarkLargestCell is BenchmarkHugeCell at MaxCellBytes, the largest cell analysed.
func BenchmarkLargestCell(b *testing.B) {
	benchHuge(b, MaxCellBytes, codeLine)
}

// benchHuge builds a cell of about size bytes from a head and lines, then analyses it and
// types in it.
func benchHuge(b *testing.B, size int, line func(int) string, head ...string) {
	var sb strings.Builder
	for _, h := range head {
		sb.WriteString(h)
	}
	for i := 0; sb.Len() < size-200; i++ {
		sb.WriteString(line(i))
	}
	if len(head) > 0 {
		sb.WriteString("]\n")
	}
	text := sb.String()
	ctx := context.Background()
	a := NewAnalyzer()
	nb := &notebook.Notebook{URI: "huge.ipynb", Cells: []*notebook.Cell{{ID: "c0", Kind: notebook.Code, Language: "python", Text: text}}}
	runtime.GC()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		c := *nb.Cells[0]
		c.Text = text + strings.Repeat("x", i%2)
		nb.Cells[0] = &c
		if _, err := a.Analyze(ctx, nb, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(a) // its cache holds the cell's facts and tree
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MB")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// peakRSSMB is the process's peak resident set (VmHWM), 0 where /proc is missing.
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
