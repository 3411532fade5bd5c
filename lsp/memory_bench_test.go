package lsp

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkServerMemory opens a 2,000-cell notebook (1,500 cells run) in the in-process
// server, makes 1,000 edits spread over its cells (each waited for until its diagnostics
// are published), and reports the memory the server holds then: the Go heap after a
// collection and the process's resident set, current and peak. One iteration is the whole
// session; run it with -benchtime 1x.
func BenchmarkServerMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		heap, rss, peak := serverSession(b, 2000, 1500, 1000)
		b.ReportMetric(heap, "heap-MB")
		b.ReportMetric(rss, "RSS-MB")
		b.ReportMetric(peak, "peak-RSS-MB")
	}
}

// serverSession runs the session BenchmarkServerMemory measures and returns the live heap,
// the RSS and the peak RSS in MB.
func serverSession(tb testing.TB, n, run, edits int) (heap, rss, peak float64) {
	c, _ := startInProcess(tb)
	c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}})
	cells := scaleNotebook(n, run)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, cells...))
	last := cellURI(nbPath, n-1)
	c.wait("the first pass", func() bool { return len(c.diags[last]) > 0 })
	// Each edit makes a name undefined in one cell (and the next edit of that cell removes
	// it again), so every edit is seen to be published.
	typed := map[int]bool{}
	for e := 0; e < edits; e++ {
		target := 1 + (e*7919)%(n-1)
		line := strings.Count(cells[target].text, "\n") - 1
		col := len(fmt.Sprintf("print(f%d(1), df%d.shape, len(v%d", target, target, target))
		version := e + 2
		uri := cellURI(nbPath, target)
		if !typed[target] {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, target, version, line, col, line, col, "z"))
			want := fmt.Sprintf("undefined-name@%d:%d-%d:%d", line, col-len(strconv.Itoa(target))-1, line, col+1)
			c.wait("edit "+strconv.Itoa(e), func() bool { return strings.Contains(diagSummary(c.diags[uri]), want) })
		} else {
			c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, version, target, version, line, col, line, col+1, ""))
			c.wait("edit "+strconv.Itoa(e), func() bool { return !strings.Contains(diagSummary(c.diags[uri]), "undefined-name") })
		}
		typed[target] = !typed[target]
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20), procStatusMB("VmRSS:"), procStatusMB("VmHWM:")
}

// procStatusMB reads a kB field of /proc/self/status in MB (0 where there is none).
func procStatusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
