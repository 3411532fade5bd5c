//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// slowNotebook replays one cell that starts a child process and then sleeps: a check is
// mid-replay for half a minute, with a kernel and a grandchild to clean up. The child's
// command line carries $TMPDIR, the test's own directory, so a leftover is recognisable.
// The target cell sleeps too, so its shadow run is slow as well.
const slowNotebook = `{"cells": [
 {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["import os, subprocess, sys, time\n", "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', os.environ['TMPDIR']])\n", "time.sleep(%d)\n", "x = 1"]},
 {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ["import time\n", "time.sleep(%d)\n", "print(x + 1)"]}
], "metadata": {"kernelspec": {"name": "%s", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`

// buildPremortem builds the binary the signal tests run: signals, death signals and closed
// pipes are the process's, so they are tested on the real thing.
func buildPremortem(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "premortem")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// slowCheck is a running `premortem check` of slowNotebook.
type slowCheck struct {
	cmd    *exec.Cmd
	stdout *bytes.Buffer
	stderr *lockedBuffer
	// marker is the TMPDIR the check runs with: in the kernel's connection file path and
	// in its child's command line.
	marker string
	// kernel is the kernel's pid; family every process of the check but premortem itself
	// (the kernel, its child, the reaper).
	kernel int
	family []int
	// done is closed when cmd.Wait returned, with waitErr: Wait may be called only once,
	// and the cleanup of a failed test must not block behind the wait that failed it.
	done    chan struct{}
	waitErr error
}

type slowOptions struct {
	replaySleep, targetSleep int
	kernelspec               string
	env                      []string
	args                     []string
	stdout                   *os.File // nil: a buffer
	waitFor                  string   // stderr line that says the moment has come
}

