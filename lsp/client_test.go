package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// testClient is a minimal LSP client speaking to a server over pipes, as an editor would.
// It records what the server publishes and answers the server's own requests with null.
type testClient struct {
	t testing.TB
	w io.WriteCloser

	mu      sync.Mutex
	nextID  int
	pending map[string]chan rawResponse
	diags   map[string][]protocol.Diagnostic
	// publishes counts publishDiagnostics per URI; history keeps every list published per
	// URI, in order.
	publishes map[string]int
	history   map[string][][]protocol.Diagnostic
	logs      []string
	shown     []string
	progress  []json.RawMessage
	requests  []string // methods of server-to-client requests
	// statuses are the premortem/status notifications, in order.
	statuses []KernelStatus
	// config answers workspace/configuration (nil: null).
	config  any
	changed chan struct{}
	closed  bool
}

type rawResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wireMsg is any JSON-RPC message.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	rawResponse
}

// waitTimeout bounds every wait on the server.
const waitTimeout = 20 * time.Second

func newTestClient(t testing.TB, w io.WriteCloser, r io.Reader) *testClient {
	c := &testClient{
		t: t, w: w,
		pending:   map[string]chan rawResponse{},
		diags:     map[string][]protocol.Diagnostic{},
		publishes: map[string]int{},
		history:   map[string][][]protocol.Diagnostic{},
		changed:   make(chan struct{}),
	}
	go c.read(r)
	return c
}

// startInProcess runs Serve on io.Pipes and returns the client and the exit code channel.
func startInProcess(t testing.TB) (*testClient, <-chan int) {
	t.Helper()
	return startInProcessWith(t, nil)
}

func startInProcessWith(t testing.TB, setup func(*Server)) (*testClient, <-chan int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := newServer(context.Background(), Options{Log: testLog{t}})
	// Never probe the machine's real kernels from tests: discovery scans an empty
	// runtime directory (and finds no kernel) unless a test sets up its own.
	s.rt.dirs = []string{t.TempDir()}
	if setup != nil {
		setup(s)
	}
	code := make(chan int, 1)
	stopped := make(chan struct{})
	go func() {
		code <- s.run(pipeRWC{inR, outW})
		outW.Close()
		close(stopped)
	}()
	c := newTestClient(t, inW, outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-stopped:
		case <-time.After(waitTimeout):
			t.Errorf("server did not stop after its input closed")
		}
	})
	return c, code
}

type pipeRWC struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRWC) Close() error {
	p.r.Close()
	return p.w.Close()
}

type testLog struct{ t testing.TB }

