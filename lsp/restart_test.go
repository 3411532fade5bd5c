package lsp

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/kernelclient"
)

// This file tests following a kernel through restarts with real kernels: each test
// attaches, sees a rules diagnostic, restarts the kernel in one of the ways users do,
// checks that the old kernel's finding does not survive, runs the setup cell in the new
// kernel and waits for the rules diagnostic to come back, with no user action on the
// premortem side.

const (
	restartSetup  = "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0, None], 'Name': ['a', 'b', 'c']})"
	restartTarget = "m = df['age'].mean()"
	restartFound  = "missing-column"
)

// launchKernelIn is launchKernel with the connection file in dir.
func launchKernelIn(t *testing.T, dir string) *kernelclient.Launched {
	t.Helper()
	return kernel.Start(t, kernelclient.LaunchOptions{RuntimeDir: dir}, "pandas", "numpy", "jupyter_client")
}

// startOnFile starts a new kernel process on an existing connection file (the same ports
// and key), as jupyter_client's restart does; it is killed at cleanup. It returns a client
// of the new kernel for the test to run the user's cells with.
func startOnFile(t *testing.T, file string) kernelclient.Kernel {
	t.Helper()
	cmd := exec.Command(python.Path(), "-m", "ipykernel_launcher", "-f", file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		k, err := kernelclient.ConnectFile(ctx, file)
		if err == nil {
			t.Cleanup(func() { k.Close() })
			return k
		}
		if ctx.Err() != nil {
			t.Fatalf("the new kernel on %s never answered: %v", file, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restartServer starts a server that discovers kernels in dir only, with short
// re-attach intervals, and opens the test notebook: a setup cell run as count n and the
// target cell.
func restartServer(t *testing.T, dir string, n int, autoAttach bool) *testClient {
	t.Helper()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.dirs = []string{dir}
		s.rt.reattachEvery = 200 * time.Millisecond
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}, "kernel": map[string]any{"autoAttach": autoAttach}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: restartSetup, order: n},
		vsCell{handle: 1, text: restartTarget},
	))
	return c
}

// hasCode reports whether uri's latest diagnostics include one with the code.
func (c *testClient) hasCode(uri, code string) bool {
	for _, d := range c.diags[uri] {
		if d.Code == code {
			return true
		}
	}
	return false
}

// afterRestart is the common second half: the old kernel's finding goes and stays gone
// until the setup cell runs in the new kernel (at count 1, the count the old kernel's
// facts were taken at: a cache keyed by count alone would bring the old finding back),
// then it comes back.
func afterRestart(t *testing.T, c *testClient, k kernelclient.Kernel, version int) {
	t.Helper()
	uri := "file://" + nbPath
	target := cellURI(nbPath, 1)
	c.wait("the old kernel's finding to go", func() bool { return !c.hasCode(target, restartFound) })
	c.waitStatus(uri, StatusIdle)
	// Give the new kernel's passes time to run: the finding must not come back from a
	// cache.
	time.Sleep(500 * time.Millisecond)
	c.mu.Lock()
	stale := c.hasCode(target, restartFound)
	c.mu.Unlock()
	if stale {
		t.Fatal("a finding from the old kernel came back before the setup cell ran in the new one")
	}
	if n := execute(t, k, restartSetup); n != 1 {
		t.Fatalf("setup in the new kernel ran as %d, want 1", n)
	}
	c.notify("notebookDocument/didChange", vscodeRun(nbPath, version, vsCell{handle: 0, text: restartSetup, order: 1}))
	c.wait("the rules finding in the new kernel", func() bool { return c.hasCode(target, restartFound) })
}

// statusDetails lists the details of uri's statuses from index from on.
func (c *testClient) statusDetails(uri string, from int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.statuses[from:] {
		if s.URI == uri {
			out = append(out, s.State+": "+s.Detail)
		}
	}
	return strings.Join(out, "\n")
}

