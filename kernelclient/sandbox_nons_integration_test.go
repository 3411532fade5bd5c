package kernelclient

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// noNamespacesPython writes an interpreter wrapper that starts the kernel the way Docker's
// default seccomp profile would (testdata/no-namespaces.py: unshare and clone with namespace
// flags refused), for LaunchOptions.Python.
func noNamespacesPython(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "no-namespaces.py"))
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "python-no-namespaces")
	body := "#!/bin/sh\nexec " + python.Path() + " " + script + " " + python.Path() + " \"$@\"\n"
	if err := os.WriteFile(w, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSandboxSafetyWithoutNamespaces: the kernel runs where namespaces are refused (as in a
// container), and shadow runs use the default sandbox setting. The sandbox must say it is
// the fallback and why; every safety probe of TestSandboxSafety must hold (files, /dev/shm,
// mappings, descriptors, history.sqlite byte for byte, no stray process, the kernel's state);
// the cells that write and read back get the fallback's verdicts: the same as with
// namespaces (crash found, clean twin ok).
func TestSandboxSafetyWithoutNamespaces(t *testing.T) {
	python.Require(t, "torch")
	python.Require(t, "sklearn")
	python.Require(t, "matplotlib")
	dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	ipy := filepath.Join(home, ".ipython")
	l := launch(t, LaunchOptions{Cwd: dir, Python: noNamespacesPython(t),
		Env: []string{"HOME=" + home, "TMPDIR=" + tmp, "IPYTHONDIR=" + ipy}})
	ctx := ctxT(t, 10*time.Minute)
	mustExecute(t, ctx, l, sandboxSetup)
	who, err := l.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := l.SandboxProbe(ctx, SandboxAuto)
	if err != nil {
		t.Fatal(err)
	}
	if probe.Sandbox != facts.SandboxFallback || !strings.Contains(probe.Reason, "unprivileged user namespaces are not allowed here") ||
		!strings.Contains(probe.Reason, "file writes emulated in a private view; network and subprocesses refused") ||
		!slices.Contains(probe.Emulated, facts.EmulatedFiles) {
		t.Fatalf("probe where namespaces are refused: %+v", probe)
	}
	hist := filepath.Join(ipy, "profile_default", "history.sqlite")
	before := probeState(t, ctx, l)
	histBefore := stableHash(t, hist)
	outBefore := kernelOutside(t, l, who.PID, dir, home, tmp)
	cells := append(append([]sandboxCell(nil), sandboxCells...), libraryTwins()...)
	cells = append(cells, sandboxCell{name: "csv_clean_twin", code: "df.to_csv('submission.csv', index=False)\n" +
		"back = pd.read_csv('submission.csv')\nv = back['Age']\nback.to_csv('after.csv')", fb: facts.ShadowOK},
		sandboxCell{name: "native_sethostname", code: "import ctypes\nn = os.uname().nodename.encode()\n" +
			"assert ctypes.CDLL(None).sethostname(n, len(n)) == 0", fb: facts.ShadowRefused})
	for _, c := range cells {
		r := runShadow(t, ctx, l, c.code, ShadowOptions{Timeout: 60 * time.Second, Trace: true, MaxMemory: 1 << 30})
		switch {
		case c.fb != "" && r.Status != c.fb:
			t.Errorf("%s: status %q (exception %q line %d, reason %q, refused %q, message %q), want %q", c.name, r.Status, r.Exception, r.Line, r.Reason, r.Refused, r.Message, c.fb)
		case c.fbReason != "" && !strings.Contains(r.Reason, c.fbReason):
			t.Errorf("%s: reason %q, want it to say %q", c.name, r.Reason, c.fbReason)
		case c.fb == facts.ShadowError && (r.Exception != c.exception || r.Line != c.line):
			t.Errorf("%s: %s at line %d (%s), want %s at line %d", c.name, r.Exception, r.Line, r.Message, c.exception, c.line)
		case r.Status == facts.ShadowError && c.fb != facts.ShadowError:
			t.Errorf("%s: a crash where none is: %s %s", c.name, r.Exception, r.Message)
		case r.Status != facts.ShadowDied && (r.Sandbox != facts.SandboxFallback || !strings.Contains(r.SandboxReason, "not allowed here")):
			t.Errorf("%s: sandbox %q (%s), want the fallback with the reason", c.name, r.Sandbox, r.SandboxReason)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(childrenOf(who.PID)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if after := kernelOutside(t, l, who.PID, dir, home, tmp); !reflect.DeepEqual(after, outBefore) {
			t.Errorf("%s changed the kernel's outside:\n%s", c.name, outsideDiff(outBefore, after))
			outBefore = after
		}
		if h := fileHash(hist); h != histBefore {
			t.Errorf("%s: history.sqlite changed", c.name)
			histBefore = h
		}
		if p := strayProcesses(); len(p) != 0 {
			t.Errorf("%s: stray processes left: %v", c.name, p)
		}
		t.Logf("%-22s %-8s %-12s line %d  %.0f ms  %s%s", c.name, r.Status, r.Exception, r.Line, r.ElapsedMS, r.Refused, r.Reason)
	}
	sameState(t, "shadow runs without namespaces", before, probeState(t, ctx, l))
}
