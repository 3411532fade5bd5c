package kernelclient

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// pythonPath is the interpreter with Debian's ipykernel, jupyter_client and notebook.
const pythonPath = "/usr/bin/python3"

// requirePython skips the test when pythonPath cannot import module.
func requirePython(t testing.TB, module string) {
	t.Helper()
	if err := exec.Command(pythonPath, "-c", "import "+module).Run(); err != nil {
		t.Skipf("%s cannot import %s (%v): install python3-ipykernel / python3-notebook to run this test", pythonPath, module, err)
	}
}

// launch starts a real ipykernel for a test and shuts it down at the end.
func launch(t testing.TB, opts LaunchOptions) *Launched {
	t.Helper()
	requirePython(t, "ipykernel")
	if opts.Python == "" {
		opts.Python = pythonPath
	}
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.Shutdown(ctx)
	})
	return l
}

// ctxT returns a context with a deadline for one step of a test.
func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// seeEvent reads events until match accepts one (true) or the deadline passes (false).
func seeEvent(c *Client, d time.Duration, match func(Event) bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				return false
			}
			if match(ev) {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

// waitEvent reads events until match accepts one, or fails the test at the deadline.
func waitEvent(t testing.TB, c *Client, d time.Duration, match func(Event) bool) Event {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatal("events channel closed")
			}
			if match(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no matching event within %v", d)
			return Event{}
		}
	}
}
