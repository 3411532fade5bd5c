//go:build unix

package kernelclient

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setProcessGroup starts the kernel in its own process group: a Ctrl-C meant for premortem
// does not reach it, and killing the group also kills children (shadow runs, processes the
// replayed cells started, the real kernel behind a wrapper script). Where the system can,
// the kernel is also killed when premortem dies (setDeathSignal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup kills the kernel and its children.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// sweepProcessGroup kills what is left of a kernel's process group after the kernel itself
// exited and was reaped: children it started that outlived it.
func sweepProcessGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// reaperScript waits for one line on stdin. "done" means premortem cleaned up; anything
// else, end of file included (premortem died, even of SIGKILL, and the kernel closed the
// pipe's last writer), kills the kernel's process group.
const reaperScript = `read -r m; [ "$m" = done ] || kill -s KILL -- "-$1" 2>/dev/null`

// reaper is a small shell process that outlives premortem only to kill a kernel's process
// group when premortem dies without cleaning up. A death signal (PR_SET_PDEATHSIG) reaches
// only the process premortem forked; the reaper also reaches what that process started
// (a kernelspec's wrapper script forking the real kernel, subprocesses of a replayed cell).
type reaper struct {
	w   *os.File
	cmd *exec.Cmd
}

// startReaper starts the reaper of process group pgid; nil when it cannot (no /bin/sh):
// the death signal and Shutdown still stand.
func startReaper(pgid int) *reaper {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "premortem-reaper", strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.Dir = "/"
	// Its own group: a Ctrl-C or a `timeout` sent to premortem's group must not kill the
	// reaper before it did its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil
	}
	return &reaper{w: w, cmd: cmd}
}

// release tells the reaper the group is gone and waits for it to exit.
func (r *reaper) release() {
	if r == nil {
		return
	}
	_, _ = r.w.WriteString("done\n")
	r.w.Close()
	_ = r.cmd.Wait()
}
