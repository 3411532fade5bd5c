//go:build unix

package smallfile

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

// TestRead: regular files up to the limit are read whole; anything else is refused
// with a message naming the file and what it is, without blocking (a FIFO with no writer)
// and without reading without end (/dev/zero).
func TestRead(t *testing.T) {
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
			data, err := Read(tt.path, 64)
			if tt.refused == "" {
				if err != nil || len(data) != tt.wantLen {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(data), err, tt.wantLen)
				}
				return
			}
			if err == nil {
				t.Fatalf("read %d bytes, want an error containing %q", len(data), tt.refused)
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q: want ErrRefused naming %s and saying %q", err, tt.path, tt.refused)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := Read(filepath.Join(dir, "none.json"), 64); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v, want fs.ErrNotExist", err)
		}
	})
}

// TestReadHungOpen: an open that never returns (a dead network mount) gives up
// with a message instead of hanging its caller.
func TestReadHungOpen(t *testing.T) {
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
	_, err := Read(p, 64)
	if err == nil || !strings.Contains(err.Error(), "did not finish") || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v, want a timeout naming the file", err)
	}
}
