package kernelclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notebookServer is a classic Jupyter Notebook server (Debian's 6.4.12) run by a test.
type notebookServer struct {
	URL, Token, RuntimeDir, RootDir string
	api                             *serverAPI
}

// startNotebookServer starts `python3 -m notebook` on loopback with a random port and
// token, in temporary HOME/Jupyter dirs, and stops it (and its kernels) at the end.
func startNotebookServer(t *testing.T) *notebookServer {
	t.Helper()
	requirePython(t, "notebook")
	requirePython(t, "ipykernel")
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	s := &notebookServer{Token: newID(), RuntimeDir: filepath.Join(home, "runtime"), RootDir: filepath.Join(home, "notebooks")}
	if err := os.MkdirAll(s.RootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/", ports[0])
	cmd := exec.Command(pythonPath, "-m", "notebook", "--no-browser", "--allow-root",
		fmt.Sprintf("--port=%d", ports[0]), "--NotebookApp.token="+s.Token, "--ip=127.0.0.1",
		"--NotebookApp.open_browser=False", "--NotebookApp.port_retries=0")
	cmd.Dir = s.RootDir
	cmd.Env = append(os.Environ(), "HOME="+home, "JUPYTER_RUNTIME_DIR="+s.RuntimeDir,
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"), "JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"JUPYTER_PATH=/usr/share/jupyter", "PYDEVD_DISABLE_FILE_VALIDATION=1")
	setProcessGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	ready := make(chan struct{})
	var logTail strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			if logTail.Len() < 8000 {
				logTail.WriteString(line + "\n")
			}
			if !signalled && strings.Contains(line, "is running at") {
				signalled = true
				close(ready)
			}
		}
	}()
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// SIGTERM: the server shuts its kernels down; then make sure of it.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			killProcessGroup(cmd)
			<-exited
		}
	})
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("notebook server exited:\n%s", logTail.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("notebook server not ready:\n%s", logTail.String())
	}
	s.api, err = newServerAPI(s.URL, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newSession creates a notebook session (and its kernel) on the server.
func (s *notebookServer) newSession(t *testing.T, path string) string {
	t.Helper()
	var sess serverSession
	body := map[string]any{"path": path, "type": "notebook", "kernel": map[string]string{"name": "python3"}}
	if err := s.api.do(ctxT(t, 30*time.Second), http.MethodPost, "api/sessions", body, &sess); err != nil {
		t.Fatal(err)
	}
	return sess.Kernel.ID
}

func TestServerKernel(t *testing.T) {
	s := startNotebookServer(t)
	kid := s.newSession(t, "work/analysis.ipynb")
	ctx := ctxT(t, 120*time.Second)

	c, err := ConnectServer(ctx, s.URL, s.Token, kid)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if info := c.Info(); info.LanguageName != "python" || info.Session == "" {
		t.Errorf("info %+v", info)
	}
	r, err := c.Execute(ctx, "df = {'a': 1}\nprint('hi')")
	if err != nil || r.Status != "ok" || r.Stdout != "hi\n" || r.ExecutionCount != 1 {
		t.Fatalf("execute: %+v %v", r, err)
	}
	ins, err := c.Inspect(ctx, InspectRequest{Names: []string{"df", "missing"}})
	if err != nil || !ins.Values["df"].Exists || ins.Values["missing"].Exists || ins.ExecutionCount != 1 {
		t.Fatalf("inspect: %+v %v", ins, err)
	}

	// A second client over ZeroMQ (the server wrote the connection file) sees the same
	// kernel; discovery names its notebook from /api/sessions.
	found, err := DiscoverWith(ctx, DiscoverOptions{Dirs: []string{s.RuntimeDir}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := MatchNotebook(found, filepath.Join(s.RootDir, "work", "analysis.ipynb"))
	if err != nil {
		t.Fatalf("match: %v (found %+v)", err, found)
	}
	if d.KernelID != kid || d.NotebookFrom != "server" || d.ConnectionFile == "" || d.Server == nil {
		t.Errorf("discovered %+v", d)
	}

	// Events from another client over the WebSocket.
	zc, err := ConnectFile(ctx, d.ConnectionFile)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	go zc.Execute(ctx, "raise ValueError('boom')")
	ev := waitEvent(t, c, 30*time.Second, func(e Event) bool { return e.Kind == EventExecuteReply && !e.Ours })
	if ev.Ours || ev.Status != "error" || ev.Ename != "ValueError" {
		t.Errorf("event %+v", ev)
	}

	// Restart through the server: EventRestart on the WebSocket, and the inspector is
	// injected again into the new process.
	if err := s.api.do(ctx, http.MethodPost, "api/kernels/"+kid+"/restart", nil, nil); err != nil {
		t.Fatal(err)
	}
	// notebook 6.4 announces a restart on the WebSocket only through the new kernel's first
	// messages, which a loaded machine may deliver late or, when the server reconnects its
	// streams after they were sent, not at all. The state check below is what must hold.
	if !seeEvent(c, 60*time.Second, func(e Event) bool { return e.Kind == EventRestart }) {
		t.Logf("no EventRestart within 60s of a server-side restart (known gap with notebook 6.4)")
	}
	ictx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ins, err = c.Inspect(ictx, InspectRequest{Names: []string{"df"}})
	if err != nil || ins.Values["df"].Exists {
		t.Fatalf("inspect after restart: %+v %v", ins, err)
	}
}

func TestServerBadInput(t *testing.T) {
	s := startNotebookServer(t)
	ctx := ctxT(t, 30*time.Second)
	if _, err := ConnectServer(ctx, s.URL, s.Token, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, ErrNoSuchKernel) {
		t.Errorf("unknown kernel: %v", err)
	}
	kid := s.newSession(t, "x.ipynb")
	if _, err := ConnectServer(ctx, s.URL, "wrong-token", kid); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("wrong token: %v", err)
	}
	ks, err := ListServerKernels(ctx, s.URL, s.Token)
	if err != nil || len(ks) != 1 || ks[0].ID != kid {
		t.Errorf("kernels %+v %v", ks, err)
	}
}
