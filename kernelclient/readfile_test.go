//go:build unix

package kernelclient

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadSmallFile: regular files up to the limit are read whole; anything else is refused
// with a message naming the file and what it is, without blocking (a FIFO with no writer)
// and without reading without end (/dev/zero).
func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small.json", 10)
	exact := write("exact.json", 64)
	big := write("big.json", 65)
	fifo := filepath.Join(dir, "kernel-fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "kernel-zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantLen int
		refused string // substring of the error; "" for success
	}{
		{"small regular file", small, 10, ""},
		{"exactly the limit", exact, 64, ""},
		{"one byte over", big, 0, "more than the 64 bytes"},
		{"directory", dir, 0, "is a directory"},
		{"fifo without writer", fifo, 0, "is a FIFO"},
		{"/dev/zero", "/dev/zero", 0, "is a character device"},
		{"/dev/urandom", "/dev/urandom", 0, "is a character device"},
		{"symlink to /dev/zero", link, 0, "is a character device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReadSmallFile(tt.path, 64)
			if tt.refused == "" {
				if err != nil || len(data) != tt.wantLen {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(data), err, tt.wantLen)
				}
				return
			}
			if err == nil {
				t.Fatalf("read %d bytes, want an error containing %q", len(data), tt.refused)
			}
			if !errors.Is(err, ErrFileRefused) || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q: want ErrFileRefused naming %s and saying %q", err, tt.path, tt.refused)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := ReadSmallFile(filepath.Join(dir, "none.json"), 64); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v, want fs.ErrNotExist", err)
		}
	})
}

// TestReadSmallFileHungOpen: an open that never returns (a dead network mount) gives up
// with a message instead of hanging its caller.
func TestReadSmallFileHungOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kernel-1.json")
	if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	oldOpen, oldTimeout := openForRead, openTimeout
	openForRead = func(path string) (*os.File, error) {
		<-release
		return nil, errors.New("released")
	}
	openTimeout = 100 * time.Millisecond
	defer func() { openForRead, openTimeout = oldOpen, oldTimeout }()
	_, err := ReadSmallFile(p, 64)
	if err == nil || !strings.Contains(err.Error(), "did not finish") || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v, want a timeout naming the file", err)
	}
}

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
