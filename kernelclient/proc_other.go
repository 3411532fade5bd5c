//go:build !unix

package kernelclient

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the kernel process.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// sweepProcessGroup is a no-op where process groups do not exist.
func sweepProcessGroup(pgid int) {}

// reaper does nothing where process groups do not exist.
type reaper struct{}

// startReaper returns nil: no reaper here.
func startReaper(pgid int) *reaper { return nil }

// release is a no-op.
func (r *reaper) release() {}
