package kernelclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// historyProbe prints the user-visible history state; the cell itself is run N+1.
const historyProbe = "import sys as _s; print(len(In), sorted(Out), repr(_), repr(__), get_ipython().execution_count, hasattr(_s, 'last_traceback'), sorted(k for k in globals() if not k.startswith('_')))"

// TestInspectLeavesNoTrace: after Inspect (first call injects the inspector), the user's
// execution count, In, Out, _ and globals are what they were, as a real execute shows.
func TestInspectLeavesNoTrace(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	for _, code := range []string{"a = 1", "a + 1", "b = [1, 2]"} {
		if r, err := l.Execute(ctx, code); err != nil || r.Status != "ok" {
			t.Fatalf("execute %q: %+v %v", code, r, err)
		}
	}
	before, err := l.Execute(ctx, historyProbe)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		ins, err := l.Inspect(ctx, InspectRequest{Names: []string{"a", "b", "nope", "b.append", "a.nope"}, Namespace: true})
		if err != nil {
			t.Fatalf("inspect: %v", err)
		}
		if v := ins.Values["a"]; !v.Exists {
			t.Errorf("a: %+v", v)
		}
		if v := ins.Values["nope"]; v.Exists {
			t.Errorf("nope exists: %+v", v)
		}
		if v := ins.Values["a.nope"]; v.Exists {
			t.Errorf("a.nope exists: %+v", v)
		}
		if ins.ExecutionCount != before.ExecutionCount {
			t.Errorf("inspection as of run %d, want %d", ins.ExecutionCount, before.ExecutionCount)
		}
	}
	if _, err := l.WhoAmI(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := l.Execute(ctx, historyProbe)
	if err != nil {
		t.Fatal(err)
	}
	if after.ExecutionCount != before.ExecutionCount+1 {
		t.Errorf("execution count moved: before probe %d, after %d", before.ExecutionCount, after.ExecutionCount)
	}
	// Same output except the counters the probe itself advances (len(In), execution_count).
	norm := func(r *ExecuteResult) string {
		f := strings.Fields(r.Stdout)
		if len(f) > 4 {
			f[0], f[4] = "N", "N"
		}
		return strings.Join(f, " ")
	}
	if b, a := norm(before), norm(after); b != a {
		t.Errorf("user state changed by Inspect:\nbefore %s\nafter  %s", before.Stdout, after.Stdout)
	}
	if strings.Contains(after.Stdout, "True") {
		t.Errorf("sys.last_traceback set by Inspect: %s", after.Stdout)
	}
}

func TestExecuteOutputsAndErrors(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	r, err := l.Execute(ctx, "import sys\nprint('out')\nprint('err', file=sys.stderr)")
	if err != nil || r.Status != "ok" || r.Stdout != "out\n" || r.Stderr != "err\n" || r.ExecutionCount != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = l.Execute(ctx, "{}['missing']")
	if err != nil || r.Status != "error" || r.Ename != "KeyError" || len(r.Traceback) == 0 {
		t.Fatalf("%+v %v", r, err)
	}
	// input() in our request: allow_stdin is false, so it fails at once instead of blocking.
	r, err = l.Execute(ctx, "input('? ')")
	if err != nil || r.Status != "error" || r.Ename != "StdinNotImplementedError" {
		t.Fatalf("input(): %+v %v", r, err)
	}
}

// TestEventsFromOtherClient: a second client sees the first one's executions on IOPub.
func TestEventsFromOtherClient(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	watcher, err := ConnectFile(ctx, l.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	go l.Execute(ctx, "undefined_name + 1")
	in := waitEvent(t, watcher, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	if in.Ours || in.Code != "undefined_name + 1" || in.ExecutionCount != 1 {
		t.Errorf("execute_input event %+v", in)
	}
	done := waitEvent(t, watcher, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteReply })
	if done.Ours || done.Status != "error" || done.Ename != "NameError" || done.ExecutionCount != 1 || len(done.Traceback) == 0 {
		t.Errorf("execute reply event %+v", done)
	}
	// Our own Execute is flagged Ours on our client.
	go l.Execute(ctx, "1")
	own := waitEvent(t, l.Client, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteReply && e.Code == "1" })
	if !own.Ours || own.Status != "ok" {
		t.Errorf("own event %+v", own)
	}
}

