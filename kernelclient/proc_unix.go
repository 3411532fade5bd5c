//go:build unix

package kernelclient

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the kernel in its own process group: a Ctrl-C meant for premortem
// does not reach it, and killing the group also kills children (shadow runs).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills the kernel and its children.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
