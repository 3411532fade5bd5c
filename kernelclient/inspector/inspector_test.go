package inspector

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// python is Debian's interpreter, the one with IPython, numpy, pandas, torch and sklearn.
const python = "/usr/bin/python3"

func TestVersionMatchesSource(t *testing.T) {
	if Version == "" {
		t.Fatal("no VERSION = \"...\" line found in inspector.py")
	}
	if !strings.Contains(Source, "\nVERSION = \""+Version+"\"\n") {
		t.Fatalf("Version %q is not the module's VERSION", Version)
	}
}

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"x = 1\nVERSION = \"1.2.3\"\n", "1.2.3"},
		{"VERSION = '1'\n", ""},
		{"# VERSION = \"no\"\n", ""},
		{"", ""},
	} {
		if got := versionOf(tc.src); got != tc.want {
			t.Errorf("versionOf(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestPython runs test_inspector.py (inspect against an in-process IPython shell with
// pandas/numpy/torch/sklearn objects, the no-trace property, and in-process shadow runs).
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: Python tests take a few seconds")
	}
	if err := exec.Command(python, "-c", "import IPython").Run(); err != nil {
		t.Skipf("%s cannot import IPython (install python3-ipykernel): %v", python, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "test_inspector.py")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python tests failed: %v\n%s", err, out)
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
