package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/kernelclient"
)

// bigNotebook is the large notebook: cells cells of lines short lines each
// (assignments and the odd call, as generated code or a pasted log of statements is), the
// last line of every tenth cell reading a name nothing defines, so the first pass has
// something to publish.
func bigNotebook(cells, lines int) []vsCell {
	out := make([]vsCell, cells)
	for i := range out {
		var b strings.Builder
		for l := 0; l < lines; l++ {
			switch {
			case l == lines-1 && i%10 == 9:
				fmt.Fprintf(&b, "print(nope%d)\n", i)
			case l%5 == 4:
				fmt.Fprintf(&b, "f(v%d)\n", l-1)
			default:
				fmt.Fprintf(&b, "v%d = %d + 1.5\n", l, i)
			}
		}
		out[i] = vsCell{handle: i, text: b.String()}
	}
	out[0].text = "def f(x):\n    return x\n" + out[0].text
	return out
}

// bigNotebookBytes is the size of a notebook's cell text, what "the notebook's size" means
// in the figures.
func bigNotebookBytes(cells []vsCell) int {
	n := 0
	for _, c := range cells {
		n += len(c.text)
	}
	return n
}

// BenchmarkBigNotebookMemory runs `premortem serve --stdio` as VS Code does, opens the
// issue's 1,000 cells × 1,000 short lines notebook (about 15 MB), and reports the time to
// the first publishDiagnostics and to the last cell's, the server's RSS before didOpen,
// its peak (VmHWM) and its RSS 5 s after didClose, and the peak's ratio to the notebook's
// size. One iteration is the whole session; run it with -benchtime 1x. Its size is set by
// PREMORTEM_BIG_CELLS and PREMORTEM_BIG_LINES (default 1000 each). PREMORTEM_BIG_KERNEL=1
// attaches a real kernel after didOpen (the kernel layers run too; the session waits
// until the server has been idle for 3 s before closing) and leaves the first cell
// executed in it.
func BenchmarkBigNotebookMemory(b *testing.B) {
	cellsN, linesN := envInt("PREMORTEM_BIG_CELLS", 1000), envInt("PREMORTEM_BIG_LINES", 1000)
	bin := filepath.Join(b.TempDir(), "premortem")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/premortem").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cells := bigNotebook(cellsN, linesN)
	size := float64(bigNotebookBytes(cells)) / (1 << 20)
	connection := ""
	if os.Getenv("PREMORTEM_BIG_KERNEL") == "1" {
		l := kernel.Start(b, kernelclient.LaunchOptions{})
		ectx, ecancel := context.WithTimeout(context.Background(), 60*time.Second)
		r, err := l.Execute(ectx, cells[0].text)
		ecancel()
		if err != nil || r.Status != "ok" {
			b.Fatalf("run the first cell: %v %+v", err, r)
		}
		cells[0].order = r.ExecutionCount
		connection = l.ConnectionFile
	}
	for i := 0; i < b.N; i++ {
		m := bigSession(b, bin, cells, connection)
		b.ReportMetric(size, "notebook-MB")
		b.ReportMetric(m.first.Seconds(), "first-diag-s")
		b.ReportMetric(m.firstCPU.Seconds(), "first-diag-cpu-s")
		b.ReportMetric(m.last.Seconds(), "last-diag-s")
		b.ReportMetric(m.before, "RSS-before-MB")
		b.ReportMetric(m.peak, "peak-RSS-MB")
		b.ReportMetric(m.after, "RSS-after-close-MB")
		b.ReportMetric((m.peak-m.before)/size, "peak-per-notebook-MB")
	}
}

// bigMeasure is what one session of BenchmarkBigNotebookMemory measured.
type bigMeasure struct {
	first, last time.Duration
	// firstCPU is the server's CPU time (user and system) from didOpen to the first
	// diagnostic: unlike the wall time, it does not grow with the machine's load.
	firstCPU            time.Duration
	before, peak, after float64
}

// bigSession opens cells in a fresh server process, waits for the first diagnostic and
// the last cell's, closes the notebook and reads the process's memory.
func bigSession(tb testing.TB, bin string, cells []vsCell, connection string) bigMeasure {
	cmd := exec.Command(bin, "serve", "--stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	c := newTestClient(tb, stdin, stdout)
	c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}, "debounce": 0})
	pid := cmd.Process.Pid
	var m bigMeasure
	m.before = pidStatusMB(pid, "VmRSS:")
	open := vscodeDidOpen(nbPath, cells...)
	start, cpu := time.Now(), pidCPU(pid)
	c.notify("notebookDocument/didOpen", open)
	open = nil
	last := cellURI(nbPath, len(cells)-1)
	waitLong(tb, c, "the first diagnostic", func() bool { return len(c.publishes) > 0 })
	m.first, m.firstCPU = time.Since(start), pidCPU(pid)-cpu
	waitLong(tb, c, "the last cell's diagnostics", func() bool { return c.publishes[last] > 0 })
	m.last = time.Since(start)
	if connection != "" {
		c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{connection, "file://" + nbPath}}, nil)
		waitIdle(pid, 3*time.Second, 5*time.Minute)
	}
	c.notify("notebookDocument/didClose", map[string]any{"notebookDocument": map[string]any{"uri": "file://" + nbPath}, "cellTextDocuments": []any{}})
	waitLong(tb, c, "the close's empty diagnostics", func() bool { return len(c.diags[last]) == 0 })
	time.Sleep(5 * time.Second)
	m.peak = pidStatusMB(pid, "VmHWM:")
	m.after = pidStatusMB(pid, "VmRSS:")
	return m
}

// waitIdle waits until process pid has used no CPU for quiet (at most limit).
func waitIdle(pid int, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	last, since := pidCPU(pid), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < quiet {
		time.Sleep(250 * time.Millisecond)
		if cpu := pidCPU(pid); cpu-last > 20*time.Millisecond {
			last, since = cpu, time.Now()
		}
	}
}

// waitLong is testClient.wait with a deadline that suits a notebook of 15 MB on a loaded
// machine (the issue measured 24 s to the first diagnostic).
func waitLong(tb testing.TB, c *testClient, desc string, pred func() bool) {
	tb.Helper()
	deadline := time.After(5 * time.Minute)
	for {
		c.mu.Lock()
		ok, ch, closed := pred(), c.changed, c.closed
		c.mu.Unlock()
		if ok {
			return
		}
		if closed {
			tb.Fatalf("server closed the connection while waiting for %s", desc)
		}
		select {
		case <-ch:
		case <-deadline:
			tb.Fatalf("timed out waiting for %s", desc)
		}
	}
}

// pidStatusMB reads a kB field of /proc/PID/status in MB (0 where there is none).
func pidStatusMB(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
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

// pidCPU is the CPU time (user and system) process pid has used, from /proc/PID/stat.
func pidCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may hold spaces:
	// utime and stime are the 12th and 13th of them, in clock ticks (100 per second).
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// envInt is an integer environment variable, or def when it is unset or not a number.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
