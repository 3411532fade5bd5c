package kernel

import (
	"context"
	"testing"
	"time"

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
