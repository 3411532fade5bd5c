package inspector

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestPythonDevRun runs test_devrun.py: the fast dev run's transform (exact lines, capped
// for and while loops, a peek of one element past the cap), its report (shortened loops,
// likely vs confirmed crashes) and run groups (siblings survive each other, a new run kills
// both), with real forks of an in-process IPython shell.
func TestPythonDevRun(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: Python tests take a few seconds")
	}
	if err := exec.Command(python, "-c", "import IPython").Run(); err != nil {
		t.Skipf("%s cannot import IPython (install python3-ipykernel): %v", python, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "test_devrun.py").CombinedOutput()
	if err != nil {
		t.Fatalf("python tests failed: %v\n%s", err, out)
	}
	t.Logf("%s", lastLines(string(out), 3))
}
