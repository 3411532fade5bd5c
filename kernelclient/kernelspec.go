package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/premortem/premortem/internal/smallfile"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// KernelSpec is a kernelspec (kernels/<name>/kernel.json).
type KernelSpec struct {
	Name          string            `json:"-"`
	Dir           string            `json:"-"`
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
}

// systemPython is the interpreter with ipykernel on Debian-like systems, used when a bare
// "python3" on PATH (a pyenv, a venv) lacks ipykernel.
const systemPython = "/usr/bin/python3"

// JupyterDataDirs lists Jupyter data directories in jupyter_core's order: $JUPYTER_PATH, the
// user data dir, then the system ones.
func JupyterDataDirs() []string {
	var dirs []string
	if p := os.Getenv("JUPYTER_PATH"); p != "" {
		dirs = append(dirs, filepath.SplitList(p)...)
	}
	dirs = append(dirs, userDataDir())
	switch runtime.GOOS {
	case "windows":
		if pd := os.Getenv("PROGRAMDATA"); pd != "" {
			dirs = append(dirs, filepath.Join(pd, "jupyter"))
		}
	default:
		dirs = append(dirs, "/usr/local/share/jupyter", "/usr/share/jupyter")
	}
	return dedupe(dirs)
}

// userDataDir is jupyter_core's jupyter_data_dir.
func userDataDir() string {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Jupyter")
	case "windows":
		if a := os.Getenv("APPDATA"); a != "" {
			return filepath.Join(a, "jupyter")
		}
		return filepath.Join(home, "AppData", "Roaming", "jupyter")
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter")
	}
	return filepath.Join(home, ".local", "share", "jupyter")
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// FindKernelSpecs lists the kernelspecs of every Jupyter data dir; the first dir that has a
// name wins, as in jupyter_client.
func FindKernelSpecs() ([]KernelSpec, error) {
	seen := map[string]bool{}
	var specs []KernelSpec
	for _, d := range JupyterDataDirs() {
		entries, err := os.ReadDir(filepath.Join(d, "kernels"))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := strings.ToLower(e.Name())
			if !e.IsDir() || seen[name] {
				continue
			}
			dir := filepath.Join(d, "kernels", e.Name())
			spec, err := readKernelSpec(dir)
			if err != nil {
				continue
			}
			spec.Name = name
			seen[name] = true
			specs = append(specs, spec)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs, nil
}

func readKernelSpec(dir string) (KernelSpec, error) {
	data, err := smallfile.Read(filepath.Join(dir, "kernel.json"), MaxKernelSpecSize)
	if err != nil {
		return KernelSpec{}, fmt.Errorf("kernelspec %s: %w (fix or remove that kernelspec: `jupyter kernelspec list` shows them)", dir, err)
	}
	var spec KernelSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return KernelSpec{}, fmt.Errorf("kernelspec %s: %w", dir, err)
	}
	if len(spec.Argv) == 0 {
		return KernelSpec{}, fmt.Errorf("kernelspec %s: empty argv", dir)
	}
	spec.Dir = dir
	return spec, nil
}

// ErrNoKernelSpec: no kernelspec of that name in any Jupyter data dir.
var ErrNoKernelSpec = errors.New("no such kernelspec")

// findKernelSpec returns the named spec; "python3" falls back to a built-in ipykernel spec
// when none is installed.
func findKernelSpec(name string) (KernelSpec, error) {
	if name == "" {
		name = "python3"
	}
	specs, _ := FindKernelSpecs()
	for _, s := range specs {
		if s.Name == strings.ToLower(name) {
			return s, nil
		}
	}
	if name == "python3" || name == "python" {
		return KernelSpec{
			Name:        "python3",
			Argv:        []string{"python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"},
			DisplayName: "Python 3 (built-in spec)",
			Language:    "python",
		}, nil
	}
	return KernelSpec{}, fmt.Errorf("%w %q (looked in %s): pick one that `jupyter kernelspec list` shows, or install it", ErrNoKernelSpec, name, strings.Join(JupyterDataDirs(), ", "))
}

// hasIPyKernel probes an interpreter for ipykernel.
func hasIPyKernel(ctx context.Context, python string) bool {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, python, "-c", "import ipykernel").Run() == nil
}

// resolvePython picks the interpreter for a Python kernelspec: override when given; a bare
// "python3"/"python" lacking ipykernel falls back to /usr/bin/python3.
func resolvePython(ctx context.Context, argv0, override string) (string, error) {
	if override != "" {
		if !hasIPyKernel(ctx, override) {
			return "", fmt.Errorf("%s cannot import ipykernel: install it (pip install ipykernel, or apt-get install python3-ipykernel)", override)
		}
		return override, nil
	}
	base := filepath.Base(argv0)
	if argv0 != base || (base != "python3" && base != "python") {
		return argv0, nil // an explicit path: the spec's author chose it
	}
	if p, err := exec.LookPath(argv0); err == nil && hasIPyKernel(ctx, p) {
		return p, nil
	}
	if _, err := os.Stat(systemPython); err == nil && hasIPyKernel(ctx, systemPython) {
		return systemPython, nil
	}
	return "", fmt.Errorf("%q on PATH cannot import ipykernel and neither can %s: install ipykernel or pass LaunchOptions.Python", argv0, systemPython)
}
