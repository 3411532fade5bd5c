package lsp

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/jupyter"
	"github.com/premortem/premortem/kernelclient"
)

// TestRestartServerSessionNewKernel: the notebook's Jupyter Server session is switched to
// a new kernel (what "change kernel" does in Jupyter; the server shuts the old one down);
// discovery follows the session to the new kernel, with no user action in premortem.
func TestRestartServerSessionNewKernel(t *testing.T) {
	s := startNotebookServer(t)
	sess := s.NewSession(t, "nb.ipynb")
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

	var after jupyter.Session
	s.API(t, http.MethodPatch, "api/sessions/"+sess.ID, map[string]any{"kernel": map[string]string{"name": "python3"}}, &after)
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
