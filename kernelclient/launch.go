package kernelclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LaunchOptions say which kernel to start and how.
type LaunchOptions struct {
	// KernelName is the kernelspec name (default "python3").
	KernelName string
	// Cwd is the kernel's working directory (default: ours).
	Cwd string
	// Env is added to our environment and the spec's env ("KEY=value").
	Env []string
	// Python overrides the interpreter of a Python kernelspec.
	Python string
	// RuntimeDir receives the connection file (default: a new temporary directory, removed
	// at Shutdown).
	RuntimeDir string
	// Options tune the client.
	Options Options
}

// Launched is a kernel premortem started: its process, connection file and a connected
// Client (embedded, so a *Launched is a Kernel).
type Launched struct {
	*Client
	Spec           KernelSpec
	ConnectionFile string
	Cmd            *exec.Cmd

	tmpDir  string
	exited  chan struct{}
	waitErr error
	stderr  *boundedBuffer
	// stderrR is the read end of the kernel's stderr pipe; stderrDone is closed when its
	// copy into stderr ended.
	stderrR    *os.File
	stderrDone chan struct{}
	shutOnce   sync.Once
	shutErr    error
}

// Launch starts a kernel from a kernelspec, writes its connection file (ports from the OS, a
// random key) and connects to it. ctx bounds the startup.
func Launch(ctx context.Context, opts LaunchOptions) (*Launched, error) {
	if opts.Options.HeartbeatMisses <= 0 {
		// A kernel we launched is watched through its process too: its exit marks it dead at
		// once. The heartbeat then only has to tell a hung kernel, and on a loaded machine
		// (a CI runner, a notebook training on every core) three missed beats are a
		// scheduling delay more often than a hang. While /proc says the process is
		// scheduled, the window is RunningMissFactor times longer still (Options.Running).
		opts.Options.HeartbeatMisses = 10
	}
	spec, err := findKernelSpec(opts.KernelName)
	if err != nil {
		return nil, err
	}
	argv := append([]string(nil), spec.Argv...)
	if spec.Language == "python" || strings.Contains(strings.Join(argv, " "), "ipykernel") {
		py, err := resolvePython(ctx, argv[0], opts.Python)
		if err != nil {
			return nil, fmt.Errorf("launch kernel %s: %w", spec.Name, err)
		}
		argv[0] = py
	}
	// The ports come from the OS, but another process may take one between our asking and
	// the kernel binding it (many kernels starting at once make this likely): a kernel that
	// reports "Address already in use" is started again on fresh ports.
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
	}
	var l *Launched
	for attempt := 1; ; attempt++ {
		var portClash bool
		l, portClash, err = launchOnce(ctx, spec, argv, opts)
		if err == nil {
			break
		}
		if !portClash || attempt == 3 || ctx.Err() != nil {
			return nil, err
		}
	}
	if spec.InterruptMode != "message" {
		l.Client.SetInterrupter(func(context.Context) error { return l.signal(syscall.SIGINT) })
	}
	go func() {
		<-l.exited
		l.Client.MarkDead()
	}()
	return l, nil
}

