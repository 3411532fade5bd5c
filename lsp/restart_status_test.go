package lsp

import (
	"context"
	"strings"
	"testing"

	"github.com/premortem/premortem/kernelclient"
)

// TestRestartStepsAndHistory: through a restart the status shows each step ("kernel
// restarted: re-attaching", "waiting for the kernel", then idle), and the executed history
// is the new kernel's: a cell whose run was in the old kernel reads as not run (so the
// static layer warns where its definitions are used) until the new kernel runs it, even
// under the same execution count as before.
func TestRestartStepsAndHistory(t *testing.T) {
	f := newShadowFake()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.discover = (&fakeDiscovery{k: f}).discover
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	uri := "file://" + nbPath
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1", order: 1}, vsCell{handle: 1, text: "y = x + 1"}))
	c.waitStatus(uri, StatusIdle)
	use := cellURI(nbPath, 1)
	c.waitDiags(use, "[]")

	c.mu.Lock()
	from := len(c.statuses)
	c.mu.Unlock()
	f.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateStarting})
	f.fakeKernel.mu.Lock()
	f.fakeKernel.state = kernelclient.StateBusy
	f.fakeKernel.mu.Unlock()
	f.send(t, kernelclient.Event{Kind: kernelclient.EventRestart, State: kernelclient.StateBusy})
	c.waitStatusSeen(uri, StatusBusy, from)
	f.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle})
	c.waitStatus(uri, StatusIdle)
	steps := c.statusDetails(uri, from)
	for _, want := range []string{"connecting: " + detailRestarting, "busy: " + detailWaitKernel, "idle: " + detailRestarted} {
		if !strings.Contains(steps, want) {
			t.Errorf("restart steps lack %q:\n%s", want, steps)
		}
	}
	// The old kernel's run of cell 1 no longer counts.
	c.wait("a not-run warning on the use", func() bool {
		for _, d := range c.diags[use] {
			if d.Code == "not-run-definition" {
				return true
			}
		}
		return false
	})
	// The new kernel runs the cell, at the same count 1 the old run had.
	f.send(t, kernelclient.Event{Kind: kernelclient.EventExecuteInput, State: kernelclient.StateBusy, ExecutionCount: 1, Code: "x = 1"})
	f.send(t, kernelclient.Event{Kind: kernelclient.EventExecuteReply, State: kernelclient.StateIdle, ExecutionCount: 1, Code: "x = 1", Status: "ok"})
	c.notify("notebookDocument/didChange", vscodeRun(nbPath, 2, vsCell{handle: 0, text: "x = 1", order: 1}))
	c.waitDiags(use, "[]")
}

// fakeDiscovery finds k for any notebook.
type fakeDiscovery struct{ k kernelclient.Kernel }

func (d *fakeDiscovery) discover(ctx context.Context, nbPath string) (*connected, error) {
	return &connected{k: d.k, name: "python3 (pid 7)", file: "/run/kernel-fake.json"}, nil
}
