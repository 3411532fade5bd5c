package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// fakeKernel is a Kernel whose events the test sends; inspections find nothing.
type fakeKernel struct {
	events chan kernelclient.Event
	mu     sync.Mutex
	state  kernelclient.State
	closed bool
}

func newFakeKernel() *fakeKernel {
	return &fakeKernel{events: make(chan kernelclient.Event), state: kernelclient.StateIdle}
}

func (f *fakeKernel) Info() kernelclient.KernelInfo {
	return kernelclient.KernelInfo{LanguageName: "python"}
}
func (f *fakeKernel) State() kernelclient.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}
func (f *fakeKernel) RunningOthers() bool { return f.State() == kernelclient.StateBusy }
func (f *fakeKernel) Execute(context.Context, string) (*kernelclient.ExecuteResult, error) {
	return nil, kernelclient.ErrBusy
}
func (f *fakeKernel) Inspect(ctx context.Context, req kernelclient.InspectRequest) (*facts.Inspection, error) {
	return &facts.Inspection{Values: map[string]facts.Value{}}, nil
}
func (f *fakeKernel) Shadow(context.Context, string, kernelclient.ShadowOptions) (*facts.ShadowResult, error) {
	return nil, kernelclient.ErrBusy
}
func (f *fakeKernel) ShadowResult(context.Context, string) (*facts.ShadowResult, error) {
	return nil, kernelclient.ErrBusy
}
func (f *fakeKernel) ShadowCancel(context.Context, string) error { return nil }
func (f *fakeKernel) SandboxProbe(context.Context, string) (*facts.SandboxInfo, error) {
	return &facts.SandboxInfo{Sandbox: facts.SandboxFallback, Reason: "fake kernel"}, nil
}
func (f *fakeKernel) Events() <-chan kernelclient.Event { return f.events }
func (f *fakeKernel) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

// send delivers an event to the server's follow goroutine (unbuffered: it has read it
// when send returns).
func (f *fakeKernel) send(t *testing.T, ev kernelclient.Event) {
	t.Helper()
	if ev.Kind == kernelclient.EventStatus {
		f.mu.Lock()
		f.state = ev.State
		f.mu.Unlock()
	}
	select {
	case f.events <- ev:
	case <-time.After(waitTimeout):
		t.Fatalf("the server does not read kernel events (sending %+v)", ev)
	}
}

// TestStatusFollowsKernel: a notebook whose kernel discovery finds reports connecting,
// then idle with the kernel's name; the user's runs show busy and idle, coalesced (a
// burst of 400 changes sends a handful of statuses, ending idle); premortem's own
// requests never show busy; a restart is reported; death shows dead with how to attach
// again; close shows none.
func TestStatusFollowsKernel(t *testing.T) {
	fk := newFakeKernel()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.discover = func(ctx context.Context, nbPath string) (*connected, error) {
			return &connected{k: fk, name: "python3 (pid 4242)", file: "/run/kernel-abc.json", detail: "found by vscode"}, nil
		}
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	uri := "file://" + nbPath
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1"}))
	c.waitStatusSeen(uri, StatusConnecting, 0)
	st := c.waitStatus(uri, StatusIdle)
	if st.Kernel != "python3 (pid 4242)" || st.ConnectionFile != "/run/kernel-abc.json" || !strings.Contains(st.Detail, "found by vscode") {
		t.Errorf("attached status %+v", st)
	}
	if st.Layers == nil || !st.Layers.Static || !st.Layers.Rules || st.Layers.Shadow || st.Layers.LLM {
		t.Errorf("layers %+v, want static and rules", st.Layers)
	}

	c.mu.Lock()
	from := len(c.statuses)
	c.mu.Unlock()
	fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateBusy, Ours: true})
	fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle, Ours: true})
	fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateBusy})
	_, next := c.waitStatusSeen(uri, StatusBusy, from)
	c.mu.Lock()
	for _, s := range c.statuses[from : next-1] {
		if s.URI == uri {
			t.Errorf("premortem's own request was reported: %+v", s)
		}
	}
	c.mu.Unlock()

	for i := 0; i < 200; i++ {
		fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle})
		fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateBusy})
	}
	fk.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle})
	c.waitStatus(uri, StatusIdle)
	c.mu.Lock()
	burst := 0
	for _, s := range c.statuses[next:] {
		if s.URI == uri {
			burst++
		}
	}
	c.mu.Unlock()
	if burst > 40 {
		t.Errorf("%d statuses for 401 state changes: not coalesced", burst)
	}

	fk.send(t, kernelclient.Event{Kind: kernelclient.EventRestart})
	c.wait("the restart status", func() bool {
		for _, s := range c.statuses {
			if s.URI == uri && strings.Contains(s.Detail, "restarted") {
				return true
			}
		}
		return false
	})

	fk.send(t, kernelclient.Event{Kind: kernelclient.EventDead})
	st = c.waitStatus(uri, StatusDead)
	if st.Kernel != "python3 (pid 4242)" || !strings.Contains(st.Detail, "Attach to Kernel") {
		t.Errorf("dead status %+v", st)
	}
	if st.Layers == nil || st.Layers.Rules {
		t.Errorf("dead kernel: layers %+v, want rules off", st.Layers)
	}
	c.wait("the lost-kernel message", func() bool {
		return strings.Contains(strings.Join(c.shown, "\n"), "stopped responding")
	})

	c.notify("notebookDocument/didClose", map[string]any{"notebookDocument": map[string]any{"uri": uri}, "cellTextDocuments": []any{}})
	c.waitStatus(uri, StatusNone)
	fk.mu.Lock()
	closed := fk.closed
	fk.mu.Unlock()
	if !closed {
		t.Errorf("closing the only notebook did not close its kernel connection")
	}
}

