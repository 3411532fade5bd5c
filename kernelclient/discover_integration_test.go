package kernelclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

func TestDiscover(t *testing.T) {
	rt := t.TempDir()
	l := launch(t, LaunchOptions{RuntimeDir: rt})
	ctx := ctxT(t, 60*time.Second)
	nb := filepath.Join(t.TempDir(), "my notebook.ipynb")
	// What VS Code's startup code does.
	if _, err := l.Execute(ctx, fmt.Sprintf("__vsc_ipynb_file__ = %s", pyStr(nb))); err != nil {
		t.Fatal(err)
	}
	// A second live kernel, JupyterLab style (__session__), under a VS Code file name.
	l2 := launch(t, LaunchOptions{RuntimeDir: rt})
	v3 := filepath.Join(rt, "kernel-v3"+strings.Repeat("ab", 20)+".json")
	if err := os.Rename(l2.ConnectionFile, v3); err != nil {
		t.Fatal(err)
	}
	l2.ConnectionFile = v3
	nb2 := filepath.Join(t.TempDir(), "lab.ipynb")
	if _, err := l2.Execute(ctx, fmt.Sprintf("__session__ = %s", pyStr(nb2))); err != nil {
		t.Fatal(err)
	}
	ports, _ := freePorts(5)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(rt, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("kernel-stale.json", fmt.Sprintf(`{"transport":"tcp","ip":"127.0.0.1","shell_port":%d,"iopub_port":%d,"stdin_port":%d,"control_port":%d,"hb_port":%d,"key":"k","signature_scheme":"hmac-sha256"}`, ports[0], ports[1], ports[2], ports[3], ports[4]))
	write("kernel-broken.json", `{"shell_port": `)
	write("nbserver-1.json", fmt.Sprintf(`{"url": "http://127.0.0.1:%d/", "token": "t", "notebook_dir": "/nowhere"}`, ports[0]))
	write("jpserver-2.json", `not json`)
	write("unrelated.json", `{}`)

	found, err := DiscoverWith(ctx, DiscoverOptions{Dirs: []string{rt}})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Fatalf("found %d kernels, want 2: %+v", len(found), found)
	}
	d, err := MatchNotebook(found, nb)
	if err != nil {
		t.Fatal(err)
	}
	if d.ConnectionFile != l.ConnectionFile || d.NotebookFrom != "vscode" || d.State != StateIdle || d.PID == 0 {
		t.Errorf("vscode kernel: %+v", d)
	}
	d2, err := MatchNotebook(found, nb2)
	if err != nil {
		t.Fatal(err)
	}
	if d2.ConnectionFile != v3 || d2.NotebookFrom != "session" || d2.KernelID != "v3"+strings.Repeat("ab", 20) {
		t.Errorf("lab kernel: %+v", d2)
	}
	if _, err := MatchNotebook(found, "/no/such.ipynb"); !errors.Is(err, ErrNoMatch) {
		t.Errorf("match of unknown notebook: %v", err)
	}

	all, err := DiscoverWith(ctx, DiscoverOptions{Dirs: []string{rt}, IncludeSkipped: true, ProbeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, d := range all {
		if d.Skipped != "" {
			key := d.KernelID
			if d.Server != nil {
				key = "server"
			} else if key == "" {
				key = "serverfile"
			}
			reasons[key] = d.Skipped
		}
	}
	for key, want := range map[string]string{"stale": ReasonStale, "broken": ReasonMalformed, "server": "server", "serverfile": ReasonMalformed} {
		if !strings.Contains(reasons[key], want) {
			t.Errorf("skipped %s: %q, want it to mention %q (all: %v)", key, reasons[key], want, reasons)
		}
	}
}

func TestRuntimeDirs(t *testing.T) {
	t.Setenv("JUPYTER_RUNTIME_DIR", "/j/rt")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	t.Setenv("JUPYTER_DATA_DIR", "")
	t.Setenv("HOME", "/home/u")
	dirs := RuntimeDirs()
	for _, want := range []string{"/j/rt", "/xdg/data/jupyter/runtime", "/home/u/.local/share/jupyter/runtime", "/run/user/1000/jupyter/runtime", "/home/u/Library/Jupyter/runtime"} {
		found := false
		for _, d := range dirs {
			found = found || d == want
		}
		if !found {
			t.Errorf("%s missing from %v", want, dirs)
		}
	}
	if dirs[0] != "/j/rt" {
		t.Errorf("JUPYTER_RUNTIME_DIR not first: %v", dirs)
	}
}

func TestFindKernelSpecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("JUPYTER_PATH", dir)
	spec := filepath.Join(dir, "kernels", "MyKernel")
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(spec, "kernel.json"), []byte(`{"argv": ["x", "-f", "{connection_file}"], "display_name": "Mine", "language": "python", "interrupt_mode": "message"}`), 0o644)
	bad := filepath.Join(dir, "kernels", "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "kernel.json"), []byte(`{"argv": []}`), 0o644)
	specs, err := FindKernelSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var mine *KernelSpec
	for i := range specs {
		if specs[i].Name == "bad" {
			t.Error("spec with empty argv listed")
		}
		if specs[i].Name == "mykernel" {
			mine = &specs[i]
		}
	}
	if mine == nil || mine.InterruptMode != "message" || mine.Dir != spec {
		t.Fatalf("specs %+v", specs)
	}
	if _, err := findKernelSpec("nope"); !errors.Is(err, ErrNoKernelSpec) || !strings.Contains(err.Error(), "jupyter kernelspec list") {
		t.Errorf("missing spec: %v (want ErrNoKernelSpec, saying how to list the installed ones)", err)
	}
}

// TestLaunchFallsBackToSystemPython: a spec whose argv[0] is a bare "python3" works even
// when the python3 on PATH lacks ipykernel.
func TestLaunchFallsBackToSystemPython(t *testing.T) {
	python.Require(t, "ipykernel")
	dir := t.TempDir()
	t.Setenv("JUPYTER_PATH", dir)
	spec := filepath.Join(dir, "kernels", "barepy")
	os.MkdirAll(spec, 0o755)
	os.WriteFile(filepath.Join(spec, "kernel.json"), []byte(`{"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "bare", "language": "python"}`), 0o644)
	// A PATH whose python3 cannot import ipykernel.
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "python3"), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := ctxT(t, 60*time.Second)
	l, err := Launch(ctx, LaunchOptions{KernelName: "barepy", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Shutdown(ctx)
	if l.Cmd.Path != systemPython && l.Cmd.Args[0] != systemPython {
		t.Errorf("launched %v", l.Cmd.Args)
	}
	r, err := l.Execute(ctx, "import sys; print(sys.executable)")
	if err != nil || !strings.Contains(r.Stdout, "python3") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestShutdownReapsKernel(t *testing.T) {
	python.Require(t, "ipykernel")
	ctx := ctxT(t, 60*time.Second)
	l, err := Launch(ctx, LaunchOptions{Python: python.Path(), Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Exited():
	default:
		t.Fatal("process not reaped")
	}
	if _, err := os.Stat(l.ConnectionFile); !os.IsNotExist(err) {
		t.Errorf("connection file left behind: %v", err)
	}
	if l.Cmd.ProcessState == nil {
		t.Error("no process state: not waited for")
	}
}
