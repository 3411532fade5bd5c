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

// shadowFake is a fake kernel whose shadow runs behave like the inspector's: one child at
// a time, a new run kills the running one, and a child ends when the test finishes it.
// Its inspections can be made to fail, and it can say that its handshake waits for idle.
type shadowFake struct {
	*fakeKernel
	mu         sync.Mutex
	n          int
	running    string
	codes      map[string]string
	results    map[string]*facts.ShadowResult
	inspectErr error
	awaiting   bool
}

func newShadowFake() *shadowFake {
	return &shadowFake{fakeKernel: newFakeKernel(), codes: map[string]string{}, results: map[string]*facts.ShadowResult{}}
}

func (f *shadowFake) AwaitingIdle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.awaiting
}

func (f *shadowFake) Inspect(ctx context.Context, req kernelclient.InspectRequest) (*facts.Inspection, error) {
	f.mu.Lock()
	err := f.inspectErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &facts.Inspection{Values: map[string]facts.Value{}}, nil
}

func (f *shadowFake) Shadow(ctx context.Context, code string, _ kernelclient.ShadowOptions) (*facts.ShadowResult, error) {
	if f.State() == kernelclient.StateBusy {
		return nil, fmt.Errorf("%w: running the user's cell", kernelclient.ErrBusy)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	token := fmt.Sprint(f.n)
	if f.running != "" {
		f.results[f.running] = &facts.ShadowResult{Token: f.running, Status: facts.ShadowDied, Reason: "cancelled: a newer shadow run started"}
	}
	f.running = token
	f.codes[token] = code
	return &facts.ShadowResult{Token: token, Status: facts.ShadowRunning}, nil
}

func (f *shadowFake) ShadowResult(ctx context.Context, token string) (*facts.ShadowResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.results[token]; r != nil {
		return r, nil
	}
	return &facts.ShadowResult{Token: token, Status: facts.ShadowRunning}, nil
}

func (f *shadowFake) ShadowCancel(ctx context.Context, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.results[token] == nil {
		f.results[token] = &facts.ShadowResult{Token: token, Status: facts.ShadowDied, Reason: "cancelled"}
	}
	if f.running == token {
		f.running = ""
	}
	return nil
}

// finish ends the child of the n-th shadow run without an exception.
func (f *shadowFake) finish(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	token := fmt.Sprint(n)
	if f.results[token] == nil {
		f.results[token] = &facts.ShadowResult{Token: token, Status: facts.ShadowOK}
	}
	if f.running == token {
		f.running = ""
	}
}

// started returns the code of every shadow run started so far.
func (f *shadowFake) started() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i := 1; i <= f.n; i++ {
		out = append(out, f.codes[fmt.Sprint(i)])
	}
	return out
}

// startFake starts a server attached to f by discovery, with the notebook open: two
// code cells that have not run.
func startFake(t *testing.T, f *shadowFake) *testClient {
	t.Helper()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.discover = func(ctx context.Context, nbPath string) (*connected, error) {
			return &connected{k: f, name: "python3 (pid 7)", file: "/run/kernel-fake.json"}, nil
		}
		s.rt.reattachEvery = time.Hour // a lost fake stays lost
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "safe", "timeout": "30s"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "a = 1"}, vsCell{handle: 1, text: "b = 2"}))
	return c
}

// shadowRunAsync runs the shadowRun command for a cell in the background.
func shadowRunAsync(c *testClient, cell string) <-chan string {
	out := make(chan string, 1)
	go func() {
		r := c.call("workspace/executeCommand", map[string]any{"command": CommandShadowRun, "arguments": []any{cell}})
		if r.Error != nil {
			out <- "error: " + r.Error.Message
			return
		}
		out <- strings.Trim(string(r.Result), `"`)
	}()
	return out
}

func waitAnswer(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("no answer to shadowRun")
		return ""
	}
}

