package lsp

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/premortem/premortem/kernelclient"
)

// notebookPath turns a notebook's file URI into a file system path ("" for other schemes).
// It uses net/url, not go.lsp.dev/uri, which mangles non-file URIs.
func notebookPath(uri string) string {
	if !strings.HasPrefix(uri, "file:") {
		return ""
	}
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return u.Path
}

// discoverKernel finds the running kernel that serves the notebook at nbPath (VS Code's
// __vsc_ipynb_file__, JupyterLab's __session__ or a Jupyter Server session) and connects
// to it.
func discoverKernel(ctx context.Context, nbPath string) (kernelclient.Kernel, string, error) {
	if nbPath == "" {
		return nil, "", fmt.Errorf("the notebook is not a local file: set premortem.kernel.connectionFile or run premortem.attachKernel with a connection file")
	}
	found, err := kernelclient.Discover(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("discover kernels: %w", err)
	}
	m, err := kernelclient.MatchNotebook(found, nbPath)
	if err != nil {
		return nil, "", err
	}
	if m.ConnectionFile == "" {
		return nil, "", fmt.Errorf("the kernel of %s is known only to a Jupyter Server (%s); attach with its connection file", nbPath, m.KernelID)
	}
	k, err := kernelclient.ConnectFile(ctx, m.ConnectionFile)
	if err != nil {
		return nil, "", fmt.Errorf("connect to the kernel of %s: %w", nbPath, err)
	}
	return k, fmt.Sprintf("%s (found by %s)", m.ConnectionFile, m.NotebookFrom), nil
}
