package kernelclient

import (
	"context"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// launch starts a real ipykernel for a test and shuts it down at the end. It is
// internal/testkit/kernel's Start for this package's own tests, which cannot import that
// package (it imports kernelclient), and unlike Start it runs in -short mode.
func launch(t testing.TB, opts LaunchOptions) *Launched {
	t.Helper()
	python.Require(t, "ipykernel")
	if opts.Python == "" {
		opts.Python = python.Path()
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
