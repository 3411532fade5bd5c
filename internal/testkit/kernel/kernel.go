// Package kernel starts a real ipykernel for a test with the tests' interpreter
// (internal/testkit/python) and shuts it down when the test ends, so the packages that
// test against a kernel (lsp, judge, analysis/rules, cmd/premortem) share one way to get one.
//
// kernelclient's own tests cannot import it (it imports kernelclient); they use python
// directly.
package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
	"github.com/premortem/premortem/kernelclient"
)

// Start launches a kernel with opts (Python defaults to python.Path(), Cwd to a fresh
// temporary directory) and shuts it down when t ends. It skips t in -short mode and when
// the interpreter cannot import ipykernel or one of modules.
func Start(t testing.TB, opts kernelclient.LaunchOptions, modules ...string) *kernelclient.Launched {
	t.Helper()
	if testing.Short() {
		t.Skip("short mode: starts a kernel")
	}
	python.Require(t, append([]string{"ipykernel"}, modules...)...)
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("launch a kernel: %v", err)
	}
	t.Cleanup(func() { Stop(l) })
	return l
}

// Launch starts a kernel with opts, Python defaulting to python.Path() as in Start, and
// leaves stopping it (Stop) to the caller. It is for tests that start one kernel per case
// of a long loop (the fix rate, JunoBench replays) or at the end of a test that must not
// skip in -short mode: they report a failed launch as that case's outcome, and a kernel
// kept until the whole test ends would hold one process per case.
func Launch(ctx context.Context, opts kernelclient.LaunchOptions) (*kernelclient.Launched, error) {
	if opts.Python == "" && opts.KernelName == "" {
		opts.Python = python.Path()
	}
	return kernelclient.Launch(ctx, opts)
}

// Stop shuts a kernel from Launch down: a shutdown request, a kill after kernelclient's
// grace period (at most 5 s), the process reaped, so no case leaves a kernel behind.
func Stop(l *kernelclient.Launched) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = l.Shutdown(ctx)
}