// TestExplicitShadowNotCancelledByAutomatic: while an explicit shadow run collects its
// result, an edit makes the scheduler want an automatic run of the edited cell; it must
// not start (it would kill the explicit child), and the explicit run answers its outcome.
func TestExplicitShadowNotCancelledByAutomatic(t *testing.T) {
	f := newShadowFake()
	c := startFake(t, f)
	c.waitStatus("file://"+nbPath, StatusIdle)
	ans := shadowRunAsync(c, cellURI(nbPath, 0))
	eventually(t, "the explicit shadow run to start", func() bool { return len(f.started()) == 1 })
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 2, 1, 2, 0, 4, 0, 5, "3"))
	c.waitDiags(cellURI(nbPath, 1), "[]")
	// The pass of the edit reaches the shadow layer right after its rules: give it the
	// time to (wrongly) start one.
	time.Sleep(300 * time.Millisecond)
	if got := f.started(); len(got) != 1 {
		t.Fatalf("shadow runs started while the explicit one ran: %q", got)
	}
	f.finish(1)
	if got := waitAnswer(t, ans); got != "ran to the end without an exception" {
		t.Fatalf("explicit shadowRun answered %q", got)
	}
	// The automatic run of the edited cell still happens afterwards, at the next pass.
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 3, 1, 3, 0, 4, 0, 5, "4"))
	eventually(t, "the automatic shadow run after the explicit one", func() bool {
		got := f.started()
		return len(got) >= 2 && got[len(got)-1] == "b = 4"
	})
}

// TestNewerExplicitShadowCancelsOlder: a second explicit run kills the first's child; the
// first answers that a newer run cancelled it.
func TestNewerExplicitShadowCancelsOlder(t *testing.T) {
	f := newShadowFake()
	c := startFake(t, f)
	c.waitStatus("file://"+nbPath, StatusIdle)
	first := shadowRunAsync(c, cellURI(nbPath, 0))
	eventually(t, "the first shadow run to start", func() bool { return len(f.started()) == 1 })
	second := shadowRunAsync(c, cellURI(nbPath, 1))
	eventually(t, "the second shadow run to start", func() bool { return len(f.started()) == 2 })
	if got := waitAnswer(t, first); got != shadowCancelledAnswer {
		t.Errorf("the older run answered %q, want %q", got, shadowCancelledAnswer)
	}
	f.finish(2)
	if got := waitAnswer(t, second); got != "ran to the end without an exception" {
		t.Errorf("the newer run answered %q", got)
	}
}

// TestShadowRunWhileBusy: asked for while the user's cell runs, shadowRun says so, and the
// run is made once the kernel is idle, its outcome shown.
func TestShadowRunWhileBusy(t *testing.T) {
	f := newShadowFake()
	c := startFake(t, f)
	uri := "file://" + nbPath
	c.waitStatus(uri, StatusIdle)
	f.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateBusy})
	if got := waitAnswer(t, shadowRunAsync(c, cellURI(nbPath, 0))); got != shadowBusyAnswer {
		t.Fatalf("shadowRun on a busy kernel answered %q, want %q", got, shadowBusyAnswer)
	}
	if got := f.started(); len(got) != 0 {
		t.Fatalf("a shadow run was sent to the busy kernel: %q", got)
	}
	f.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle})
	eventually(t, "the deferred shadow run", func() bool { return len(f.started()) == 1 })
	f.finish(1)
	c.wait("the deferred run's outcome", func() bool {
		return strings.Contains(strings.Join(c.shown, "\n"), "asked for while the kernel was busy): ran to the end without an exception")
	})
}

