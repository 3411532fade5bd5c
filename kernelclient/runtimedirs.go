package kernelclient

import (
	"os"
	"path/filepath"
	"runtime"
)

// RuntimeDirs lists every directory where kernels and servers write their connection and
// server-info files. jupyter_core and VS Code disagree on Linux (VS Code prefers
// $XDG_RUNTIME_DIR/jupyter/runtime), so all candidates are scanned; missing ones are
// harmless.
func RuntimeDirs() []string {
	var dirs []string
	if d := os.Getenv("JUPYTER_RUNTIME_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, filepath.Join(userDataDir(), "runtime"))
	home, _ := os.UserHomeDir()
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "jupyter", "runtime"))
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".local", "share", "jupyter", "runtime"))
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
		dirs = append(dirs, filepath.Join(x, "jupyter", "runtime"))
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, "Library", "Jupyter", "runtime"))
	}
	if a := os.Getenv("APPDATA"); a != "" {
		dirs = append(dirs, filepath.Join(a, "jupyter", "runtime"))
	}
	return dedupe(dirs)
}

// caseInsensitiveFS is true where notebook paths compare without case by default.
var caseInsensitiveFS = runtime.GOOS == "darwin" || runtime.GOOS == "windows"
