package inspector

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/premortem/premortem/internal/testkit/python"
)

// TestPartsAreLayers runs check_layers.py over the embedded parts: no part may use a name
// that only a later part defines, not even in a function body where the joined module
// would resolve it at run time. The cases under testdata/layers show the checker failing
// on each kind of forward use (so a clean run of the real parts means something).
func TestPartsAreLayers(t *testing.T) {
	python.Require(t)
	cases, err := filepath.Glob(filepath.Join("testdata", "layers", "*"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no checker cases under testdata/layers: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "want.txt"))
			if err != nil {
				t.Fatal(err)
			}
			got, code := checkLayers(t, dir)
			if got != strings.TrimSpace(string(want)) {
				t.Errorf("check_layers.py %s printed\n%s\nwant\n%s", dir, got, want)
			}
			if wantCode := map[bool]int{true: 0, false: 1}[len(want) == 0]; code != wantCode {
				t.Errorf("check_layers.py %s exited %d, want %d", dir, code, wantCode)
			}
		})
	}
	t.Run("inspector", func(t *testing.T) {
		if got, code := checkLayers(t, "."); got != "" || code != 0 {
			t.Errorf("the inspector's parts are not layers (exit %d); move each name to the part "+
				"that first needs it, or the user to a later part:\n%s", code, got)
		}
	})
}

// checkLayers runs the checker on dir and returns what it printed and its exit code.
func checkLayers(t *testing.T, dir string) (string, int) {
	t.Helper()
	out, err := exec.Command(python.Path(), "check_layers.py", dir).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return strings.TrimSpace(string(out)), 0
	case errors.As(err, &exit):
		return strings.TrimSpace(string(out)), exit.ExitCode()
	default:
		t.Fatalf("run check_layers.py %s: %v\n%s", dir, err, out)
		return "", -1
	}
}
