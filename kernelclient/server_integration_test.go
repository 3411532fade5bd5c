package kernelclient

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/jupyter"
)

// notebookServer is a classic Jupyter Notebook server run by a test
// (internal/testkit/jupyter), with kernelclient's own REST client to it.
type notebookServer struct {
	*jupyter.Server
	api *serverAPI
}

// startNotebookServer starts the shared test server and stops it (and its kernels) at the
// end; it skips the test when the tests' Python (internal/testkit/python) lacks notebook or
// ipykernel.
func startNotebookServer(t *testing.T) *notebookServer {
	t.Helper()
	s := &notebookServer{Server: jupyter.Start(t)}
	var err error
	s.api, err = newServerAPI(s.URL, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newSession creates a notebook session (and its kernel) on the server, through
// kernelclient's REST client.
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
