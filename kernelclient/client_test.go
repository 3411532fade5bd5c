package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeKernel answers like ipykernel over a fake transport (no sockets): kernel_info on
// control and shell, silent executes with scripted user_expressions results.
type fakeKernel struct {
	mu       sync.Mutex
	session  string
	sink     sink
	sent     []*Message // everything the client sent, by channel order
	channels []channel
	// exprs answers user_expressions by key; nil map = {"status":"ok","data":{"text/plain":"'x'"}}.
	exprs map[string]map[string]any
	// script, when set, answers successive execute_requests' user_expressions in turn.
	script []map[string]map[string]any
	// mute drops every request (a wrong key, a wedged process).
	mute bool
	// sentSig gets a token per message sent.
	sentSig chan struct{}
}

// waitSent waits until the client has sent a msgType on ch.
func (k *fakeKernel) waitSent(t *testing.T, ch channel, msgType string) {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	for k.count(ch, msgType) == 0 {
		select {
		case <-k.sentSig:
		case <-timer.C:
			t.Fatalf("no %s sent on %s", msgType, ch)
		}
	}
}

type fakeTransport struct{ k *fakeKernel }

func (t fakeTransport) send(ch channel, m *Message) error {
	t.k.mu.Lock()
	t.k.sent = append(t.k.sent, m)
	t.k.channels = append(t.k.channels, ch)
	mute := t.k.mute
	t.k.mu.Unlock()
	select {
	case t.k.sentSig <- struct{}{}:
	default:
	}
	if !mute {
		go t.k.answer(ch, m)
	}
	return nil
}
func (t fakeTransport) ping(context.Context) error { return nil }
func (t fakeTransport) close() error               { return nil }

func (k *fakeKernel) msg(msgType string, parent Header, content any) *Message {
	raw, _ := json.Marshal(content)
	return &Message{
		Header:  Header{MsgID: newID(), Session: k.session, MsgType: msgType, Version: "5.3", Date: time.Now().UTC().Format(time.RFC3339Nano)},
		Parent:  parent,
		Content: raw,
	}
}

// answer publishes busy, the reply, idle — in ipykernel's order.
func (k *fakeKernel) answer(ch channel, m *Message) {
	k.mu.Lock()
	s := k.sink
	k.mu.Unlock()
	if ch == chStdin {
		return
	}
	s.deliver(chIOPub, k.msg("status", m.Header, map[string]string{"execution_state": "busy"}))
	switch m.Header.MsgType {
	case "kernel_info_request":
		s.deliver(ch, k.msg("kernel_info_reply", m.Header, map[string]any{"protocol_version": "5.3", "implementation": "fake", "language_info": map[string]string{"name": "python", "version": "3.11"}}))
	case "execute_request":
		var req struct {
			UserExpressions map[string]string `json:"user_expressions"`
		}
		json.Unmarshal(m.Content, &req)
		out := map[string]any{}
		k.mu.Lock()
		exprs := k.exprs
		if len(k.script) > 0 {
			exprs, k.script = k.script[0], k.script[1:]
		}
		k.mu.Unlock()
		for key := range req.UserExpressions {
			r, ok := exprs[key]
			if !ok {
				r = map[string]any{"status": "ok", "data": map[string]string{"text/plain": "'x'"}}
			}
			out[key] = r
		}
		s.deliver(ch, k.msg("execute_reply", m.Header, map[string]any{"status": "ok", "execution_count": 7, "user_expressions": out}))
	}
	s.deliver(chIOPub, k.msg("status", m.Header, map[string]string{"execution_state": "idle"}))
}

func (k *fakeKernel) count(ch channel, msgType string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for i, m := range k.sent {
		if k.channels[i] == ch && m.Header.MsgType == msgType {
			n++
		}
	}
	return n
}

// newFakeClient makes a client of a fresh fakeKernel, not yet started.
func newFakeClient() (*fakeKernel, *Client) {
	k := &fakeKernel{session: "kernel-session-1", sentSig: make(chan struct{}, 1)}
	c := newClient("fake", func(ctx context.Context, s sink) (transport, error) {
		k.mu.Lock()
		k.sink = s
		k.mu.Unlock()
		return fakeTransport{k}, nil
	}, Options{HeartbeatInterval: time.Hour})
	return k, c
}

