package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/kernelclient"
)

// TestStart: the kernel runs code in the directory asked for, and is gone after the test.
func TestStart(t *testing.T) {
	var l *kernelclient.Launched
	dir := t.TempDir()
	t.Run("start", func(t *testing.T) {
		l = Start(t, kernelclient.LaunchOptions{Cwd: dir})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		r, err := l.Execute(ctx, "import os\nprint(os.getcwd())")
		if err != nil {
			t.Fatalf("execute: %v", err)
		}
		if got := r.Stdout; got != dir+"\n" {
			t.Errorf("kernel cwd printed %q, want %q", got, dir+"\n")
		}
	})
	if l == nil {
		return // skipped: no kernel
	}
	select {
	case <-l.Exited():
	default:
		t.Error("the kernel still runs after its test ended")
	}
}

// TestLaunchStop: Launch starts the tests' interpreter's kernel without a test to end it,
// and Stop leaves no process behind.
func TestLaunchStop(t *testing.T) {
	python.Require(t, "ipykernel")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l, err := Launch(ctx, kernelclient.LaunchOptions{Cwd: t.TempDir()})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	if r, err := l.Execute(ctx, "import sys\nprint(sys.executable)"); err != nil || r.Status != "ok" {
		t.Errorf("execute: %v %+v", err, r)
	} else if got := strings.TrimSpace(r.Stdout); got != python.Path() {
		t.Errorf("the kernel runs %s, want the tests' interpreter %s", got, python.Path())
	}
	Stop(l)
	select {
	case <-l.Exited():
	default:
		t.Error("the kernel still runs after Stop")
	}
}
