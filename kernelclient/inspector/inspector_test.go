package inspector

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

func TestVersionMatchesSource(t *testing.T) {
	if len(Version) != 16 {
		t.Fatalf("Version = %q, want 16 hex digits", Version)
	}
	if !strings.Contains(Source, "\nVERSION = \""+Version+"\"") {
		t.Fatalf("Version %q is not the module's VERSION", Version)
	}
	if strings.Contains(Source, versionPlaceholder) {
		t.Fatal("Source still holds the VERSION placeholder")
	}
}

func TestAssemble(t *testing.T) {
	base := fstest.MapFS{
		"00_a.py": {Data: []byte("VERSION = \"@VERSION@\"  # x\nA = 1\n")},
		"10_b.py": {Data: []byte("B = A + 1")},
	}
	src, v1, err := assemble(base)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "A = 1\n# ==== 10_b.py ====\nB = A + 1\n") {
		t.Errorf("parts not joined in order:\n%s", src)
	}
	if !strings.Contains(src, "VERSION = \""+v1+"\"  # x") {
		t.Errorf("VERSION not stamped with %s:\n%s", v1, src)
	}
	edited := fstest.MapFS{"00_a.py": base["00_a.py"], "10_b.py": {Data: []byte("B = A + 2")}}
	_, v2, err := assemble(edited)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v2 {
		t.Error("editing a part did not change the version")
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no parts":     {"x.py": {Data: []byte("VERSION = \"@VERSION@\"")}},
		"no VERSION":   {"00_a.py": {Data: []byte("A = 1\n")}},
		"two VERSIONs": {"00_a.py": base["00_a.py"], "10_b.py": {Data: []byte("\nVERSION = \"@VERSION@\"\n")}},
	} {
		if _, _, err := assemble(fsys); err == nil {
			t.Errorf("%s: assemble succeeded", name)
		}
	}
}

// TestPython runs test_inspector.py (inspect against an in-process IPython shell with
// pandas/numpy/torch/sklearn objects, the no-trace property, and in-process shadow runs).
func TestPython(t *testing.T) {
	runPythonTests(t, "test_inspector.py")
}

// TestPythonStatic runs test_static.py: inspection decides from types and never runs the
// objects' code (no __len__, __getattr__ or property of theirs, no RNG moves).
func TestPythonStatic(t *testing.T) {
	runPythonTests(t, "test_static.py")
}

// TestPythonSandbox runs test_sandbox.py: the namespace sandbox and the fallback keep
// writes, processes and the network inside, and what the kernel had open untouched.
func TestPythonSandbox(t *testing.T) {
	runPythonTests(t, "test_sandbox.py")
}

// TestPythonFallback runs test_fallback.py: in the fallback sandbox, native syscalls
// outside the allow-list are refused, named in the result, and leave the host unchanged.
func TestPythonFallback(t *testing.T) {
	runPythonTests(t, "test_fallback.py")
}

// TestPythonMeta runs test_meta.py: the meta shadow run (36_meta.py) finds shape, stride,
// dtype and device errors on shape-only tensors, marks placeholders and makes no CUDA call.
func TestPythonMeta(t *testing.T) {
	runPythonTests(t, "test_meta.py")
}

// runPythonTests runs one of this folder's unittest files with the tests' Python
// (internal/testkit/python); it skips in -short mode and when that Python lacks IPython.
func runPythonTests(t *testing.T, file string) {
	t.Helper()
	if testing.Short() {
		t.Skip("short mode: Python tests take a few seconds")
	}
	python.Require(t, "IPython")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python.Path(), file).CombinedOutput()
	if err != nil {
		t.Fatalf("python tests in %s failed: %v\n%s", file, err, out)
	}
	t.Logf("%s", lastLines(string(out), 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
