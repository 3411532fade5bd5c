//go:build linux

package kernelclient

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// TestKernelOutlivesLaunchingThread: Linux sends a kernel's death signal when the *thread*
// that forked it exits, not premortem. A kernel launched from a goroutine whose thread then
// ends (a locked goroutine returning ends its thread) must go on running: Launch forks from
// a thread of its own that lives as long as the kernel.
func TestKernelOutlivesLaunchingThread(t *testing.T) {
	python.Require(t, "ipykernel")
	got := make(chan *Launched, 1)
	go func() {
		// Locked and never unlocked: the thread ends when this goroutine returns.
		runtime.LockOSThread()
		got <- launch(t, LaunchOptions{})
	}()
	l := <-got
	// Give the ended thread's death signal, if the kernel had one tied to it, time to land.
	time.Sleep(500 * time.Millisecond)
	select {
	case <-l.Exited():
		t.Fatalf("the kernel died with the thread that launched it: %s", l.ExitState())
	default:
	}
	res, err := l.Execute(ctxT(t, 30*time.Second), "print(6 * 7)")
	if err != nil || !strings.Contains(res.Stdout, "42") {
		t.Fatalf("execute after the launching thread ended: %+v, %v", res, err)
	}
}

// TestKernelChildrenDieWithIt: processes a kernel started are killed once it exits, even when
// it dies without the chance to end them (ipykernel kills its children only on a clean
// shutdown).
func TestKernelChildrenDieWithIt(t *testing.T) {
	l := launch(t, LaunchOptions{})
	res, err := l.Execute(ctxT(t, 30*time.Second), "import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\nprint(child.pid)")
	if err != nil || res.Status != "ok" {
		t.Fatalf("start a child: %+v, %v", res, err)
	}
	pid := strings.TrimSpace(res.Stdout)
	// Only the kernel process, as the out-of-memory killer would.
	if err := l.Kill(); err != nil {
		t.Fatal(err)
	}
	// The sweep's SIGKILL is sent before Exited closes; its delivery takes a moment.
	deadline := time.Now().Add(5 * time.Second)
	for st := procState(pid); st != "" && st != "Z"; st = procState(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the kernel's child %s is still running (state %s) 5 s after the kernel died", pid, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procState is the state letter of a process from /proc ("" once it is gone).
func procState(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return ""
	}
	return string(b[i+2])
}
