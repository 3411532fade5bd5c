//go:build unix

package kernelclient

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiscoveryRefusesNonFiles: a FIFO, a device or an oversized file among the runtime
// directory's kernel-*.json, jpserver-*.json and nbserver-*.json files, or as a kernelspec's
// kernel.json, is skipped with the reason, without blocking discovery or reading without
// end.
func TestDiscoveryRefusesNonFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kernel-fifo.json", "jpserver-fifo.json"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "kernel-zero.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nbserver-big.json"), make([]byte, MaxServerInfoSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := DiscoverWith(ctxT(t, 30*time.Second), DiscoverOptions{Dirs: []string{dir}, NoIdentify: true, IncludeSkipped: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"kernel-fifo.json":   "is a FIFO (named pipe), not a regular file",
		"jpserver-fifo.json": "is a FIFO (named pipe), not a regular file",
		"kernel-zero.json":   "is a character device, not a regular file",
		"nbserver-big.json":  "more than the 64 KiB",
	}
	for name, says := range want {
		ok := false
		for _, d := range found {
			if strings.Contains(d.Skipped, filepath.Join(dir, name)) && strings.Contains(d.Skipped, says) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: no skipped entry saying %q in %+v", name, says, found)
		}
	}

	specs := t.TempDir()
	for _, name := range []string{"fifo", "zero"} {
		if err := os.MkdirAll(filepath.Join(specs, "kernels", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(specs, "kernels", "fifo", "kernel.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(specs, "kernels", "zero", "kernel.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := readKernelSpec(filepath.Join(specs, "kernels", "fifo")); err == nil || !strings.Contains(err.Error(), "is a FIFO") || !strings.Contains(err.Error(), "jupyter kernelspec list") {
		t.Errorf("FIFO kernel.json: %v", err)
	}
	t.Setenv("JUPYTER_PATH", specs)
	all, _ := FindKernelSpecs()
	for _, s := range all {
		if s.Name == "fifo" || s.Name == "zero" {
			t.Errorf("kernelspec %q listed from a kernel.json that is not a file", s.Name)
		}
	}
}