// TestRestartKilledSamePorts: kill -9, then a new kernel on the same connection file.
func TestRestartKilledSamePorts(t *testing.T) {
	l := launchKernelIn(t, t.TempDir())
	n := execute(t, l, restartSetup)
	c := restartServer(t, t.TempDir(), n, false)
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	target := cellURI(nbPath, 1)
	c.wait("the rules finding", func() bool { return c.hasCode(target, restartFound) })
	c.mu.Lock()
	from := len(c.statuses)
	c.mu.Unlock()
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + nbPath
	c.waitStatusSeen(uri, StatusDead, from)
	k := startOnFile(t, l.ConnectionFile)
	afterRestart(t, c, k, 2)
	if d := c.statusDetails(uri, from); !strings.Contains(d, detailRestarting) {
		t.Errorf("statuses through the restart lack %q:\n%s", detailRestarting, d)
	}
	c.mu.Lock()
	lost := 0
	for _, m := range c.shown {
		if strings.Contains(m, "stopped responding") {
			lost++
		}
	}
	shown := strings.Join(c.shown, "\n")
	c.mu.Unlock()
	if lost != 1 || !strings.Contains(shown, "restarted") {
		t.Errorf("messages shown: want one 'stopped responding' and a restart message:\n%s", shown)
	}
}

// TestRestartShutdownRequest: jupyter_client's restart: shutdown_request with restart=true
// on control, then a new kernel process on the same connection file.
func TestRestartShutdownRequest(t *testing.T) {
	l := launchKernelIn(t, t.TempDir())
	n := execute(t, l, restartSetup)
	c := restartServer(t, t.TempDir(), n, false)
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, nil)
	target := cellURI(nbPath, 1)
	c.wait("the rules finding", func() bool { return c.hasCode(target, restartFound) })
	c.mu.Lock()
	from := len(c.statuses)
	c.mu.Unlock()
	py := `import sys
from jupyter_client import BlockingKernelClient
kc = BlockingKernelClient(connection_file=sys.argv[1])
kc.load_connection_file()
kc.start_channels()
kc.shutdown(restart=True)
kc.get_control_msg(timeout=10)
`
	if out, err := exec.Command(python.Path(), "-c", py, l.ConnectionFile).CombinedOutput(); err != nil {
		t.Fatalf("shutdown_request(restart=True): %v\n%s", err, out)
	}
	select {
	case <-l.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the kernel did not exit on shutdown_request")
	}
	k := startOnFile(t, l.ConnectionFile)
	afterRestart(t, c, k, 2)
	uri := "file://" + nbPath
	if d := c.statusDetails(uri, from); !strings.Contains(d, detailRestarting) {
		t.Errorf("statuses through the restart lack %q:\n%s", detailRestarting, d)
	}
}

// TestRestartFoundByDiscovery: VS Code's restart: the kernel goes and a new one for the
// same notebook starts on new ports with a new connection file (it names the notebook in
// __vsc_ipynb_file__); discovery finds it and premortem attaches to it by itself.
func TestRestartFoundByDiscovery(t *testing.T) {
	dir := t.TempDir()
	l := launchKernelIn(t, dir)
	execute(t, l, "__vsc_ipynb_file__ = "+pyQuote(nbPath))
	n := execute(t, l, restartSetup)
	c := restartServer(t, dir, n, true)
	uri := "file://" + nbPath
	target := cellURI(nbPath, 1)
	if st := c.waitStatus(uri, StatusIdle); st.ConnectionFile != l.ConnectionFile {
		t.Fatalf("attached to %+v, want %s", st, l.ConnectionFile)
	}
	c.wait("the rules finding", func() bool { return c.hasCode(target, restartFound) })
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(l.ConnectionFile)
	c.waitStatus(uri, StatusDead)
	l2 := launchKernelIn(t, dir)
	execute(t, l2, "__vsc_ipynb_file__ = "+pyQuote(nbPath))
	c.wait("an attachment to the new kernel", func() bool {
		for i := len(c.statuses) - 1; i >= 0; i-- {
			if s := c.statuses[i]; s.URI == uri {
				return s.ConnectionFile == l2.ConnectionFile && s.State == StatusIdle
			}
		}
		return false
	})
	c.wait("the old kernel's finding to go", func() bool { return !c.hasCode(target, restartFound) })
	if n := execute(t, l2, restartSetup); n != 2 {
		t.Fatalf("setup in the new kernel ran as %d, want 2", n)
	}
	c.notify("notebookDocument/didChange", vscodeRun(nbPath, 2, vsCell{handle: 0, text: restartSetup, order: 2}))
	c.wait("the rules finding in the new kernel", func() bool { return c.hasCode(target, restartFound) })
}

// pyQuote is a Python string literal for s.
func pyQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