// TestBusyKernel: while another client's cell runs, Inspect never queues: ErrBusy at once
// without a deadline, ErrBusy at the deadline with one; it works again once idle.
func TestBusyKernel(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	watcher, err := ConnectFile(ctx, l.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	// A wedged cell: busy until interrupted.
	execDone := make(chan error, 1)
	go func() {
		r, err := l.Execute(ctx, "import time\nwhile True: time.sleep(0.05)")
		if err == nil && r.Ename != "KeyboardInterrupt" {
			err = fmt.Errorf("want KeyboardInterrupt, got %+v", r)
		}
		execDone <- err
	}()
	waitEvent(t, watcher, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	if st := watcher.State(); st != StateBusy {
		t.Fatalf("state %s, want busy", st)
	}
	// The watcher sees another client's cell; the client that sent it sees only its own
	// request, which is no reason to give up.
	if !watcher.RunningOthers() {
		t.Error("watcher: RunningOthers false while another client's cell runs")
	}
	for end := time.Now().Add(10 * time.Second); l.State() != StateBusy && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // the sender's IOPub may trail the watcher's
	}
	if l.State() != StateBusy || l.RunningOthers() {
		t.Errorf("sender: state %s, RunningOthers %v; want busy and false (the cell is its own)", l.State(), l.RunningOthers())
	}
	if _, err := watcher.Inspect(context.Background(), InspectRequest{Names: []string{"time"}}); !errors.Is(err, ErrBusy) {
		t.Fatalf("inspect without deadline: %v, want ErrBusy", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := watcher.Inspect(short, InspectRequest{Names: []string{"time"}}); !errors.Is(err, ErrBusy) {
		t.Fatalf("inspect with deadline: %v, want ErrBusy", err)
	}
	if err := watcher.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-execDone; err != nil {
		t.Fatal(err)
	}
	ins, err := watcher.Inspect(ctxT(t, 10*time.Second), InspectRequest{Names: []string{"time"}})
	if err != nil || !ins.Values["time"].Exists {
		t.Fatalf("inspect after idle: %+v %v", ins, err)
	}
	if watcher.RunningOthers() {
		t.Error("watcher: RunningOthers true after the cell ended")
	}
}

// TestConnectToBusyKernel: connecting while a cell runs works (control answers) and the
// kernel reads as busy.
func TestConnectToBusyKernel(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	go l.Execute(ctx, "import time; time.sleep(3)")
	waitEvent(t, l.Client, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	c, err := ConnectFile(ctx, l.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := c.State(); st != StateBusy {
		t.Errorf("state after connecting to a busy kernel: %s", st)
	}
	if _, err := c.Inspect(context.Background(), InspectRequest{Names: []string{"time"}}); !errors.Is(err, ErrBusy) {
		t.Errorf("inspect: %v, want ErrBusy", err)
	}
	if _, err := c.Inspect(ctxT(t, 20*time.Second), InspectRequest{Names: []string{"time"}}); err != nil {
		t.Errorf("inspect waiting for idle: %v", err)
	}
}

func TestWrongKey(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ci, err := ReadConnectionFile(l.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	ci.Key = "definitely-not-the-key"
	_, err = Connect(ctxT(t, 2*time.Second), ci)
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "kernel did not answer: wrong key?") {
		t.Fatalf("got %v, want ErrNoAnswer", err)
	}
}

func TestBadConnectionFiles(t *testing.T) {
	dir := t.TempDir()
	ports, err := freePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf(`{"transport":"tcp","ip":"127.0.0.1","shell_port":%d,"iopub_port":%d,"stdin_port":%d,"control_port":%d,"hb_port":%d,"key":"k","signature_scheme":"hmac-sha256"}`, ports[0], ports[1], ports[2], ports[3], ports[4])
	tests := []struct {
		name, content string
		reason        string
		wantErr       error
	}{
		{"malformed", `{"shell_port": 5`, ReasonMalformed, nil},
		{"not json", "\x00\x01binary", ReasonMalformed, nil},
		{"missing ports", `{"transport":"tcp","ip":"127.0.0.1","key":"k"}`, ReasonIncomplete, nil},
		{"bad transport", `{"transport":"udp","ip":"127.0.0.1","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5}`, ReasonIncomplete, nil},
		{"bad scheme", `{"transport":"tcp","ip":"127.0.0.1","shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"key":"k","signature_scheme":"hmac-nope"}`, ReasonIncomplete, nil},
		{"stale", stale, "", ErrStale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "kernel-"+strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ConnectFile(ctxT(t, 5*time.Second), path)
			if err == nil {
				t.Fatal("connected")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			var cfe *ConnectionFileError
			if tc.reason != "" && (!errors.As(err, &cfe) || cfe.Reason != tc.reason) {
				t.Fatalf("got %v, want reason %s", err, tc.reason)
			}
		})
	}
	if _, err := ConnectFile(ctxT(t, time.Second), filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file connected")
	}
}

// TestKilledMidRequest: the kernel dies while our request runs: ErrDead, no hang, and later
// calls fail fast.
func TestKilledMidRequest(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	errc := make(chan error, 1)
	go func() {
		_, err := l.Execute(ctx, "import time; time.sleep(30)")
		errc <- err
	}()
	waitEvent(t, l.Client, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrDead) {
		t.Fatalf("execute: %v, want ErrDead", err)
	}
	if _, err := l.Inspect(ctx, InspectRequest{Names: []string{"x"}}); !errors.Is(err, ErrDead) {
		t.Fatalf("inspect after death: %v, want ErrDead", err)
	}
	if st := l.State(); st != StateDead {
		t.Fatalf("state %s", st)
	}
}

// TestKilledWithForkedChild: a kernel killed while a child it forked without exec lives
// (multiprocessing's fork workers, a shadow child before it closed its descriptors) counts
// as exited when its process is reaped, although the child still holds the kernel's copy of
// its stderr pipe; the child goes with the kernel's process group.
func TestKilledWithForkedChild(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	res, err := l.Execute(ctx, "import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(120)\n    os._exit(0)\nprint(pid)")
	if err != nil || res.Status != "ok" {
		t.Fatalf("execute: %v %+v", err, res)
	}
	child, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil {
		t.Fatalf("child pid %q: %v", res.Stdout, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if err := l.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Exited():
	case <-time.After(15 * time.Second):
		t.Fatal("Exited not closed 15 s after the kernel was killed: the forked child's stderr holds it")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); strings.Contains(string(st), ") Z ") {
			break // killed, waiting for init to reap it
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel's forked child %d outlived it", child)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDeadByHeartbeat: a client that did not launch the kernel learns of its death from the
// lost connection and heartbeat, and emits EventDead.
func TestDeadByHeartbeat(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 60*time.Second)
	c, err := ConnectWithOptions(ctx, mustRead(t, l.ConnectionFile), Options{HeartbeatInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c, 20*time.Second, func(e Event) bool { return e.Kind == EventDead })
	if _, err := c.Inspect(ctx, InspectRequest{Names: []string{"x"}}); !errors.Is(err, ErrDead) {
		t.Fatalf("inspect: %v, want ErrDead", err)
	}
}

func mustRead(t testing.TB, path string) ConnectionInfo {
	t.Helper()
	ci, err := ReadConnectionFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

// TestRestartSamePorts: the kernel process is replaced by a new one on the same connection
// file (what a Jupyter restart does): the client reconnects, emits EventRestart, a request
// in flight fails with ErrRestarted, and the inspector is injected again.
func TestRestartSamePorts(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 90*time.Second)
	c, err := ConnectWithOptions(ctx, mustRead(t, l.ConnectionFile), Options{HeartbeatInterval: 300 * time.Millisecond, HeartbeatMisses: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Inspect(ctx, InspectRequest{Names: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	oldSession := c.Info().Session
	errc := make(chan error, 1)
	go func() {
		_, err := c.Execute(ctx, "import time; time.sleep(30)")
		errc <- err
	}()
	waitEvent(t, c, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python.Path(), "-m", "ipykernel_launcher", "-f", l.ConnectionFile)
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		killProcessGroup(cmd)
		cmd.Wait()
	}()
	waitEvent(t, c, 30*time.Second, func(e Event) bool { return e.Kind == EventRestart })
	// The request in flight dies with its kernel: depending on which the client sees first,
	// the new session or the old shell connection closing, that is ErrRestarted or ErrDead.
	if err := <-errc; !errors.Is(err, ErrRestarted) && !errors.Is(err, ErrDead) {
		t.Errorf("request in flight: %v, want ErrRestarted or ErrDead", err)
	}
	if c.Info().Session == oldSession {
		t.Error("session id unchanged after restart")
	}
	// A fresh budget: the restart itself may have used much of the first one on a slow machine.
	ctx = ctxT(t, 60*time.Second)
	r, err := c.Execute(ctx, "x = 5")
	if err != nil || r.ExecutionCount != 1 {
		t.Fatalf("execute after restart: %+v %v", r, err)
	}
	ins, err := c.Inspect(ctx, InspectRequest{Names: []string{"x"}})
	if err != nil || !ins.Values["x"].Exists {
		t.Fatalf("inspect after restart: %+v %v", ins, err)
	}
}

func TestClosedClient(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 30*time.Second)
	c, err := ConnectFile(ctx, l.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := c.Inspect(ctx, InspectRequest{Names: []string{"x"}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("inspect on closed client: %v", err)
	}
	if _, ok := <-c.Events(); ok {
		t.Fatal("events channel still open")
	}
	if c.Close() != nil {
		t.Fatal("second Close failed")
	}
}

// TestExecuteHonoursContext: when ctx ends, Execute interrupts the kernel (SIGINT for a
// kernelspec without interrupt_mode) and returns; the kernel is free again afterwards.
func TestExecuteHonoursContext(t *testing.T) {
	l := launch(t, LaunchOptions{})
	short, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := l.Execute(short, "import time; time.sleep(60)")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("execute: %v, want deadline exceeded", err)
	}
	ctx := ctxT(t, 30*time.Second)
	r, err := l.Execute(ctx, "print('free')")
	if err != nil || r.Stdout != "free\n" {
		t.Fatalf("after interrupt: %+v %v", r, err)
	}
}
