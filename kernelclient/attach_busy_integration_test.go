package kernelclient

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// iopubLog records every IOPub message a client receives, in order.
type iopubLog struct {
	mu   sync.Mutex
	msgs []*Message
}

type loggingSink struct {
	sink
	log *iopubLog
}

func (s loggingSink) deliver(ch channel, m *Message) {
	if ch == chIOPub {
		s.log.mu.Lock()
		s.log.msgs = append(s.log.msgs, m)
		s.log.mu.Unlock()
	}
	s.sink.deliver(ch, m)
}

// watchIOPub connects a client that logs the kernel's IOPub stream.
func watchIOPub(t *testing.T, ci ConnectionInfo) *iopubLog {
	t.Helper()
	signer, err := NewSigner(ci.Key, ci.SignatureScheme)
	if err != nil {
		t.Fatal(err)
	}
	log := &iopubLog{}
	c := newClient("watcher", nil, Options{})
	dial := dialZMQ(ci, signer, c.sess.id)
	c.dial = func(ctx context.Context, s sink) (transport, error) { return dial(ctx, loggingSink{s, log}) }
	if err := c.start(ctxT(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return log
}

// TestAttachToBusyKernelSendsNothing: attaching while the user's cell runs sends the kernel
// nothing until the cell ends. The kernel's IOPub stream is the witness: every request on
// shell or control makes ipykernel publish a busy/idle pair parented by the sender's
// session, and IOPub is ordered, so no message of ours may come before the user's idle.
// After the cell the attachment completes by itself and inspects.
func TestAttachToBusyKernelSendsNothing(t *testing.T) {
	l := launch(t, LaunchOptions{})
	ci := mustRead(t, l.ConnectionFile)
	log := watchIOPub(t, ci)
	ctx := ctxT(t, 90*time.Second)
	execDone := make(chan error, 1)
	go func() {
		_, err := l.Execute(ctx, "import time; time.sleep(5)")
		execDone <- err
	}()
	waitEvent(t, l.Client, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
	c, err := Connect(ctxT(t, 10*time.Second), ci)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.AwaitingIdle() || c.State() != StateBusy {
		t.Errorf("connected to a busy kernel: awaiting %v, state %s; want awaiting, busy", c.AwaitingIdle(), c.State())
	}
	if err := <-execDone; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for c.AwaitingIdle() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c.AwaitingIdle() {
		t.Fatal("the attachment never completed after the cell ended")
	}
	if _, err := c.Inspect(ctxT(t, 20*time.Second), InspectRequest{Names: []string{"time"}}); err != nil {
		t.Fatalf("inspect after the cell: %v", err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	userIdle, ours, oursBefore := -1, 0, 0
	for i, m := range log.msgs {
		if m.Parent.Session == c.sess.id {
			ours++
			if userIdle < 0 {
				oursBefore++
			}
		}
		if userIdle < 0 && m.Parent.Session == l.sess.id && m.Header.MsgType == "status" && m.Parent.MsgType == "execute_request" {
			var st struct {
				State string `json:"execution_state"`
			}
			_ = json.Unmarshal(m.Content, &st)
			if st.State == "idle" {
				userIdle = i
			}
		}
	}
	if userIdle < 0 {
		t.Fatal("the watcher never saw the user's cell end")
	}
	if oursBefore != 0 {
		t.Errorf("%d IOPub message(s) answered premortem's requests while the user's cell ran; want 0", oursBefore)
	}
	if ours == 0 {
		t.Error("no IOPub message of the attaching client at all: the witness sees nothing")
	}
}

// TestObserveKernelState: the passive observer reads a real ipykernel's main thread: idle
// in its event loop, busy in a sleeping, computing or reading cell, and a kernel Launch
// started reads as ready (its handshake is done, its Info known).
func TestObserveKernelState(t *testing.T) {
	l := launch(t, LaunchOptions{})
	if l.AwaitingIdle() || l.Info().Session == "" || l.Info().LanguageName != "python" {
		t.Fatalf("Launch returned a kernel without its handshake: awaiting %v, info %+v", l.AwaitingIdle(), l.Info())
	}
	w := newProcWatch(mustRead(t, l.ConnectionFile))
	if st := w.observe(ctxT(t, 5*time.Second)); st != StateIdle {
		t.Fatalf("idle kernel observed as %s", st)
	}
	if w.pid != l.Cmd.Process.Pid {
		t.Errorf("observer found pid %d, want the kernel's %d", w.pid, l.Cmd.Process.Pid)
	}
	for _, tc := range []struct{ name, cell string }{
		{"sleep", "import time; time.sleep(3)"},
		{"compute", "x = 0\nimport time\nt0 = time.time()\nwhile time.time() - t0 < 3: x += 1"},
		{"subprocess", "import subprocess; subprocess.run(['sleep', '3'])"},
	} {
		cell := tc.cell
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := l.Execute(ctxT(t, 30*time.Second), cell)
				done <- err
			}()
			waitEvent(t, l.Client, 20*time.Second, func(e Event) bool { return e.Kind == EventExecuteInput })
			time.Sleep(300 * time.Millisecond)
			if st := w.observe(ctxT(t, 5*time.Second)); st != StateBusy {
				t.Errorf("kernel running %q observed as %s", cell, st)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			st := w.observe(ctxT(t, 5*time.Second))
			for st != StateIdle && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				st = w.observe(ctxT(t, 5*time.Second))
			}
			if st != StateIdle {
				t.Errorf("kernel after %q observed as %s", cell, st)
			}
		})
	}
}