func newFake(t *testing.T) (*fakeKernel, *Client) {
	t.Helper()
	k, c := newFakeClient()
	if err := c.start(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return k, c
}

func TestFakeHandshakeAndInfo(t *testing.T) {
	_, c := newFake(t)
	info := c.Info()
	if info.Session != "kernel-session-1" || info.LanguageName != "python" || info.Implementation != "fake" {
		t.Fatalf("info %+v", info)
	}
	if c.State() != StateIdle {
		t.Fatalf("state %s", c.State())
	}
}

// TestNeverSendToBusyKernel: another client's run makes the kernel busy; our request is not
// sent at all (ErrBusy at once without deadline, at the deadline with one) and goes out as
// soon as the kernel is idle.
func TestNeverSendToBusyKernel(t *testing.T) {
	k, c := newFake(t)
	before := k.count(chShell, "execute_request")
	other := Header{MsgID: "user-run-1", Session: "the-users-frontend", MsgType: "execute_request"}
	k.sink.deliver(chIOPub, k.msg("status", other, map[string]string{"execution_state": "busy"}))
	if c.State() != StateBusy {
		t.Fatalf("state %s", c.State())
	}
	if _, err := c.WhoAmI(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("no deadline: %v", err)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.WhoAmI(short); !errors.Is(err, ErrBusy) {
		t.Fatalf("with deadline: %v", err)
	}
	if n := k.count(chShell, "execute_request"); n != before {
		t.Fatalf("%d requests sent to a busy kernel", n-before)
	}
	// Idle arrives while we wait.
	done := make(chan error, 1)
	go func() {
		_, _, err := c.evalSilent(ctxT(t, 5*time.Second), nil)
		done <- err
	}()
	k.sink.deliver(chIOPub, k.msg("status", other, map[string]string{"execution_state": "idle"}))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestStdinAnsweredOnlyForOurs(t *testing.T) {
	k, c := newFake(t)
	ours := Header{MsgID: "m1", Session: c.sess.id, MsgType: "execute_request"}
	theirs := Header{MsgID: "m2", Session: "someone-else", MsgType: "execute_request"}
	k.sink.deliver(chStdin, k.msg("input_request", theirs, map[string]any{"prompt": "?"}))
	k.sink.deliver(chStdin, k.msg("input_request", ours, map[string]any{"prompt": "?"}))
	if n := k.count(chStdin, "input_reply"); n != 1 {
		t.Fatalf("%d input replies, want 1 (ours only)", n)
	}
	k.mu.Lock()
	last := k.sent[len(k.sent)-1]
	k.mu.Unlock()
	// input_reply's parent is the input_request itself, which answered our request m1.
	if last.Header.MsgType != "input_reply" || last.Parent.MsgType != "input_request" {
		t.Fatalf("last sent %+v", last.Header)
	}
}

func TestOtherClientEvents(t *testing.T) {
	k, c := newFake(t)
	run := Header{MsgID: "r1", Session: "frontend", MsgType: "execute_request"}
	k.sink.deliver(chIOPub, k.msg("status", run, map[string]string{"execution_state": "busy"}))
	k.sink.deliver(chIOPub, k.msg("execute_input", run, map[string]any{"code": "df['x']", "execution_count": 3}))
	k.sink.deliver(chIOPub, k.msg("error", run, map[string]any{"ename": "KeyError", "evalue": "'x'", "traceback": []string{"tb"}}))
	k.sink.deliver(chIOPub, k.msg("status", run, map[string]string{"execution_state": "idle"}))
	in := waitEvent(t, c, 5*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	if in.Code != "df['x']" || in.ExecutionCount != 3 || in.Ours {
		t.Errorf("input %+v", in)
	}
	rep := waitEvent(t, c, 5*time.Second, func(e Event) bool { return e.Kind == EventExecuteReply })
	if rep.Status != "error" || rep.Ename != "KeyError" || rep.Evalue != "'x'" || rep.ExecutionCount != 3 || rep.Code != "df['x']" {
		t.Errorf("reply %+v", rep)
	}
}

func TestRestartBySessionChange(t *testing.T) {
	k, c := newFake(t)
	k.mu.Lock()
	k.mute = true // the request in flight is never answered
	k.mu.Unlock()
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.evalSilent(ctxT(t, 10*time.Second), nil)
		errc <- err
	}()
	k.waitSent(t, chShell, "execute_request")
	k.mu.Lock()
	k.session = "kernel-session-2"
	k.mu.Unlock()
	k.sink.deliver(chIOPub, k.msg("status", Header{}, map[string]string{"execution_state": "starting"}))
	if err := <-errc; !errors.Is(err, ErrRestarted) {
		t.Fatalf("in flight: %v", err)
	}
	waitEvent(t, c, 5*time.Second, func(e Event) bool { return e.Kind == EventRestart })
	if c.Info().Session != "kernel-session-2" {
		t.Fatalf("session %s", c.Info().Session)
	}
}

func TestUnansweredRequest(t *testing.T) {
	k, c := newFake(t)
	k.mu.Lock()
	k.mute = true
	k.mu.Unlock()
	_, _, err := c.evalSilent(ctxT(t, 100*time.Millisecond), nil)
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "wrong key?") {
		t.Fatalf("got %v", err)
	}
}

func TestInspectorErrorSurfaces(t *testing.T) {
	k, c := newFake(t)
	k.exprs = map[string]map[string]any{"r": {"status": "error", "ename": "RuntimeError", "evalue": "inspector broke", "traceback": []string{}}}
	_, err := c.Inspect(ctxT(t, 5*time.Second), InspectRequest{Names: []string{"df"}})
	var ie *InspectorError
	if !errors.As(err, &ie) || ie.Ename != "RuntimeError" || !errors.Is(err, ErrInspector) {
		t.Fatalf("got %v", err)
	}
	if n := strings.Count(err.Error(), "inspect:"); n != 1 {
		t.Errorf("%q names the call %d times, want once", err, n)
	}
}

func TestInspectInjectsOnce(t *testing.T) {
	k, c := newFake(t)
	// First answer: module missing; then the injecting call returns facts.
	k.mu.Lock()
	k.script = []map[string]map[string]any{
		{"r": {"status": "ok", "data": map[string]string{"text/plain": "'" + needsInject + "'"}}},
		{"r": {"status": "ok", "data": map[string]string{"text/plain": `{"values": {"df": {"name": "df", "exists": true}}, "execution_count": 0}`}}},
	}
	k.mu.Unlock()
	ins, err := c.Inspect(ctxT(t, 5*time.Second), InspectRequest{Names: []string{"df"}})
	if err != nil {
		t.Fatal(err)
	}
	if !ins.Values["df"].Exists || ins.ExecutionCount != 7 {
		t.Fatalf("%+v", ins)
	}
	k.mu.Lock()
	var codes []string
	for _, m := range k.sent {
		if m.Header.MsgType == "execute_request" {
			var req struct {
				Code            string            `json:"code"`
				Silent          bool              `json:"silent"`
				StoreHistory    bool              `json:"store_history"`
				UserExpressions map[string]string `json:"user_expressions"`
			}
			json.Unmarshal(m.Content, &req)
			if req.Code != "" || !req.Silent || req.StoreHistory {
				t.Errorf("inspect request not silent/empty: %+v", req)
			}
			codes = append(codes, req.UserExpressions["r"])
		}
	}
	k.mu.Unlock()
	if len(codes) != 2 || strings.Contains(codes[0], "exec(compile(") || !strings.Contains(codes[1], "exec(compile(") {
		t.Fatalf("want a guarded call then an injecting one, got %d requests", len(codes))
	}
}

func TestPyLiterals(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:        `"plain"`,
		`it's "q"`:     `"it's \"q\""`,
		"nl\n\\ tab\t": `"nl\n\\ tab\t"`,
		"<&>":          `"\u003c\u0026\u003e"`,
	} {
		if got := pyStr(in); got != want {
			t.Errorf("pyStr(%q) = %s, want %s", in, got, want)
		}
	}
	if got := pyList([]string{"a", "b.c"}); got != `["a", "b.c"]` {
		t.Errorf("pyList = %s", got)
	}
}

// TestStartingForeverConnects: a Jupyter Server can report "starting" until someone asks
// the kernel something (it missed the kernel's only status message). With a long ctx, the
// client must handshake after the grace instead of waiting out ctx (the hang this replaces
// waited until two seconds before the deadline, and Execute then had no time left).
func TestStartingForeverConnects(t *testing.T) {
	_, c := newFakeClient()
	c.observe = func(context.Context) State { return StateStarting }
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.start(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("start still waiting on a kernel read as starting after a minute")
	}
	if c.AwaitingIdle() {
		t.Fatal("a kernel read as starting got a deferred handshake although ctx left room")
	}
	if info := c.Info(); info.LanguageName != "python" {
		t.Fatalf("no kernel_info after start: %+v", info)
	}
}
