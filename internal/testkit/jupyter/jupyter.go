// Package jupyter starts a real classic Jupyter Notebook server (Debian's notebook 6.4) for
// the tests of kernelclient and lsp, so both exercise the same server the same way.
//
// A test that needs one calls Start, which skips the test with a message naming the
// missing module when Python cannot import notebook, ipykernel or the extra modules the
// test asks for, and only then.
package jupyter

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// Server is a running notebook server: its base URL (ending in "/"), its token, the
// runtime directory where it writes nbserver-*.json and its kernels' connection files, and
// the root directory notebooks and sessions are relative to.
type Server struct {
	URL, Token, RuntimeDir, RootDir string
}

// Start starts `python3 -m notebook` on a free loopback port with a random token, in
// temporary HOME and Jupyter directories, and stops it with its kernels when t ends: SIGTERM
// (the server shuts its kernels down), then SIGKILL to its process group after 15 s. It
// skips t (python.Require) when the tests' Python lacks notebook, ipykernel or one of extra.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	python.Require(t, append([]string{"notebook", "ipykernel"}, extra...)...)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	s := &Server{Token: newToken(), RuntimeDir: filepath.Join(home, "runtime"), RootDir: filepath.Join(home, "notebooks")}
	if err := os.MkdirAll(s.RootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	cmd := exec.Command(python.Path(), "-m", "notebook", "--no-browser", "--allow-root",
		fmt.Sprintf("--port=%d", port), "--NotebookApp.token="+s.Token, "--ip=127.0.0.1",
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
		t.Fatalf("start the notebook server: %v", err)
	}
	var (
		mu      sync.Mutex
		logTail strings.Builder
	)
	tail := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logTail.String()
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			if logTail.Len() < 8000 {
				logTail.WriteString(line + "\n")
			}
			mu.Unlock()
			if !signalled && strings.Contains(line, "is running at") {
				signalled = true
				close(ready)
			}
		}
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(terminate)
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
		t.Fatalf("notebook server exited at startup:\n%s", tail())
	case <-time.After(60 * time.Second):
		t.Fatalf("notebook server not ready after 60 s:\n%s", tail())
	}
	return s
}

// API calls the server's REST API (path relative to URL, such as "api/sessions") with the
// token, sending body as JSON when it is not nil and decoding the answer into out when out
// is not nil; any failure or non-2xx status fails t.
func (s *Server) API(t testing.TB, method, path string, body, out any) {
	t.Helper()
	var rd bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&rd).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, &rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode the answer: %v", method, path, err)
		}
	}
}

// Session is a notebook session as the server's REST API returns it.
type Session struct {
	ID     string `json:"id"`
	Kernel struct {
		ID string `json:"id"`
	} `json:"kernel"`
}

// NewSession creates a notebook session for path (relative to RootDir) with a new python3
// kernel, as opening the notebook in Jupyter does.
func (s *Server) NewSession(t testing.TB, path string) Session {
	t.Helper()
	var sess Session
	s.API(t, http.MethodPost, "api/sessions", map[string]any{"path": path, "type": "notebook", "kernel": map[string]string{"name": "python3"}}, &sess)
	return sess
}

// freePort is a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// newToken is a random server token, so a test never talks to another test's server.
func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("tok%d", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
