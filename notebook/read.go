package notebook

import (
	"fmt"
	"github.com/premortem/premortem/internal/smallfile"
	"os"
	"path/filepath"
	"strings"
)

// MaxFileSize bounds a notebook file premortem reads from a path a user gave (outputs with
// images make notebooks large; a gigabyte is still one the machine can parse).
const MaxFileSize = 1 << 30

// ReadFile reads a notebook file's bytes from a path a user gave, bounded: a FIFO, device
// or directory is refused before it is opened, a file past MaxFileSize is refused, and an
// open that hangs (a dead network mount) gives up. Parse decodes them.
func ReadFile(path string) ([]byte, error) { return smallfile.Read(path, MaxFileSize) }

// Read loads a notebook file: .ipynb as nbformat 4 JSON, .py as a percent-format script.
// The notebook's URI is path as given; cell IDs are "cell-<index>". It reads the whole
// file, whatever it is: for a path a user typed, use ReadFile and Parse.
func Read(path string) (*Notebook, error) {
	if err := checkExt(path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read notebook: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a notebook file's content read from path, by path's extension as Read does.
func Parse(data []byte, path string) (*Notebook, error) {
	if err := checkExt(path); err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".py") {
		return ParsePercent(string(data), path), nil
	}
	return ParseIpynb(data, path)
}

// checkExt refuses files that are neither .ipynb nor .py before anything reads them.
func checkExt(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".ipynb" && ext != ".py" {
		return fmt.Errorf("read notebook %s: unsupported file type %q, want .ipynb or a percent-format .py", path, ext)
	}
	return nil
}
