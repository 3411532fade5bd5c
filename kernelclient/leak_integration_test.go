package kernelclient

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCloseLeavesNoGoroutines: Connect then Close leaves no reader, heartbeat or queue
// goroutine behind. Close waits for them, so the count is compared at once, without polling.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	l := launch(t, LaunchOptions{})
	connectClose := func() {
		c, err := ConnectFile(ctxT(t, 30*time.Second), l.ConnectionFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	}
	connectClose() // anything started once per process (zmq4, runtime) is not a leak
	before := ours()
	for range 3 {
		connectClose()
	}
	if after := ours(); len(after) > len(before) {
		t.Fatalf("%d goroutines of ours before Connect+Close, %d after:\n%s", len(before), len(after), strings.Join(after, "\n\n"))
	}
}

// ours lists the stacks of live goroutines that run kernelclient code. Goroutines zmq4
// starts on its own (a socket's connReaper) end asynchronously after Close cancels them and
// are not ours to wait for.
func ours() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "TestCloseLeavesNoGoroutines") {
			continue
		}
		if strings.Contains(g, "premortem/kernelclient.") {
			out = append(out, g)
		}
	}
	return out
}
