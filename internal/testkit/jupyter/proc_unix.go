//go:build unix

package jupyter

import (
	"os/exec"
	"syscall"
)

// terminate asks the server to stop (it shuts its kernels down first).
var terminate = syscall.SIGTERM

// setProcessGroup puts the server in its own process group, so its kernels can be killed
// with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills the server and every kernel it started.
func killProcessGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
