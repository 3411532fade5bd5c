package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/premortem/premortem/kernelclient"
)

// jupyterServer is a classic Jupyter Notebook server (Debian's 6.4) run by a test.
type jupyterServer struct {
	URL, Token, RuntimeDir, RootDir string
}

// startJupyterServer starts `python3 -m notebook` on a free loopback port in temporary
// HOME and Jupyter directories; it is stopped, with its kernels, at cleanup.
func startJupyterServer(t *testing.T) *jupyterServer {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Jupyter server")
	}
	if exec.Command("/usr/bin/python3", "-c", "import notebook, ipykernel, pandas").Run() != nil {
		t.Skip("/usr/bin/python3 lacks notebook, ipykernel or pandas: install jupyter-notebook and python3-ipykernel to run this test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	home := t.TempDir()
	s := &jupyterServer{Token: fmt.Sprintf("tok%d", time.Now().UnixNano()), RuntimeDir: filepath.Join(home, "runtime"), RootDir: filepath.Join(home, "notebooks")}
	if err := os.MkdirAll(s.RootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	cmd := exec.Command("/usr/bin/python3", "-m", "notebook", "--no-browser", "--allow-root",
		fmt.Sprintf("--port=%d", port), "--NotebookApp.token="+s.Token, "--ip=127.0.0.1", "--NotebookApp.port_retries=0")
	cmd.Dir = s.RootDir
	cmd.Env = append(os.Environ(), "HOME="+home, "JUPYTER_RUNTIME_DIR="+s.RuntimeDir,
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"), "JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"JUPYTER_PATH=/usr/share/jupyter", "PYDEVD_DISABLE_FILE_VALIDATION=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "is running at") {
				signalled = true
				close(ready)
			}
		}
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case <-ready:
	case <-exited:
		t.Fatal("the notebook server exited at startup")
	case <-time.After(60 * time.Second):
		t.Fatal("the notebook server did not start")
	}
	return s
}

// api calls the server's REST API.
func (s *jupyterServer) api(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&rd).Encode(body)
	}
	req, err := http.NewRequest(method, s.URL+path, &rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+s.Token)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

type jupyterSession struct {
	ID     string `json:"id"`
	Kernel struct {
		ID string `json:"id"`
	} `json:"kernel"`
}

// TestRestartServerSessionNewKernel: the notebook's Jupyter Server session is switched to
// a new kernel (what "change kernel" does in Jupyter; the server shuts the old one down);
// discovery follows the session to the new kernel, with no user action in premortem.
func TestRestartServerSessionNewKernel(t *testing.T) {
	s := startJupyterServer(t)
	var sess jupyterSession
	s.api(t, http.MethodPost, "api/sessions", map[string]any{"path": "nb.ipynb", "type": "notebook", "kernel": map[string]string{"name": "python3"}}, &sess)
	path := filepath.Join(s.RootDir, "nb.ipynb")
	// The kernel is up once it answers a handshake: then discovery on open finds it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	k, err := kernelclient.ConnectServer(ctx, s.URL, s.Token, sess.Kernel.ID)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	k.Close()
	c, _ := startInProcessWith(t, func(sv *Server) {
		sv.rt.dirs = []string{s.RuntimeDir}
		sv.rt.reattachEvery = 200 * time.Millisecond
	})
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(path, vsCell{handle: 0, text: restartSetup}, vsCell{handle: 1, text: restartTarget}))
	uri := "file://" + path
	target := cellURI(path, 1)
	first := c.waitStatus(uri, StatusIdle)
	if !strings.Contains(first.ConnectionFile, sess.Kernel.ID) {
		t.Fatalf("attached to %+v, want kernel %s", first, sess.Kernel.ID)
	}
	runSetup := func(kernelID string, version int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		k, err := kernelclient.ConnectServer(ctx, s.URL, s.Token, kernelID)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if n := execute(t, k, restartSetup); n != 1 {
			t.Fatalf("setup ran as %d, want 1", n)
		}
		c.notify("notebookDocument/didChange", vscodeRun(path, version, vsCell{handle: 0, text: restartSetup, order: 1}))
	}
	runSetup(sess.Kernel.ID, 2)
	c.wait("the rules finding", func() bool { return c.hasCode(target, restartFound) })

	var after jupyterSession
	s.api(t, http.MethodPatch, "api/sessions/"+sess.ID, map[string]any{"kernel": map[string]string{"name": "python3"}}, &after)
	if after.Kernel.ID == "" || after.Kernel.ID == sess.Kernel.ID {
		t.Fatalf("the session kept its kernel: %+v", after)
	}
	c.wait("an attachment to the session's new kernel", func() bool {
		for i := len(c.statuses) - 1; i >= 0; i-- {
			if st := c.statuses[i]; st.URI == uri {
				return st.State == StatusIdle && strings.Contains(st.ConnectionFile, after.Kernel.ID)
			}
		}
		return false
	})
	c.wait("the old kernel's finding to go", func() bool { return !c.hasCode(target, restartFound) })
	runSetup(after.Kernel.ID, 3)
	c.wait("the rules finding in the new kernel", func() bool { return c.hasCode(target, restartFound) })
}