// startSlowCheck starts the check and waits until stderr says waitFor and the kernel and
// its child exist.
func startSlowCheck(t *testing.T, bin string, o slowOptions) *slowCheck {
	t.Helper()
	if o.kernelspec == "" {
		o.kernelspec = "python3"
	}
	if o.waitFor == "" {
		o.waitFor = "premortem: replaying cell 1"
	}
	dir := t.TempDir()
	nb := filepath.Join(dir, "slow.ipynb")
	if err := os.WriteFile(nb, []byte(fmt.Sprintf(slowNotebook, o.replaySleep, o.targetSleep, o.kernelspec)), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	c := &slowCheck{stdout: &bytes.Buffer{}, stderr: &lockedBuffer{}, marker: tmp}
	c.cmd = exec.Command(bin, append([]string{"check", nb}, o.args...)...)
	// Python from /usr/bin first: the kernel needs ipykernel.
	c.cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PATH=/usr/bin:"+os.Getenv("PATH"))
	c.cmd.Env = append(c.cmd.Env, o.env...)
	if o.stdout != nil {
		c.cmd.Stdout = o.stdout
	} else {
		c.cmd.Stdout = c.stdout
	}
	c.cmd.Stderr = c.stderr
	// A process that outlives premortem holding its stdout or stderr (the failure some of
	// these tests look for) must not hold the test too: Wait gives up on the pipes.
	c.cmd.WaitDelay = 5 * time.Second
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.done = make(chan struct{})
	go func() { c.waitErr = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		// A failed test must not leave its own processes either.
		for _, pid := range append(append(c.family, marked(tmp)...), c.cmd.Process.Pid) {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Errorf("premortem (pid %d) still not reaped 30 s after SIGKILL", c.cmd.Process.Pid)
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		if strings.Contains(c.stderr.String(), o.waitFor) {
			c.family = marked(tmp)
			// The cell's child must have exec'd: between Popen's fork and exec it is a
			// copy of the kernel, with the kernel's command line.
			if len(c.family) >= 2 && slices.ContainsFunc(c.family, func(pid int) bool { return strings.Contains(cmdline(pid), "time.sleep(300)") }) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q with a kernel and its child within 90 s; processes %v; stderr:\n%s", o.waitFor, marked(tmp), c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range c.family {
		// The python process itself, not a wrapper shell that names it in its script.
		if cl := cmdline(pid); strings.Contains(cl, "-m ipykernel_launcher -f "+tmp) && !strings.HasPrefix(cl, "/bin/sh") {
			c.kernel = pid
		}
	}
	if c.kernel == 0 {
		t.Fatalf("no kernel among %v", c.family)
	}
	c.family = append(c.family, children(c.cmd.Process.Pid)...)
	return c
}

// wait waits for premortem to exit and returns how it ended.
func (c *slowCheck) wait(t *testing.T) *os.ProcessState {
	t.Helper()
	select {
	case <-c.done:
		var ee *exec.ExitError
		if err := c.waitErr; err != nil && !errors.As(err, &ee) {
			t.Fatalf("wait: %v", err)
		}
		return c.cmd.ProcessState
	case <-time.After(30 * time.Second):
		t.Fatalf("premortem did not exit within 30 s; processes of the check %v; stderr:\n%s", describe(marked(c.marker)), c.stderr.String())
		return nil
	}
}

// assertNothingLeft fails unless every process of the check is gone within a few seconds
// and nothing on the machine mentions the check's TMPDIR.
func (c *slowCheck) assertNothingLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for _, pid := range c.family {
			if alive(pid) {
				left = append(left, fmt.Sprintf("%d %s", pid, cmdline(pid)))
			}
		}
		for _, pid := range marked(c.marker) {
			left = append(left, fmt.Sprintf("%d %s", pid, cmdline(pid)))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 5 s after premortem exited:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCheckSignals: however `premortem check` is stopped mid-replay (SIGTERM as `timeout`
// and CI runners send, SIGHUP, SIGINT, SIGKILL, a reader that goes away), its kernel, the
// kernel's children and its reaper are gone a moment later, stdout stays empty and the exit
// status is the signal's.
func TestCheckSignals(t *testing.T) {
	checkNeedsKernel(t)
	bin := buildPremortem(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			c := startSlowCheck(t, bin, slowOptions{replaySleep: 30, targetSleep: 0})
			if err := c.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			st := c.wait(t)
			ws := st.Sys().(syscall.WaitStatus)
			if sig == syscall.SIGKILL {
				if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Errorf("ended %v, want killed", st)
				}
			} else {
				if st.ExitCode() != 128+int(sig) {
					t.Errorf("exit %v, want %d; stderr:\n%s", st, 128+int(sig), c.stderr.String())
				}
				if !strings.Contains(c.stderr.String(), "no verdict") {
					t.Errorf("stderr does not say the check was stopped:\n%s", c.stderr.String())
				}
			}
			if c.stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", c.stdout.String())
			}
			c.assertNothingLeft(t)
		})
	}
	t.Run("closed stdout", func(t *testing.T) {
		// `premortem check nb.ipynb | head -1` where head is gone before the report.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := startSlowCheck(t, bin, slowOptions{replaySleep: 30, stdout: w})
		w.Close()
		r.Close()
		st := c.wait(t)
		if st.ExitCode() != 128+int(syscall.SIGPIPE) {
			t.Errorf("exit %v, want %d; stderr:\n%s", st, 128+int(syscall.SIGPIPE), c.stderr.String())
		}
		if !strings.Contains(c.stderr.String(), "output closed") {
			t.Errorf("stderr:\n%s", c.stderr.String())
		}
		c.assertNothingLeft(t)
	})
	t.Run("SIGKILL with a wrapper kernelspec", func(t *testing.T) {
		// A kernelspec whose command is a shell that forks the real kernel: the death
		// signal reaches only the shell, the reaper the rest of the group.
		spec := filepath.Join(t.TempDir(), "jupyter")
		kdir := filepath.Join(spec, "kernels", "wrapped")
		if err := os.MkdirAll(kdir, 0o755); err != nil {
			t.Fatal(err)
		}
		kj := `{"argv": ["/bin/sh", "-c", "` + python.Path() + ` -m ipykernel_launcher -f \"$0\"; exit $?", "{connection_file}"], "display_name": "wrapped", "language": "python"}`
		if err := os.WriteFile(filepath.Join(kdir, "kernel.json"), []byte(kj), 0o644); err != nil {
			t.Fatal(err)
		}
		c := startSlowCheck(t, bin, slowOptions{replaySleep: 30, kernelspec: "wrapped", env: []string{"JUPYTER_PATH=" + spec}, args: []string{"--kernel", "wrapped"}})
		if !strings.Contains(cmdline(parent(c.kernel)), "/bin/sh") {
			t.Fatalf("the kernel's parent is %q, want the wrapper shell", cmdline(parent(c.kernel)))
		}
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		c.wait(t)
		c.assertNothingLeft(t)
	})
}

// TestCheckKernelKilled: a kernel killed during the replay or while a target is judged
// leaves no verdict to give: exit 2, nothing on stdout, and stderr says what happened and
// what to do. A shadow run that times out with the kernel alive is a verdict (unknown),
// not an environment error.
func TestCheckKernelKilled(t *testing.T) {
	checkNeedsKernel(t)
	bin := buildPremortem(t)
	tests := []struct {
		name        string
		opts        slowOptions
		kill        bool
		exit        int
		stderr      []string
		stdoutEmpty bool
	}{
		{"during the replay", slowOptions{replaySleep: 30}, true, 2,
			[]string{"the kernel died (signal: killed) while premortem replayed cell 1 (run 1)", "run premortem check again", "--static"}, true},
		{"during the shadow run", slowOptions{replaySleep: 0, targetSleep: 30, waitFor: "premortem: judging cell 2"}, true, 2,
			[]string{"the kernel died (signal: killed) while premortem judged cell 2 (index 1)", "run premortem check again"}, true},
		{"shadow timeout, kernel alive", slowOptions{replaySleep: 0, targetSleep: 30, waitFor: "premortem: judging cell 2", args: []string{"--shadow-timeout", "1s", "--shadow-full-timeout", "1s", "--format", "json"}}, false, 0,
			nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startSlowCheck(t, bin, tt.opts)
			if tt.kill {
				if err := syscall.Kill(c.kernel, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			st := c.wait(t)
			if st.ExitCode() != tt.exit {
				t.Errorf("exit %v, want %d; stdout %s\nstderr:\n%s", st, tt.exit, c.stdout.String(), c.stderr.String())
			}
			for _, w := range tt.stderr {
				if !strings.Contains(c.stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, c.stderr.String())
				}
			}
			if tt.stdoutEmpty && c.stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", c.stdout.String())
			}
			if !tt.stdoutEmpty {
				rep := decodeReport(t, c.stdout.String())
				if len(rep.Cells) != 1 || rep.Cells[0].Verdict != "unknown" {
					t.Errorf("cells %+v, want one unknown", rep.Cells)
				}
			}
			c.assertNothingLeft(t)
		})
	}
}

// describe names processes by pid and command line.
func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		out = append(out, fmt.Sprintf("%d %s", pid, cmdline(pid)))
	}
	return out
}

// marked lists the live processes whose command line contains s.
func marked(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if strings.Contains(cmdline(pid), s) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err == nil && parent(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

// cmdline is a process's command line, arguments joined by spaces ("" once it is gone or a
// zombie).
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// stat returns a process's state letter and parent pid from /proc/PID/stat.
func stat(pid int) (state byte, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid
}

func parent(pid int) int {
	_, p := stat(pid)
	return p
}

// alive reports whether pid runs: a zombie has exited and only waits for its parent.
func alive(pid int) bool {
	st, _ := stat(pid)
	return st != 0 && st != 'Z' && st != 'X'
}
