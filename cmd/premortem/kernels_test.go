package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/kernel"
	"github.com/premortem/premortem/kernelclient"
)

// TestKernelsAndInspectCommands runs `premortem kernels` and `premortem inspect` against a
// real kernel in an isolated runtime directory.
func TestKernelsAndInspectCommands(t *testing.T) {
	home := t.TempDir()
	rt := filepath.Join(home, "runtime")
	os.MkdirAll(rt, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("JUPYTER_RUNTIME_DIR", rt)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("JUPYTER_DATA_DIR", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := kernel.Start(t, kernelclient.LaunchOptions{RuntimeDir: rt, Cwd: home})
	if _, err := l.Execute(ctx, "x = [1, 2, 3]\n__vsc_ipynb_file__ = '/nb/a.ipynb'"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rt, "kernel-junk.json"), []byte("{"), 0o600)

	var out, errb bytes.Buffer
	if code := run([]string{"kernels", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("kernels: exit %d: %s", code, errb.String())
	}
	var found []kernelclient.Discovered
	if err := json.Unmarshal(out.Bytes(), &found); err != nil {
		t.Fatalf("kernels --json: %v\n%s", err, out.String())
	}
	if len(found) != 1 || found[0].ConnectionFile != l.ConnectionFile || found[0].Notebook != "/nb/a.ipynb" {
		t.Fatalf("kernels: %+v", found)
	}
	out.Reset()
	if code := run([]string{"kernels", "--all"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "kernel-junk.json") || !strings.Contains(out.String(), "/nb/a.ipynb") {
		t.Fatalf("kernels --all: exit %d\n%s", code, out.String())
	}

	out.Reset()
	if code := run([]string{"inspect", "--connection-file", l.ConnectionFile, "x", "nope"}, &out, &errb); code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errb.String())
	}
	var ins facts.Inspection
	if err := json.Unmarshal(out.Bytes(), &ins); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, out.String())
	}
	if !ins.Values["x"].Exists || ins.Values["nope"].Exists || ins.ExecutionCount != 1 {
		t.Fatalf("inspect: %+v", ins)
	}
	out.Reset()
	if code := run([]string{"inspect", "--notebook", "/nb/a.ipynb", "--no-values", "x"}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"exists": true`) {
		t.Fatalf("inspect --notebook: exit %d: %s %s", code, out.String(), errb.String())
	}

	for _, args := range [][]string{
		{"inspect", "x"}, // no kernel named
		{"inspect", "--connection-file", l.ConnectionFile}, // no names
		{"inspect", "--connection-file", filepath.Join(rt, "kernel-junk.json"), "x"},
		{"inspect", "--notebook", "/nb/other.ipynb", "x"},
		{"kernels", "extra"},
	} {
		errb.Reset()
		if code := run(args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
