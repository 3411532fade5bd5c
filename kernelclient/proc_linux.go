package kernelclient

import "syscall"

// setDeathSignal has Linux kill the kernel when premortem dies, SIGKILL included
// (PR_SET_PDEATHSIG). The signal fires when the *thread* that forked the kernel exits, so
// launchOnce forks from a goroutine locked to its thread that lives until the kernel exits.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