func (l testLog) Write(b []byte) (int, error) {
	if testing.Verbose() {
		l.t.Logf("server: %s", strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (c *testClient) read(r io.Reader) {
	br := bufio.NewReader(r)
	defer func() {
		c.mu.Lock()
		c.closed = true
		c.signalLocked()
		c.mu.Unlock()
	}()
	for {
		length := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		if length < 0 {
			c.t.Errorf("server sent a message without Content-Length")
			return
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("server sent invalid JSON: %v: %s", err, body)
			continue
		}
		c.dispatch(m)
	}
}

func (c *testClient) dispatch(m wireMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.signalLocked()
	switch {
	case m.Method == "" && len(m.ID) > 0:
		if ch := c.pending[string(m.ID)]; ch != nil {
			ch <- m.rawResponse
			delete(c.pending, string(m.ID))
		}
	case m.Method != "" && len(m.ID) > 0:
		c.requests = append(c.requests, m.Method)
		var result any
		if m.Method == "workspace/configuration" && c.config != nil {
			result = []any{c.config}
		}
		go c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	case m.Method == "textDocument/publishDiagnostics":
		var p struct {
			URI         string                `json:"uri"`
			Diagnostics []protocol.Diagnostic `json:"diagnostics"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			c.t.Errorf("bad publishDiagnostics: %v", err)
			return
		}
		if p.Diagnostics == nil {
			c.t.Errorf("publishDiagnostics for %s has null diagnostics (must be a list)", p.URI)
		}
		c.diags[p.URI] = p.Diagnostics
		c.publishes[p.URI]++
		c.history[p.URI] = append(c.history[p.URI], p.Diagnostics)
	case m.Method == "window/logMessage":
		var p protocol.LogMessageParams
		_ = json.Unmarshal(m.Params, &p)
		c.logs = append(c.logs, p.Message)
	case m.Method == "window/showMessage":
		var p protocol.ShowMessageParams
		_ = json.Unmarshal(m.Params, &p)
		c.shown = append(c.shown, p.Message)
	case m.Method == StatusMethod:
		var st KernelStatus
		if err := json.Unmarshal(m.Params, &st); err != nil {
			c.t.Errorf("bad %s: %v", StatusMethod, err)
			return
		}
		c.statuses = append(c.statuses, st)
	case m.Method == "$/progress":
		c.progress = append(c.progress, m.Params)
	}
}

func (c *testClient) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *testClient) send(msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		c.t.Errorf("marshal: %v", err)
		return
	}
	c.sendRaw(data)
}

var writeMu sync.Mutex

func (c *testClient) sendRaw(data []byte) {
	writeMu.Lock()
	defer writeMu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(data), data); err != nil {
		c.t.Logf("write to server: %v", err)
	}
}

// notify sends a notification.
func (c *testClient) notify(method string, params any) {
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request and waits for its response.
func (c *testClient) call(method string, params any) rawResponse {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	ch := make(chan rawResponse, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		c.t.Fatalf("no response to %s within %v", method, waitTimeout)
		return rawResponse{}
	}
}

// callOK sends a request, fails on an error response, and decodes the result into out.
func (c *testClient) callOK(method string, params any, out any) {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			c.t.Fatalf("%s: decode result %s: %v", method, r.Result, err)
		}
	}
}

// wait blocks until pred (called with c.mu held) holds.
func (c *testClient) wait(desc string, pred func() bool) {
	c.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok := pred()
		ch := c.changed
		closed := c.closed
		c.mu.Unlock()
		if ok {
			return
		}
		if closed {
			c.t.Fatalf("server closed the connection while waiting for %s", desc)
		}
		select {
		case <-ch:
		case <-deadline.C:
			c.mu.Lock()
			state := c.describeLocked()
			c.mu.Unlock()
			c.t.Fatalf("timed out waiting for %s; client state:\n%s", desc, state)
		}
	}
}

func (c *testClient) describeLocked() string {
	var b strings.Builder
	uris := make([]string, 0, len(c.diags))
	for u := range c.diags {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		fmt.Fprintf(&b, "  %s: %s\n", u, diagSummary(c.diags[u]))
	}
	for _, l := range c.logs {
		fmt.Fprintf(&b, "  log: %s\n", l)
	}
	for _, st := range c.statuses {
		fmt.Fprintf(&b, "  status: %+v\n", st)
	}
	return b.String()
}

// diagSummary renders diagnostics as "code@l:c-l:c" for messages and comparisons.
func diagSummary(ds []protocol.Diagnostic) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%v@%d:%d-%d:%d", d.Code, d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character))
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// waitDiags waits until the latest diagnostics of uri, summarized, equal want (e.g.
// "[undefined-name@0:4-0:5]", "[]" for none).
func (c *testClient) waitDiags(uri, want string) []protocol.Diagnostic {
	c.t.Helper()
	var got []protocol.Diagnostic
	c.wait(fmt.Sprintf("diagnostics %s on %s", want, uri), func() bool {
		got = c.diags[uri]
		return diagSummary(got) == want
	})
	return got
}

// waitStatus waits until the latest premortem/status of uri has the state, and returns it.
func (c *testClient) waitStatus(uri, state string) KernelStatus {
	c.t.Helper()
	var got KernelStatus
	c.wait(fmt.Sprintf("latest status %s for %s", state, uri), func() bool {
		for i := len(c.statuses) - 1; i >= 0; i-- {
			if c.statuses[i].URI == uri {
				got = c.statuses[i]
				return got.State == state
			}
		}
		return false
	})
	return got
}

// waitStatusSeen waits until some premortem/status of uri, from the index-th on, has the
// state (for passing states such as busy), and returns it with the index after it.
func (c *testClient) waitStatusSeen(uri, state string, from int) (KernelStatus, int) {
	c.t.Helper()
	var got KernelStatus
	next := 0
	c.wait(fmt.Sprintf("a status %s for %s", state, uri), func() bool {
		for i := from; i < len(c.statuses); i++ {
			if c.statuses[i].URI == uri && c.statuses[i].State == state {
				got, next = c.statuses[i], i+1
				return true
			}
		}
		return false
	})
	return got, next
}

// lastStatus is the latest premortem/status of uri (State "" when none came).
func (c *testClient) lastStatus(uri string) KernelStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.statuses) - 1; i >= 0; i-- {
		if c.statuses[i].URI == uri {
			return c.statuses[i]
		}
	}
	return KernelStatus{}
}

// waitLog waits for a logMessage containing substr.
func (c *testClient) waitLog(substr string) {
	c.t.Helper()
	c.wait("a log message containing "+strconv.Quote(substr), func() bool {
		for _, l := range c.logs {
			if strings.Contains(l, substr) {
				return true
			}
		}
		return false
	})
}

// initialize performs the handshake with VS Code's capabilities.
func (c *testClient) initialize(initOptions any) map[string]any {
	c.t.Helper()
	var res map[string]any
	c.callOK("initialize", vscodeInitializeParams(initOptions), &res)
	c.notify("initialized", map[string]any{})
	return res
}

// shutdownExit performs shutdown then exit.
func (c *testClient) shutdownExit() {
	c.t.Helper()
	c.callOK("shutdown", nil, nil)
	c.notify("exit", nil)
}

func sortStrings(s []string) { sort.Strings(s) }