// TestKernelLostDuringInspectionShownOnce: an inspection that finds the kernel dead, then
// the heartbeat's death event: one visible message, not only a log line, and not two.
func TestKernelLostDuringInspectionShownOnce(t *testing.T) {
	f := newShadowFake()
	c := startFake(t, f)
	uri := "file://" + nbPath
	c.waitStatus(uri, StatusIdle)
	f.mu.Lock()
	f.inspectErr = fmt.Errorf("%w: connection to the kernel lost: EOF", kernelclient.ErrDead)
	f.mu.Unlock()
	c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 2, 1, 2, 0, 4, 0, 5, "3"))
	c.waitStatus(uri, StatusDead)
	f.send(t, kernelclient.Event{Kind: kernelclient.EventDead, State: kernelclient.StateDead})
	c.wait("the lost-kernel message", func() bool { return strings.Contains(strings.Join(c.shown, "\n"), "stopped responding") })
	// A second report of the same death must not show another message. The sends are
	// unbuffered, and the follow goroutine handles one event before reading the next: once
	// the third is read, the second has been handled.
	f.send(t, kernelclient.Event{Kind: kernelclient.EventDead, State: kernelclient.StateDead})
	f.send(t, kernelclient.Event{Kind: kernelclient.EventDead, State: kernelclient.StateDead})
	c.mu.Lock()
	n := 0
	for _, m := range c.shown {
		if strings.Contains(m, "stopped responding") {
			n++
		}
	}
	c.mu.Unlock()
	if n != 1 {
		t.Errorf("%d lost-kernel messages shown, want 1: %q", n, c.shown)
	}
	r := c.call("workspace/executeCommand", map[string]any{"command": CommandShadowRun, "arguments": []any{cellURI(nbPath, 0)}})
	if r.Error == nil || !strings.Contains(r.Error.Message, "stopped responding") || !strings.Contains(r.Error.Message, "re-attaches") {
		t.Errorf("shadowRun on a lost kernel: %+v, want an error saying the kernel was lost", r)
	}
}

// TestAttachWaitsForIdle: a kernel whose handshake waits for the user's cell shows "waiting
// for the kernel to be idle", and premortem asks it nothing until it is idle.
func TestAttachWaitsForIdle(t *testing.T) {
	f := newShadowFake()
	f.awaiting = true
	f.state = kernelclient.StateBusy
	inspected := make(chan struct{}, 16)
	f.mu.Lock()
	f.inspectErr = nil
	f.mu.Unlock()
	c, _ := startInProcessWith(t, func(s *Server) {
		s.rt.discover = func(ctx context.Context, nbPath string) (*connected, error) {
			return &connected{k: &inspectSpy{f, inspected}, name: "python3 (pid 7)", file: "/run/kernel-fake.json", detail: "found by vscode"}, nil
		}
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "a = 1"}))
	uri := "file://" + nbPath
	st := c.waitStatus(uri, StatusBusy)
	if !strings.Contains(st.Detail, "waiting for the kernel to be idle") {
		t.Errorf("status while the handshake waits: %+v", st)
	}
	select {
	case <-inspected:
		t.Fatal("premortem inspected a kernel it was waiting on")
	case <-time.After(200 * time.Millisecond):
	}
	f.mu.Lock()
	f.awaiting = false
	f.mu.Unlock()
	f.send(t, kernelclient.Event{Kind: kernelclient.EventStatus, State: kernelclient.StateIdle})
	if st := c.waitStatus(uri, StatusIdle); strings.Contains(st.Detail, "waiting") || !strings.Contains(st.Detail, "found by vscode") {
		t.Errorf("status once idle: %+v", st)
	}
	select {
	case <-inspected:
	case <-time.After(waitTimeout):
		t.Fatal("no inspection once the kernel was idle")
	}
}

// inspectSpy reports every inspection of its kernel.
type inspectSpy struct {
	*shadowFake
	seen chan struct{}
}

func (s *inspectSpy) Inspect(ctx context.Context, req kernelclient.InspectRequest) (*facts.Inspection, error) {
	select {
	case s.seen <- struct{}{}:
	default:
	}
	return s.shadowFake.Inspect(ctx, req)
}

// eventually polls pred (state outside the test client, which wait cannot see change)
// until it holds, or fails the test at waitTimeout.
func eventually(t *testing.T, desc string, pred func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !pred() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", desc)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