// launchOnce starts the kernel process on fresh ports and connects to it. portClash reports
// that the kernel could not bind a port it was given, so a retry on other ports may work.
func launchOnce(ctx context.Context, spec KernelSpec, specArgv []string, opts LaunchOptions) (l *Launched, portClash bool, err error) {
	argv := append([]string(nil), specArgv...)
	ports, err := pickPorts(5)
	if err != nil {
		return nil, false, fmt.Errorf("launch kernel: %w", err)
	}
	ci := ConnectionInfo{
		Transport: "tcp", IP: "127.0.0.1",
		ShellPort: ports[0], IOPubPort: ports[1], StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4],
		Key: newID() + newID(), SignatureScheme: "hmac-sha256", KernelName: spec.Name,
	}
	l = &Launched{Spec: spec, exited: make(chan struct{}), stderr: &boundedBuffer{max: 16 << 10}}
	dir := opts.RuntimeDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "premortem-kernel-"); err != nil {
			return nil, false, fmt.Errorf("launch kernel: %w", err)
		}
		l.tmpDir = dir
	}
	l.ConnectionFile = filepath.Join(dir, "kernel-premortem-"+newID()[:12]+".json")
	ci.Path = l.ConnectionFile
	if err := WriteConnectionFile(l.ConnectionFile, ci); err != nil {
		l.cleanup()
		return nil, false, err
	}
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "{connection_file}", l.ConnectionFile)
		argv[i] = strings.ReplaceAll(argv[i], "{resource_dir}", spec.Dir)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = opts.Cwd
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	cmd.Stdout = nil
	setProcessGroup(cmd)
	if err := l.start(cmd); err != nil {
		l.cleanup()
		return nil, false, fmt.Errorf("launch kernel %s: %w", spec.Name, err)
	}

	// The kernel binds its ports a moment after starting: dial until it answers, it exits,
	// or ctx ends.
	var lastErr error
	for backoff := 50 * time.Millisecond; ; backoff = min(backoff*2, 500*time.Millisecond) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		o := opts.Options
		o.Running = l.running
		c, err := ConnectWithOptions(actx, ci, o)
		cancel()
		if err == nil {
			l.Client = c
			break
		}
		lastErr = err
		if clash := strings.Contains(l.stderr.String(), "Address already in use"); clash {
			l.kill()
			l.cleanup()
			return nil, true, fmt.Errorf("launch kernel %s: a port was taken before the kernel could bind it: %s", spec.Name, l.stderr.String())
		}
		select {
		case <-l.exited:
			l.settleStderr(time.Second)
			l.cleanup()
			clash := strings.Contains(l.stderr.String(), "Address already in use")
			return nil, clash, fmt.Errorf("launch kernel %s: the kernel exited at startup (%v): %s", spec.Name, l.waitErr, l.stderr.String())
		case <-ctx.Done():
			l.kill()
			l.cleanup()
			return nil, false, fmt.Errorf("launch kernel %s: no answer before the deadline (a slow machine may need a longer startup timeout; the kernel's stderr below may say more): %v; stderr: %s", spec.Name, lastErr, l.stderr.String())
		case <-time.After(backoff):
		}
	}
	return l, false, nil
}

// start starts the kernel process and the goroutine that waits for it. The fork happens on
// that goroutine, locked to its OS thread until the kernel has exited: Linux delivers the
// kernel's death signal when the thread that forked it exits, and Go ends threads when it
// likes unless a goroutine holds them.
//
// The kernel's stderr is a pipe premortem reads itself, not an io.Writer the exec package
// copies: exec.Cmd.Wait waits for every holder of such a pipe to close it, and the kernel's
// children hold it (a subprocess a cell started, a shadow child forked before it closed its
// descriptors). A killed kernel must count as exited when its process is reaped, whatever
// it left behind.
func (l *Launched) start(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("kernel stderr: %w", err)
	}
	cmd.Stderr = w
	l.stderrR, l.stderrDone = r, make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// Never unlocked: when this goroutine returns the thread ends with it, and by then
		// the kernel is gone.
		runtime.LockOSThread()
		err := cmd.Start()
		w.Close()
		if err != nil {
			r.Close()
			close(l.stderrDone)
			started <- err
			return
		}
		go func() {
			_, _ = io.Copy(l.stderr, r)
			close(l.stderrDone)
		}()
		pid := cmd.Process.Pid
		rp := startReaper(pid)
		l.Cmd = cmd
		started <- nil
		l.waitErr = cmd.Wait()
		// Whatever the kernel started and left behind goes with it, then the reaper is
		// told there is nothing left to do.
		sweepProcessGroup(pid)
		rp.release()
		close(l.exited)
	}()
	return <-started
}

