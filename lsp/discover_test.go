package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/jupyter"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/kernelclient"
)

// TestParseServerKernelURL covers the server kernel URLs listKernels hands out and
// attachKernel accepts.
func TestParseServerKernelURL(t *testing.T) {
	for _, tc := range []struct {
		in, base, id, token, err string
	}{
		{in: "http://127.0.0.1:8888/api/kernels/abc-123", base: "http://127.0.0.1:8888/", id: "abc-123"},
		{in: "https://hub.example/user/ann/api/kernels/k1/?token=s3", base: "https://hub.example/user/ann/", id: "k1", token: "s3"},
		{in: "http://127.0.0.1:8888/api/sessions", err: "want http(s)://host/api/kernels/KERNEL_ID"},
		{in: "http://127.0.0.1:8888/api/kernels/", err: "want http"},
		{in: "http://127.0.0.1:8888/api/kernels/a/b", err: "want http"},
	} {
		base, id, token, err := parseServerKernelURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || base != tc.base || id != tc.id || token != tc.token {
			t.Errorf("%s: (%q, %q, %q, %v), want (%q, %q, %q)", tc.in, base, id, token, err, tc.base, tc.id, tc.token)
		}
		if got := serverKernelURL(base, id); !strings.HasPrefix(tc.in, got) {
			t.Errorf("serverKernelURL(%q, %q) = %q, not a prefix of %q", base, id, got, tc.in)
		}
	}
}

// TestKernelEntries: discovery results as listKernels returns them; a kernel known only
// to a server gets its URL (without the token) as connectionFile.
func TestKernelEntries(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kernel-1234abcd5678.json")
	if err := os.WriteFile(file, []byte(`{"shell_port":1,"iopub_port":2,"stdin_port":3,"control_port":4,"hb_port":5,"ip":"127.0.0.1","key":"k","transport":"tcp","signature_scheme":"hmac-sha256","kernel_name":"python3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := kernelEntries([]kernelclient.Discovered{
		{ConnectionFile: file, KernelID: "1234abcd5678", Notebook: "/p/a.ipynb", NotebookFrom: "vscode", State: kernelclient.StateIdle, PID: 77, Cwd: "/p"},
		{KernelID: "feedbeef0001", Notebook: "/p/b.ipynb", NotebookFrom: "server", State: kernelclient.StateBusy,
			Server: &kernelclient.ServerInfo{URL: "http://127.0.0.1:8888/", Token: "secret"}},
		{KernelID: "orphan"}, // neither a file nor a server: not attachable
	})
	if len(got) != 2 {
		t.Fatalf("entries %+v, want 2", got)
	}
	if e := got[0]; e.ConnectionFile != file || e.Name != "python3" || e.PID != 77 || e.State != "idle" || e.Notebook != "/p/a.ipynb" || !strings.Contains(e.Detail, "found by vscode") {
		t.Errorf("file kernel entry %+v", e)
	}
	e := got[1]
	if e.ConnectionFile != "http://127.0.0.1:8888/api/kernels/feedbeef0001" || e.State != "busy" || !strings.Contains(e.Detail, "Jupyter Server") {
		t.Errorf("server kernel entry %+v", e)
	}
	js, _ := json.Marshal(got)
	if strings.Contains(string(js), "secret") {
		t.Errorf("the server token leaked into the list: %s", js)
	}
	if empty, _ := json.Marshal(kernelEntries(nil)); string(empty) != "[]" {
		t.Errorf("no kernels: %s, want []", empty)
	}
}

// TestListKernelsLaunched: listKernels finds a running kernel in the runtime directory,
// with its pid, and attachKernel takes the entry's connectionFile.
func TestListKernelsLaunched(t *testing.T) {
	dir := t.TempDir()
	l := kernel.Start(t, kernelclient.LaunchOptions{RuntimeDir: dir})
	c, _ := startInProcessWith(t, func(s *Server) { s.rt.dirs = []string{dir} })
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}, "kernel": map[string]any{"autoAttach": false}})
	var list []KernelEntry
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandListKernels, "arguments": []any{}}, &list)
	if len(list) != 1 || list[0].ConnectionFile != l.ConnectionFile || list[0].PID != l.Cmd.Process.Pid || list[0].State != "idle" {
		t.Fatalf("listKernels = %+v, want the launched kernel (pid %d)", list, l.Cmd.Process.Pid)
	}
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1"}))
	var st KernelStatus
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{list[0].ConnectionFile}}, &st)
	if st.State != StatusIdle || st.Kernel != fmt.Sprintf("%s (pid %d)", list[0].Name, l.Cmd.Process.Pid) {
		t.Errorf("attach status %+v", st)
	}
}

// startNotebookServer starts the classic Jupyter Notebook server the tests share
// (internal/testkit/jupyter) and stops it, with its kernels, at the end; it skips the test
// in -short mode and when the tests' Python (internal/testkit/python) lacks notebook, ipykernel or pandas.
func startNotebookServer(t *testing.T) *jupyter.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a notebook server")
	}
	return jupyter.Start(t, "pandas")
}

// TestAttachServerOnlyKernel: a notebook whose kernel only a Jupyter Server knows (its
// connection file is in a directory premortem does not scan, the server's info file is)
// is attached on open through the server's WebSocket: status idle with the kernel's URL,
// runtime rules work; listKernels lists it by URL (no token) and attachKernel takes
// that URL.
func TestAttachServerOnlyKernel(t *testing.T) {
	srv := startNotebookServer(t)
	if err := os.MkdirAll(filepath.Join(srv.RootDir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	kid := srv.NewSession(t, "work/analysis.ipynb").Kernel.ID
	// Only the server's info file is where premortem looks.
	scanned := t.TempDir()
	infos, _ := filepath.Glob(filepath.Join(srv.RuntimeDir, "nbserver-*.json"))
	if len(infos) != 1 {
		t.Fatalf("server info files %v in %s", infos, srv.RuntimeDir)
	}
	data, err := os.ReadFile(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scanned, filepath.Base(infos[0])), data, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	user, err := kernelclient.ConnectServer(ctx, srv.URL, srv.Token, kid)
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	setup := "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0]})"
	r, err := user.Execute(ctx, setup)
	if err != nil || r.Status != "ok" {
		t.Fatalf("setup: %v %+v", err, r)
	}

	c, _ := startInProcessWith(t, func(s *Server) { s.rt.dirs = []string{scanned} })
	c.initialize(map[string]any{"debounce": 10, "shadow": map[string]any{"mode": "off"}})
	path := filepath.Join(srv.RootDir, "work", "analysis.ipynb")
	uri := "file://" + path
	c.notify("notebookDocument/didOpen", vscodeDidOpen(path,
		vsCell{handle: 0, text: setup, order: r.ExecutionCount},
		vsCell{handle: 1, text: "m = df['age'].mean()"},
	))
	want := srv.URL + "api/kernels/" + kid
	st := c.waitStatus(uri, StatusIdle)
	if st.ConnectionFile != want || !strings.Contains(st.Detail, "Jupyter Server") {
		t.Errorf("status %+v, want the server kernel %s", st, want)
	}
	c.waitDiags(cellURI(path, 1), "[missing-column@0:7-0:12]")

	var list []KernelEntry
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandListKernels}, &list)
	if len(list) != 1 || list[0].ConnectionFile != want || list[0].Notebook != path {
		t.Fatalf("listKernels = %+v, want %s for %s", list, want, path)
	}
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{list[0].ConnectionFile, uri}}, &st)
	if st.State != StatusIdle || st.ConnectionFile != want {
		t.Errorf("attach by URL: %+v", st)
	}
}
