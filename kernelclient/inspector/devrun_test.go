package inspector

import (
	"testing"
)

// TestPythonDevRun runs test_devrun.py: the fast dev run's transform (exact lines, capped
// for and while loops, a peek of one element past the cap), its report (shortened loops,
// likely vs confirmed crashes) and run groups (siblings survive each other, a new run kills
// both), with real forks of an in-process IPython shell.
func TestPythonDevRun(t *testing.T) {
	runPythonTests(t, "test_devrun.py")
}

// TestPythonDevLib runs test_devlib.py: every entry of the fast dev run's library table
// keeps the structure of the full call's result (fitted features, classes, output shapes
// and dtypes), puts the user's parameters back and says what it shortened.
func TestPythonDevLib(t *testing.T) {
	runPythonTests(t, "test_devlib.py")
}