// running reports whether the kernel's process exists and can be scheduled. A process
// stopped by a signal or a debugger (state T or t in /proc) answers nothing until it is
// continued, and a zombie is on its way out: neither counts. Where /proc cannot be read
// the process counts as running until it is reaped.
func (l *Launched) running() bool {
	select {
	case <-l.exited:
		return false
	default:
	}
	if l.Cmd == nil || l.Cmd.Process == nil {
		return false
	}
	fields, ok := procStatFields("/proc/" + strconv.Itoa(l.Cmd.Process.Pid) + "/stat")
	if !ok {
		return true
	}
	switch fields[0][0] {
	case 'T', 't', 'Z', 'X', 'x':
		return false
	}
	return true
}

// ExitState says how the kernel process ended ("signal: killed", "exit status 1"); "" while
// it runs.
func (l *Launched) ExitState() string {
	select {
	case <-l.exited:
	default:
		return ""
	}
	if l.Cmd == nil || l.Cmd.ProcessState == nil {
		if l.waitErr != nil {
			return l.waitErr.Error()
		}
		return "exited"
	}
	return l.Cmd.ProcessState.String()
}

// pickPorts chooses a kernel's ports; tests replace it to provoke a port clash.
var pickPorts = freePorts

// freePorts asks the OS for n free TCP ports on the loopback interface.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Interrupt interrupts the running cell: interrupt_request on control when the kernelspec
// says interrupt_mode "message", SIGINT otherwise.
func (l *Launched) Interrupt(ctx context.Context) error {
	return l.Client.Interrupt(ctx)
}

// Exited is closed when the kernel process has exited.
func (l *Launched) Exited() <-chan struct{} { return l.exited }

// Shutdown asks the kernel to exit (shutdown_request on control), kills it after a grace
// period (bounded by ctx, at most 5 s), reaps the process and removes the connection file.
func (l *Launched) Shutdown(ctx context.Context) error {
	l.shutOnce.Do(func() { l.shutErr = l.shutdown(ctx) })
	return l.shutErr
}

func (l *Launched) shutdown(ctx context.Context) error {
	grace, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case <-l.exited:
	default:
		if l.Client != nil {
			_, _ = l.Client.controlRequest(grace, "shutdown_request", map[string]any{"restart": false})
		}
		select {
		case <-l.exited:
		case <-grace.Done():
			l.kill()
		}
	}
	if l.Client != nil {
		l.Client.Close()
	}
	<-l.exited
	l.cleanup()
	return nil
}

func (l *Launched) kill() {
	if l.Cmd == nil || l.Cmd.Process == nil {
		return
	}
	killProcessGroup(l.Cmd)
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-l.exited:
	case <-t.C:
	}
}

// Kill kills the kernel process at once (tests use it to simulate a crash).
func (l *Launched) Kill() error {
	if l.Cmd == nil || l.Cmd.Process == nil {
		return errors.New("no process")
	}
	err := l.Cmd.Process.Kill()
	<-l.exited
	return err
}

func (l *Launched) signal(sig os.Signal) error {
	if l.Cmd == nil || l.Cmd.Process == nil {
		return errors.New("interrupt: no kernel process")
	}
	if err := l.Cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	return nil
}

// settleStderr waits up to d for the kernel's stderr to be read to its end (what a kernel
// that failed at startup printed last); a descendant may hold the pipe open longer.
func (l *Launched) settleStderr(d time.Duration) {
	if l.stderrDone == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.stderrDone:
	case <-t.C:
	}
}

func (l *Launched) cleanup() {
	if l.stderrR != nil {
		// What the kernel printed before it exited is read; a process that escaped the
		// group sweep (its own session) must not keep a descriptor and a goroutine here.
		l.settleStderr(500 * time.Millisecond)
		l.stderrR.Close()
	}
	if l.ConnectionFile != "" {
		os.Remove(l.ConnectionFile)
	}
	if l.tmpDir != "" {
		os.RemoveAll(l.tmpDir)
	}
}

// Stderr returns the kernel's captured stderr (bounded).
func (l *Launched) Stderr() string { return l.stderr.String() }

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}
