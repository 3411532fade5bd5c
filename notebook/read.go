package notebook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Read loads a notebook file: .ipynb as nbformat 4 JSON, .py as a percent-format script.
// The notebook's URI is path as given; cell IDs are "cell-<index>".
func Read(path string) (*Notebook, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".ipynb" && ext != ".py" {
		return nil, fmt.Errorf("read notebook %s: unsupported file type %q, want .ipynb or a percent-format .py", path, ext)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read notebook: %w", err)
	}
	if ext == ".py" {
		return ParsePercent(string(data), path), nil
	}
	return ParseIpynb(data, path)
}
