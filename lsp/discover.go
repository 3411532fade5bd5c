package lsp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/premortem/premortem/kernelclient"
)

// connected is a kernel connection with what the status bar and messages say about it.
type connected struct {
	k kernelclient.Kernel
	// name is the short display name ("python3 (pid 1234)", or the file's base name).
	name string
	// file is the connection file, or the kernel's URL on a Jupyter Server.
	file string
	// label says where it came from, for messages ("/run/kernel-1.json (found by vscode)").
	label string
	// detail is one line for the status tooltip.
	detail string
}

// discoverTimeout bounds a whole discovery (every kernel is probed in parallel, 2 s each).
const discoverTimeout = 8 * time.Second

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

// discoverAll lists the running kernels in the runtime directories (rt.dirs; nil: every
// Jupyter runtime directory), bounded by discoverTimeout.
func (rt *runtimeLayer) discoverAll(ctx context.Context) ([]kernelclient.Discovered, error) {
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	found, err := kernelclient.DiscoverWith(ctx, kernelclient.DiscoverOptions{Dirs: rt.dirs})
	if err != nil && len(found) == 0 {
		return nil, fmt.Errorf("discover kernels: %w", err)
	}
	return found, nil
}

// discoverKernel finds the running kernel that serves the notebook at nbPath (VS Code's
// __vsc_ipynb_file__, JupyterLab's __session__ or a Jupyter Server session) and connects
// to it: over ZeroMQ when its connection file is readable here, else through the Jupyter
// Server that manages it.
func (rt *runtimeLayer) discoverKernel(ctx context.Context, nbPath string) (*connected, error) {
	if nbPath == "" {
		return nil, fmt.Errorf("%w; %s", errNotLocal, attachHint)
	}
	found, err := rt.discoverAll(ctx)
	if err != nil {
		return nil, err
	}
	m, err := kernelclient.MatchNotebook(found, nbPath)
	if err != nil {
		return nil, err
	}
	k, err := kernelclient.ConnectDiscovered(ctx, *m)
	if err != nil {
		return nil, fmt.Errorf("connect to the kernel of %s: %w", nbPath, err)
	}
	c := &connected{k: k, file: m.ConnectionFile}
	via := m.NotebookFrom
	if m.ConnectionFile == "" && m.Server != nil {
		c.file = serverKernelURL(m.Server.URL, m.KernelID)
		via = "Jupyter Server " + m.Server.URL
	}
	c.label = fmt.Sprintf("%s (found by %s)", c.file, via)
	c.detail = "found by " + via + " for " + filepath.Base(nbPath)
	c.name = displayName(k, kernelNameOf(m.ConnectionFile), c.file, m.PID)
	return c, nil
}

// connectTarget connects to what the user named: a connection file path (or file:// URI),
// or a kernel on a Jupyter Server as http(s)://host/…/api/kernels/ID (what
// premortem.server.listKernels returns for kernels known only to a server; the token comes
// from ?token= or from the server's info file in the runtime directories).
func (rt *runtimeLayer) connectTarget(ctx context.Context, target string) (*connected, error) {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return rt.connectServerURL(ctx, target)
	}
	path := target
	if strings.HasPrefix(path, "file:") {
		if p := notebookPath(path); p != "" {
			path = p
		}
	}
	ci, err := kernelclient.ReadConnectionFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot attach to the kernel of %s: %w", path, err)
	}
	k, err := kernelclient.Connect(ctx, ci)
	if err != nil {
		return nil, fmt.Errorf("cannot attach to the kernel of %s: %w", path, err)
	}
	return &connected{k: k, file: path, label: path, name: displayName(k, ci.KernelName, path, 0)}, nil
}

// connectServerURL connects to a kernel given as its URL on a Jupyter Server.
func (rt *runtimeLayer) connectServerURL(ctx context.Context, raw string) (*connected, error) {
	base, id, token, err := parseServerKernelURL(raw)
	if err != nil {
		return nil, err
	}
	if token == "" {
		// The list handed out the URL without the token: find it in the server's info file.
		if found, err := rt.discoverAll(ctx); err == nil {
			for _, d := range found {
				if d.Server != nil && d.KernelID == id && sameServer(d.Server.URL, base) {
					token = d.Server.Token
					break
				}
			}
		}
	}
	k, err := kernelclient.ConnectServer(ctx, base, token, id)
	if err != nil {
		return nil, fmt.Errorf("cannot attach to kernel %s on %s: %w", id, base, err)
	}
	file := serverKernelURL(base, id)
	return &connected{k: k, file: file, label: file, name: displayName(k, "", file, 0), detail: "through Jupyter Server " + base}, nil
}