// TestStatusDetachAndSettings: the attach command's result is the notebook's status; a
// configured file that fails keeps the attached kernel; turning auto-attach and the file off (the extension's Detach) reports none and closes
// the connection; settings that change the layers send the statuses again.
func TestStatusDetachAndSettings(t *testing.T) {
	fk := newFakeKernel()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.discover = func(ctx context.Context, nbPath string) (*connected, error) {
			return &connected{k: fk, file: "/run/kernel-x.json"}, nil
		}
	})
	c.initialize(map[string]any{"debounce": 10, "kernel": map[string]any{"autoAttach": false}})
	uri := "file://" + nbPath
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1"}))
	if st := c.waitStatus(uri, StatusNone); !strings.Contains(st.Detail, "Attach to Kernel") {
		t.Errorf("status without auto-attach %+v", st)
	}
	// The legacy id still works; no file and no setting: discovery.
	var st KernelStatus
	c.callOK("workspace/executeCommand", map[string]any{"command": "premortem.attachKernel", "arguments": []any{nil, uri}}, &st)
	if st.URI != uri || st.State != StatusIdle || st.Kernel != "kernel-x.json" || !strings.Contains(st.Detail, "Attach to Kernel") {
		t.Errorf("attach result %+v", st)
	}
	// A configured file that cannot be attached: shown once, and the notebook keeps its
	// kernel (its status comes back after "connecting").
	bad := map[string]any{"autoAttach": false, "connectionFile": "/nonexistent/kernel-z.json"}
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"kernel": bad}}})
	c.wait("the failure message", func() bool { return strings.Contains(strings.Join(c.shown, "\n"), "kernel-z.json") })
	c.waitStatusSeen(uri, StatusConnecting, 0)
	if st := c.waitStatus(uri, StatusIdle); st.Kernel != "kernel-x.json" {
		t.Errorf("status after a failed re-attach %+v, want the earlier kernel", st)
	}
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"shadow": map[string]any{"mode": "always"}, "kernel": bad}}})
	c.wait("a status with shadow on", func() bool {
		n := len(c.statuses)
		return n > 0 && c.statuses[n-1].URI == uri && c.statuses[n-1].Layers != nil && c.statuses[n-1].Layers.Shadow
	})
	// autoAttach off already; a change that keeps neither file nor discovery detaches only
	// when one of them was on: turn discovery on and off again.
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"kernel": map[string]any{"autoAttach": true}}}})
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"kernel": map[string]any{"autoAttach": false, "connectionFile": ""}}}})
	if st := c.waitStatus(uri, StatusNone); !strings.Contains(st.Detail, "detached") {
		t.Errorf("detached status %+v", st)
	}
	fk.mu.Lock()
	closed := fk.closed
	fk.mu.Unlock()
	if !closed {
		t.Errorf("detach did not close the kernel connection")
	}
}

// TestStatusCoalescer checks the busy/idle rate limit without a server.
func TestStatusCoalescer(t *testing.T) {
	var co stateCoalescer
	t0 := time.Unix(1000, 0)
	co.sent(StatusIdle, t0)
	if got := co.want(StatusIdle, t0.Add(time.Second)); got != "" {
		t.Errorf("unchanged state sent: %q", got)
	}
	if got := co.want(StatusBusy, t0.Add(time.Second)); got != StatusBusy {
		t.Errorf("first change after a quiet second: %q, want busy now", got)
	}
	now := t0.Add(time.Second + time.Millisecond)
	for i, st := range []string{StatusIdle, StatusBusy, StatusIdle} {
		if got := co.want(st, now); got != "" {
			t.Errorf("change %d within the interval sent at once: %q", i, got)
		}
	}
	if co.timerC() == nil {
		t.Fatal("no send pending after changes within the interval")
	}
	if got := co.fire(now.Add(statusInterval)); got != StatusIdle {
		t.Errorf("pending send = %q, want the latest state idle", got)
	}
	co.stop()
	co.want(StatusBusy, now.Add(statusInterval+time.Millisecond))
	co.want(StatusIdle, now.Add(statusInterval+2*time.Millisecond))
	if got := co.fire(now.Add(2 * statusInterval)); got != "" {
		t.Errorf("a change undone within the interval was sent: %q", got)
	}
}

// TestRediscoverAfterRun: a notebook opened before its kernel started reports "none";
// when the client reports a run, discovery runs again and attaches.
func TestRediscoverAfterRun(t *testing.T) {
	fk := newFakeKernel()
	var mu sync.Mutex
	calls := 0
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.rediscoverEvery = 0
		s.rt.discover = func(ctx context.Context, nbPath string) (*connected, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return nil, fmt.Errorf("%w: %s", kernelclient.ErrNoMatch, nbPath)
			}
			return &connected{k: fk, file: "/run/kernel-late.json"}, nil
		}
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	uri := "file://" + nbPath
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1"}))
	if st := c.waitStatus(uri, StatusNone); !strings.Contains(st.Detail, "no running kernel serves this notebook") {
		t.Errorf("status before the kernel started %+v", st)
	}
	c.notify("notebookDocument/didChange", vscodeRun(nbPath, 2, vsCell{handle: 0, text: "x = 1", order: 1}))
	if st := c.waitStatus(uri, StatusIdle); st.ConnectionFile != "/run/kernel-late.json" {
		t.Errorf("status after the run %+v", st)
	}
}
