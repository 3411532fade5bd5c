//go:build unix && !linux

package kernelclient

import "syscall"

// setDeathSignal does nothing where PR_SET_PDEATHSIG does not exist: the reaper alone
// kills the kernel when premortem dies.
func setDeathSignal(attr *syscall.SysProcAttr) {}