// serverKernelURL is how a kernel known only to a Jupyter Server is named to the client.
func serverKernelURL(base, id string) string {
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base + "api/kernels/" + id
}

// parseServerKernelURL splits http://host/prefix/api/kernels/ID?token=T.
func parseServerKernelURL(raw string) (base, id, token string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("kernel URL %q: %w", raw, err)
	}
	prefix, rest, ok := strings.Cut(u.Path, "/api/kernels/")
	id = strings.Trim(rest, "/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", "", "", fmt.Errorf("kernel URL %q: want http(s)://host/api/kernels/KERNEL_ID", raw)
	}
	token = u.Query().Get("token")
	u.Path, u.RawQuery, u.Fragment, u.RawPath = prefix+"/", "", "", ""
	return u.String(), id, token, nil
}

// sameServer compares server base URLs, ignoring a trailing slash.
func sameServer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// kernelNameOf reads the kernelspec name ("python3") from a connection file, "" when it
// has none.
func kernelNameOf(path string) string {
	if path == "" {
		return ""
	}
	ci, err := kernelclient.ReadConnectionFile(path)
	if err != nil {
		return ""
	}
	return ci.KernelName
}

// whoAmI is implemented by kernelclient.Client: the kernel process's pid and cwd.
type whoAmI interface {
	WhoAmI(ctx context.Context) (*kernelclient.WhoAmI, error)
}

// displayName is the kernel's short name: "python3 (pid 1234)", falling back to the
// connection file's base name. The pid is asked of an idle kernel with a short deadline.
func displayName(k kernelclient.Kernel, specName, file string, pid int) string {
	name := specName
	if name == "" {
		name = filepath.Base(file)
		if strings.Contains(file, "/api/kernels/") {
			name = "kernel " + shortID(filepath.Base(file))
		}
	}
	if pid == 0 {
		if w, ok := k.(whoAmI); ok && k.State() != kernelclient.StateBusy {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if info, err := w.WhoAmI(ctx); err == nil {
				pid = info.PID
			}
			cancel()
		}
	}
	if pid > 0 {
		return fmt.Sprintf("%s (pid %d)", name, pid)
	}
	return name
}

// shortID shortens a kernel id for display.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// KernelEntry is one running kernel as premortem.server.listKernels returns it (the
// fields the VS Code extension's attach picker shows).
type KernelEntry struct {
	// ConnectionFile is the kernel-*.json path, or the kernel's URL on its Jupyter Server
	// (http://host/api/kernels/ID, without the token) when no connection file is readable
	// here; both are accepted by premortem.server.attachKernel.
	ConnectionFile string `json:"connectionFile"`
	Name           string `json:"name,omitempty"`
	PID            int    `json:"pid,omitempty"`
	State          string `json:"state,omitempty"`
	// Notebook is the path of the notebook the kernel serves, when known.
	Notebook string `json:"notebook,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// kernelEntries converts discovery results for the client.
func kernelEntries(found []kernelclient.Discovered) []KernelEntry {
	out := []KernelEntry{}
	for _, d := range found {
		e := KernelEntry{ConnectionFile: d.ConnectionFile, PID: d.PID, State: string(d.State), Notebook: d.Notebook, Name: kernelNameOf(d.ConnectionFile)}
		var detail []string
		if d.ConnectionFile == "" {
			if d.Server == nil || d.KernelID == "" {
				continue
			}
			e.ConnectionFile = serverKernelURL(d.Server.URL, d.KernelID)
			detail = append(detail, "kernel "+shortID(d.KernelID)+" on Jupyter Server "+d.Server.URL)
		} else {
			detail = append(detail, d.ConnectionFile)
		}
		if e.Name == "" {
			// As displayName names it once attached.
			e.Name = filepath.Base(e.ConnectionFile)
			if d.ConnectionFile == "" {
				e.Name = "kernel " + shortID(d.KernelID)
			}
		}
		if d.NotebookFrom != "" && d.Notebook != "" {
			detail = append(detail, "notebook found by "+d.NotebookFrom)
		}
		if d.Cwd != "" {
			detail = append(detail, "cwd "+d.Cwd)
		}
		if d.Skipped != "" {
			detail = append(detail, "unusable: "+d.Skipped)
		}
		e.Detail = strings.Join(detail, " · ")
		out = append(out, e)
	}
	return out
}

// errNotLocal: discovery needs the notebook's path.
var errNotLocal = errors.New("the notebook is not a local file, so its kernel cannot be found")

// errNoMatch reports whether err only says that discovery found no kernel for the
// notebook (the usual case before the user starts one; not a failure worth a warning).
func errNoMatch(err error) bool {
	return errors.Is(err, kernelclient.ErrNoMatch) || errors.Is(err, errNotLocal)
}
