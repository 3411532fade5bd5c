//go:build !unix

package jupyter

import (
	"os"
	"os/exec"
)

// terminate stops the server where there is no SIGTERM.
var terminate = os.Kill

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the server.
func killProcessGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
