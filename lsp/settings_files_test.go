//go:build unix

package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConnectionFileSettingRefusesNonFiles: premortem.kernel.connectionFile set to a device
// (which would be read without end) or a FIFO (whose open would block) gives the notebook
// status "error" at once, and a message that names the file and says what it is, instead
// of running out of memory or staying "connecting".
func TestConnectionFileSettingRefusesNonFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kernel-fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "kernel-big.json")
	if err := os.WriteFile(big, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ file, says string }{
		{"/dev/zero", "is a character device, not a regular file"},
		{"/dev/urandom", "is a character device, not a regular file"},
		{fifo, "is a FIFO (named pipe), not a regular file"},
		{filepath.Dir(fifo), "is a directory, not a regular file"},
		{big, "is 1.0 MiB, more than the 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			c, _ := startInProcess(t)
			c.initialize(map[string]any{"debounce": 10, "kernel": map[string]any{"autoAttach": false, "connectionFile": tt.file}})
			uri := "file://" + nbPath
			c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "x = 1"}))
			st := c.waitStatus(uri, StatusError)
			if !strings.Contains(st.Detail, tt.file) || !strings.Contains(st.Detail, tt.says) || !strings.Contains(st.Detail, "kernel-*.json") {
				t.Errorf("status detail %q: want the file, %q and what to point at instead", st.Detail, tt.says)
			}
			c.wait("the message shown to the user", func() bool {
				return strings.Contains(strings.Join(c.shown, "\n"), tt.says)
			})
			// The server still answers: the static layer goes on.
			c.waitDiags(cellURI(nbPath, 0), "[]")
		})
	}
}
