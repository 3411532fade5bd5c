package kernelclient

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file answers "is the kernel running a cell?" before premortem sends it anything, so
// that attaching never sends a request to a busy kernel.
//
// Why not the protocol itself: the Jupyter protocol has no passive way to ask. A kernel
// publishes status busy/idle on IOPub only when a request starts or ends, so a freshly
// subscribed IOPub socket says nothing about a cell that is already running (time.sleep,
// a training loop that prints nothing). The heartbeat is answered by a separate thread of
// ipykernel even while a cell runs. kernel_info_request on control is answered at once by
// ipykernel 6's control thread, but it is still a request to a busy kernel (and it shows up
// on IOPub as our busy/idle pair), and on shell it waits behind the cell. So the state is
// read from outside the protocol:
//
//   - a kernel managed by a Jupyter Server: the server's REST model (GET api/kernels/ID,
//     execution_state), which the server keeps from every IOPub status since the kernel
//     started;
//   - a local ZeroMQ kernel (what VS Code and jupyter_client start): the kernel process,
//     found by the TCP port its shell socket listens on. ipykernel runs the user's code on
//     its main thread; an idle ipykernel's main thread sits in epoll_wait (its event loop),
//     and a running cell's main thread is on the CPU or waiting elsewhere (sleep, I/O,
//     futex). /proc/PID/task/PID/wchan and the thread's state tell them apart without
//     touching the kernel. A cell that itself waits in epoll (a top-level `await`,
//     asyncio.run) reads as idle: for that rare case the shell probe after the handshake
//     still finds the running cell before any inspection is sent;
//   - IOPub: a busy status seen while we watch (a cell that prints, or one that starts
//     now) means busy until its idle.
//
// When none of these can tell (a remote ZeroMQ kernel, no /proc), the state is unknown and
// attaching behaves as before: kernel_info on control, then a shell probe.

// observer reports the kernel's execution state without sending the kernel anything:
// StateIdle, StateBusy, StateStarting (still initializing: idle soon, and no user's cell
// can be running) or StateUnknown.
type observer func(ctx context.Context) State

// observeSamples and observeEvery: how many times, and how often, the kernel's main thread
// is looked at for one verdict (a single look can catch an idle kernel's loop awake).
const (
	observeSamples = 5
	observeEvery   = 20 * time.Millisecond
)

// answered holds the PIDs of kernel processes some client of this process has completed
// a handshake with.
var answered sync.Map

// procWatch watches a local kernel's process: it finds the process listening on the
// shell port (once; again if it goes away) and samples its main thread.
type procWatch struct {
	ci  ConnectionInfo
	mu  sync.Mutex
	pid int
}

func newProcWatch(ci ConnectionInfo) *procWatch { return &procWatch{ci: ci} }

// observe is the procWatch's observer. A kernel that is our own child and has never
// completed a handshake with anyone here reads as starting, not busy: it is one Launch
// just started (nobody can have run a cell in it yet), still importing IPython, and
// Connect waits for it so that Launch returns a kernel whose Info is known.
func (w *procWatch) observe(ctx context.Context) State {
	if w.ci.Transport == "ipc" || !isLocalIP(w.ci.IP) {
		return StateUnknown
	}
	w.mu.Lock()
	pid := w.pid
	w.mu.Unlock()
	if pid == 0 || !alive(pid) {
		pid = listenerPID(w.ci.ShellPort)
		if pid == 0 {
			return StateUnknown
		}
		w.mu.Lock()
		w.pid = pid
		w.mu.Unlock()
	}
	st := sampleMainThread(ctx, pid)
	if _, ok := answered.Load(pid); st == StateBusy && !ok && parentPID(pid) == os.Getpid() {
		return StateStarting
	}
	return st
}

// ready records that the kernel answered a handshake.
func (w *procWatch) ready() {
	w.mu.Lock()
	pid := w.pid
	w.mu.Unlock()
	if pid == 0 {
		pid = listenerPID(w.ci.ShellPort)
	}
	if pid != 0 {
		answered.Store(pid, true)
	}
}

// parentPID is the parent of pid (0 when unknown).
func parentPID(pid int) int {
	fields, ok := procStatFields(fmt.Sprintf("/proc/%d/stat", pid))
	if !ok || len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

func isLocalIP(ip string) bool {
	switch ip {
	case "", "127.0.0.1", "localhost", "0.0.0.0", "::1", "::", "*":
		return true
	}
	return strings.HasPrefix(ip, "127.")
}

func alive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", pid, pid))
	return err == nil
}

// sampleMainThread looks at the main thread observeSamples times: idle when nearly every
// look finds it in epoll_wait, busy when nearly every look finds it elsewhere, else unknown.
func sampleMainThread(ctx context.Context, pid int) State {
	idle, busy := 0, 0
	for i := 0; i < observeSamples; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return StateUnknown
			case <-time.After(observeEvery):
			}
		}
		switch threadState(pid) {
		case StateIdle:
			idle++
		case StateBusy:
			busy++
		default:
			return StateUnknown
		}
	}
	switch {
	case idle >= observeSamples-1:
		return StateIdle
	case busy >= observeSamples-1:
		return StateBusy
	}
	return StateUnknown
}

// threadState reads one look at a thread: running (R) or waiting anywhere but epoll is
// busy, waiting in epoll is idle; unknown when /proc hides it (no wchan on this system).
func threadState(pid int) State {
	dir := fmt.Sprintf("/proc/%d/task/%d/", pid, pid)
	fields, ok := procStatFields(dir + "stat")
	if !ok {
		return StateUnknown
	}
	switch fields[0][0] {
	case 'R':
		return StateBusy
	case 'Z', 'X':
		return StateUnknown
	}
	wchan, err := os.ReadFile(dir + "wchan")
	if err != nil {
		return StateUnknown
	}
	w := strings.TrimSpace(string(wchan))
	switch {
	case w == "" || w == "0":
		return StateUnknown
	case strings.Contains(w, "epoll"):
		return StateIdle
	}
	return StateBusy
}

// listenerPID finds the process with a TCP socket listening on port (0 when none is
// visible to us).
func listenerPID(port int) int {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, ino := range listeningInodes(f, port) {
			inodes["socket:["+ino+"]"] = true
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && inodes[link] {
				return pid
			}
		}
	}
	return 0
}

// listeningInodes returns the inodes of the sockets listening on port in one /proc/net
// table.
func listeningInodes(table string, port int) []string {
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], want) {
			continue
		}
		out = append(out, fields[9])
	}
	return out
}

// serverObserver reads a server-managed kernel's execution_state from the server's REST
// API.
func serverObserver(api *serverAPI, kernelID string) observer {
	return func(ctx context.Context) State {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var k ServerKernel
		if err := api.do(ctx, http.MethodGet, "api/kernels/"+url.PathEscape(kernelID), nil, &k); err != nil {
			return StateUnknown
		}
		switch k.ExecutionState {
		case "idle":
			return StateIdle
		case "busy":
			return StateBusy
		case "starting", "restarting":
			return StateStarting
		}
		return StateUnknown
	}
}
