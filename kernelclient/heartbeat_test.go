package kernelclient

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestDeadByHeartbeatWindow: unanswered heartbeats make a kernel dead after HeartbeatMisses,
// unless its process is known to be scheduled; then only after RunningMissFactor times as
// many (a starved machine, not a dead kernel).
func TestDeadByHeartbeatWindow(t *testing.T) {
	yes := func() bool { return true }
	no := func() bool { return false }
	const m = 10
	for _, tc := range []struct {
		name    string
		running func() bool
		misses  int
		dead    bool
	}{
		{"no process known, short of the window", nil, m - 1, false},
		{"process stopped or gone, short of the window", no, m - 1, false},
		{"no process known, at the window", nil, m, true},
		{"process stopped or gone", no, m, true},
		{"process scheduled, at the plain window", yes, m, false},
		{"process scheduled, just short", yes, m*RunningMissFactor - 1, false},
		{"process scheduled, at the long window", yes, m * RunningMissFactor, true},
	} {
		c := &Client{opts: Options{HeartbeatMisses: m, Running: tc.running}.withDefaults()}
		if got := c.deadByHeartbeat(tc.misses); got != tc.dead {
			t.Errorf("%s: dead after %d misses = %v, want %v", tc.name, tc.misses, got, tc.dead)
		}
	}
}

// TestLaunchedRunning: a process counts as running while it is scheduled, not while it is
// stopped by a signal, and not once it has been reaped.
func TestLaunchedRunning(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	l := &Launched{Cmd: cmd, exited: make(chan struct{})}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(l.exited); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()

	if !l.running() {
		t.Fatal("a sleeping process does not count as running")
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "stopped", func() bool { return !l.running() })
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "continued", l.running)
	cmd.Process.Kill()
	<-done
	if l.running() {
		t.Fatal("a reaped process counts as running")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s after 10 s", what)
		}
	}
}

// TestStoppedKernelDead: a launched kernel stopped by SIGSTOP answers nothing; it is declared
// dead after HeartbeatMisses beats, without the longer window a scheduled process gets.
func TestStoppedKernelDead(t *testing.T) {
	l := launch(t, LaunchOptions{Options: Options{HeartbeatInterval: 200 * time.Millisecond, HeartbeatMisses: 3}})
	if err := l.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer l.signal(syscall.SIGCONT)
	waitEvent(t, l.Client, 30*time.Second, func(e Event) bool { return e.Kind == EventDead })
}
