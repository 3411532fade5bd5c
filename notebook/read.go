package notebook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Read loads a notebook file: .ipynb as nbformat 4 JSON, .py as a percent-format script.
// The notebook's URI is path as given; cell IDs are "cell-<index>". It reads the whole
// file, whatever it is: for a path a user typed, read it with bounds first
// (kernelclient.ReadSmallFile) and call Parse.
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
