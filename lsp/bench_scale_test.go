package lsp

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaleNotebook is benchNotebook's data-science style at any size: every cell reads the
// names the cell before it defines, and the first run cells have run in page order.
func scaleNotebook(n, run int) []vsCell {
	cells := make([]vsCell, n)
	for i := range cells {
		var b strings.Builder
		if i == 0 {
			b.WriteString("import numpy as np\nimport pandas as pd\nv0 = np.arange(10)\n")
		} else {
			fmt.Fprintf(&b, "v%d = v%d * 2 + np.sqrt(v%d).sum()\n", i, i-1, i-1)
			fmt.Fprintf(&b, "df%d = pd.DataFrame({'a': v%d, 'b': v%d})\n", i, i, i-1)
			fmt.Fprintf(&b, "for k in range(3):\n    df%d['c%%d' %% k] = df%d['a'] * k\n", i, i)
			fmt.Fprintf(&b, "def f%d(x):\n    return x + v%d\n", i, i)
			fmt.Fprintf(&b, "print(f%d(1), df%d.shape, len(v%d))\n", i, i, i)
		}
		cells[i] = vsCell{handle: i, text: b.String()}
		if i < run {
			cells[i].order = i + 1
		}
	}
	return cells
}

// keystrokeAt measures one keystroke in cell target of a notebook of n cells, the first
// run of which have run, until the cell's new diagnostics are published (as
// BenchmarkKeystroke, at any size). Each iteration types or deletes a character that
// makes a name undefined, so every keystroke changes the cell's diagnostics.
func keystrokeAt(b *testing.B, n, run, target int) {
	c, _ := startInProcess(b)
	c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}})
	cells := scaleNotebook(n, run)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, cells...))
	uri := cellURI(nbPath, target)
	// The first pass is done when the last cell, which has not run, is warned about the
	// names it takes from cells that have not run either.
	last := cellURI(nbPath, n-1)
	c.wait("the first pass", func() bool { return len(c.diags[last]) > 0 })
	base := "[]"
	if target >= run+1 {
		base = c.waitDiagsAny(uri)
	} else {
		c.waitDiags(uri, base)
	}
	line := strings.Count(cells[target].text, "\n") - 1
	col := len(fmt.Sprintf("print(f%d(1), df%d.shape, len(v%d", target, target, target))
	typed := fmt.Sprintf("undefined-name@%d:%d-%d:%d", line, col-len(fmt.Sprint(target))-1, line, col+1)
	withTyped := "[" + typed + "]"
	if base != "[]" {
		withTyped = diagSummaryAdd(base, typed)
	}
	times := make([]time.Duration, 0, b.N)
	cpu := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version := i + 2
		start := time.Now()
		if i%2 == 0 {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, target, version, line, col, line, col, "z"))
			c.waitDiags(uri, withTyped)
		} else {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, target, version, line, col, line, col+1, ""))
			c.waitDiags(uri, base)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100])/1e6, "p99-ms")
}

// processCPU is the process's user and system CPU time so far (server and client: on a
// loaded machine it says more about a keystroke's cost than the wall time).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// waitDiagsAny waits until uri has diagnostics and returns their summary.
func (c *testClient) waitDiagsAny(uri string) string {
	c.t.Helper()
	var got string
	c.wait("diagnostics on "+uri, func() bool {
		if ds := c.diags[uri]; len(ds) > 0 {
			got = diagSummary(ds)
			return true
		}
		return false
	})
	return got
}

// diagSummaryAdd adds one "code@range" entry to a diagSummary, keeping its order.
func diagSummaryAdd(summary, entry string) string {
	parts := strings.Fields(strings.Trim(summary, "[]"))
	parts = append(parts, entry)
	sortStrings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// BenchmarkKeystroke200 is a keystroke in cell 150 (run) of 200 cells, 150 of them run.
func BenchmarkKeystroke200(b *testing.B) { keystrokeAt(b, 200, 150, 120) }

// BenchmarkKeystroke2000Run is a keystroke in a cell that has run, in a notebook of 2,000
// cells of which 1,500 have run.
func BenchmarkKeystroke2000Run(b *testing.B) { keystrokeAt(b, 2000, 1500, 1000) }

// BenchmarkKeystroke2000Unrun is a keystroke in a cell that has not run, in the same
// notebook.
func BenchmarkKeystroke2000Unrun(b *testing.B) { keystrokeAt(b, 2000, 1500, 1800) }
