package kernelclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/premortem/premortem/internal/smallfile"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Discovered is a running kernel found on this machine (or through a local Jupyter Server).
type Discovered struct {
	// ConnectionFile is the kernel-*.json path ("" for a kernel known only to a server).
	ConnectionFile string `json:"connection_file,omitempty"`
	// KernelID is the id in the file name (kernel-<id>.json) or the server's kernel id.
	KernelID string `json:"kernel_id,omitempty"`
	// Notebook is the notebook path the kernel serves, when known.
	Notebook string `json:"notebook,omitempty"`
	// NotebookFrom says how Notebook was learned: "vscode" (__vsc_ipynb_file__),
	// "session" (__session__, JupyterLab) or "server" (Jupyter Server /api/sessions).
	NotebookFrom string `json:"notebook_from,omitempty"`
	// State is the execution state seen when probing.
	State State `json:"state"`
	// Cwd and PID of the kernel process, when it answered.
	Cwd string `json:"cwd,omitempty"`
	PID int    `json:"pid,omitempty"`
	// Server is the Jupyter Server that manages the kernel, if any.
	Server *ServerInfo `json:"server,omitempty"`
	// Skipped says why the kernel is not usable (stale or malformed file, no answer); such
	// entries are returned only with DiscoverOptions.IncludeSkipped.
	Skipped string `json:"skipped,omitempty"`
	// ModTime of the connection file (newest wins when several kernels match a notebook).
	ModTime time.Time `json:"mod_time,omitempty"`
}

// ServerInfo is a Jupyter Server (jpserver-*.json) or classic notebook server
// (nbserver-*.json) info file.
type ServerInfo struct {
	File    string `json:"file"`
	URL     string `json:"url"`
	Token   string `json:"-"`
	RootDir string `json:"root_dir,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// DiscoverOptions tune DiscoverWith.
type DiscoverOptions struct {
	// Dirs to scan (default RuntimeDirs()).
	Dirs []string
	// IncludeSkipped also returns dead or unusable kernels, with Skipped set.
	IncludeSkipped bool
	// ProbeTimeout bounds each kernel's liveness probe and question (default 2 s).
	ProbeTimeout time.Duration
	// NoIdentify skips connecting to live kernels to ask which notebook they serve.
	NoIdentify bool
}

// Discover finds the running kernels in every runtime directory, skipping dead ones, with
// the notebook each serves when it can be learned.
func Discover(ctx context.Context) ([]Discovered, error) {
	return DiscoverWith(ctx, DiscoverOptions{})
}

// DiscoverWith is Discover with options.
func DiscoverWith(ctx context.Context, opts DiscoverOptions) ([]Discovered, error) {
	if opts.Dirs == nil {
		opts.Dirs = RuntimeDirs()
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 2 * time.Second
	}
	var kernelFiles, serverFiles []string
	for _, d := range opts.Dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".json") {
				continue
			}
			switch {
			case strings.HasPrefix(name, "kernel-"):
				kernelFiles = append(kernelFiles, filepath.Join(d, name))
			case strings.HasPrefix(name, "jpserver-"), strings.HasPrefix(name, "nbserver-"):
				serverFiles = append(serverFiles, filepath.Join(d, name))
			}
		}
	}
	kernelFiles = dedupe(kernelFiles)

	// Servers first: their sessions name the notebooks of their kernels.
	type serverKernel struct {
		server   *ServerInfo
		notebook string
		state    string
	}
	byID := map[string]serverKernel{}
	var skippedServers []Discovered
	for _, f := range serverFiles {
		si, err := readServerInfo(f)
		if err != nil {
			skippedServers = append(skippedServers, Discovered{Skipped: err.Error(), State: StateDead})
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
		sessions, err := listSessions(sctx, si)
		cancel()
		if err != nil {
			skippedServers = append(skippedServers, Discovered{Server: si, Skipped: fmt.Sprintf("server %s: %v", si.URL, err), State: StateDead})
			continue
		}
		for _, s := range sessions {
			nb := s.Path
			if si.RootDir != "" && !filepath.IsAbs(nb) {
				nb = filepath.Join(si.RootDir, filepath.FromSlash(nb))
			}
			byID[s.Kernel.ID] = serverKernel{server: si, notebook: nb, state: s.Kernel.ExecutionState}
		}
	}

	results := make([]Discovered, len(kernelFiles))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, f := range kernelFiles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = probeKernelFile(ctx, f, opts)
		}()
	}
	wg.Wait()

	var out []Discovered
	seenIDs := map[string]bool{}
	for _, d := range results {
		if sk, ok := byID[d.KernelID]; ok {
			seenIDs[d.KernelID] = true
			d.Server = sk.server
			if d.Notebook == "" || d.NotebookFrom != "vscode" {
				d.Notebook, d.NotebookFrom = sk.notebook, "server"
			}
		}
		if d.Skipped != "" && !opts.IncludeSkipped {
			continue
		}
		out = append(out, d)
	}
	// Kernels a server manages whose connection file we cannot see (another runtime dir,
	// another machine behind the server): reachable with ConnectServer.
	for id, sk := range byID {
		if seenIDs[id] {
			continue
		}
		out = append(out, Discovered{KernelID: id, Notebook: sk.notebook, NotebookFrom: "server", State: State(sk.state), Server: sk.server})
	}
	if opts.IncludeSkipped {
		out = append(out, skippedServers...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Skipped == "") != (out[j].Skipped == "") {
			return out[i].Skipped == ""
		}
		return out[i].ModTime.After(out[j].ModTime)
	})
	return out, ctx.Err()
}

// kernelIDFromFile extracts <id> from kernel-<id>.json.
func kernelIDFromFile(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(strings.TrimPrefix(base, "kernel-"), ".json")
}

// probeKernelFile reads one connection file, checks the heartbeat and asks the kernel which
// notebook it serves.
func probeKernelFile(ctx context.Context, path string, opts DiscoverOptions) Discovered {
	d := Discovered{ConnectionFile: path, KernelID: kernelIDFromFile(path), State: StateUnknown}
	if st, err := os.Stat(path); err == nil {
		d.ModTime = st.ModTime()
	}
	ci, err := ReadConnectionFile(path)
	if err != nil {
		d.Skipped, d.State = err.Error(), StateDead
		return d
	}
	pctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
	defer cancel()
	if err := ProbeHeartbeat(pctx, ci); err != nil {
		d.Skipped = (&ConnectionFileError{Path: path, Reason: ReasonStale, Err: err}).Error()
		d.State = StateDead
		return d
	}
	d.State = StateIdle
	if opts.NoIdentify {
		return d
	}
	c, err := Connect(pctx, ci)
	if err != nil {
		d.Skipped = err.Error()
		d.State = StateUnknown
		return d
	}
	defer c.Close()
	w, err := c.WhoAmI(pctx)
	d.State = c.State()
	if err != nil {
		// A busy kernel cannot say; it is still a live kernel.
		return d
	}
	d.Cwd, d.PID = w.Cwd, w.PID
	switch {
	case w.VSCodeNotebook != "":
		d.Notebook, d.NotebookFrom = w.VSCodeNotebook, "vscode"
	case w.Session != "":
		d.Notebook, d.NotebookFrom = w.Session, "session"
	}
	return d
}

// ProbeHeartbeat checks that a kernel answers on its heartbeat channel, without opening the
// other channels. It returns ErrStale (wrapped) when nothing answers before ctx ends.
func ProbeHeartbeat(ctx context.Context, ci ConnectionInfo) error {
	if err := ci.Validate(); err != nil {
		return err
	}
	life, cancel := context.WithCancel(context.Background())
	defer cancel()
	sock := zmq4.NewDealer(life, zmq4.WithLogger(quietLogger), zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(time.Second))
	defer sock.Close()
	errc := make(chan error, 1)
	payload := []byte("premortem-probe-" + newID())
	go func() {
		if err := sock.Dial(ci.endpoint(ci.HBPort)); err != nil {
			errc <- err
			return
		}
		if err := sock.SendMulti(zmq4.NewMsgFrom([]byte{}, payload)); err != nil {
			errc <- err
			return
		}
		for {
			msg, err := sock.Recv()
			if err != nil {
				errc <- err
				return
			}
			if n := len(msg.Frames); n > 0 && bytes.Equal(msg.Frames[n-1], payload) {
				errc <- nil
				return
			}
		}
	}()
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("%w: heartbeat: %v", ErrStale, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: no heartbeat answer: %v", ErrStale, ctx.Err())
	}
}

// ErrNoMatch: no discovered kernel serves the notebook.
var ErrNoMatch = errors.New("no running kernel serves this notebook")

// MatchNotebook returns the discovered kernel serving notebookPath (compared as cleaned
// absolute paths, symlinks resolved; newest connection file first when several match).
func MatchNotebook(discovered []Discovered, notebookPath string) (*Discovered, error) {
	want := canonicalPath(notebookPath)
	var best *Discovered
	for i := range discovered {
		d := &discovered[i]
		if d.Skipped != "" || d.Notebook == "" || canonicalPath(d.Notebook) != want {
			continue
		}
		if best == nil || d.ModTime.After(best.ModTime) || (best.ConnectionFile == "" && d.ConnectionFile != "") {
			best = d
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: %s (open it in Jupyter or VS Code, or pass a connection file)", ErrNoMatch, notebookPath)
	}
	return best, nil
}

// canonicalPath makes paths comparable: absolute, clean, symlinks resolved when possible,
// case-folded on case-insensitive platforms.
func canonicalPath(p string) string {
	if strings.HasPrefix(p, "file://") {
		p = strings.TrimPrefix(p, "file://")
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	p = filepath.Clean(p)
	if caseInsensitiveFS {
		p = strings.ToLower(p)
	}
	return p
}

// readServerInfo reads a jpserver-*.json / nbserver-*.json file.
func readServerInfo(path string) (*ServerInfo, error) {
	data, err := smallfile.Read(path, MaxServerInfoSize)
	if err != nil {
		return nil, fmt.Errorf("server file %s: %w (a Jupyter server writes a small JSON file here; remove what is not one)", path, err)
	}
	var raw struct {
		URL         string `json:"url"`
		Token       string `json:"token"`
		RootDir     string `json:"root_dir"`
		NotebookDir string `json:"notebook_dir"`
		PID         int    `json:"pid"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("server file %s: %s: %w", path, ReasonMalformed, err)
	}
	if raw.URL == "" {
		return nil, fmt.Errorf("server file %s: %s: no url", path, ReasonIncomplete)
	}
	si := &ServerInfo{File: path, URL: raw.URL, Token: raw.Token, RootDir: raw.RootDir, PID: raw.PID}
	if si.RootDir == "" {
		si.RootDir = raw.NotebookDir
	}
	return si, nil
}

// ConnectDiscovered connects to a discovered kernel: over ZeroMQ when its connection file is
// readable here, else through its Jupyter Server.
func ConnectDiscovered(ctx context.Context, d Discovered) (*Client, error) {
	if d.ConnectionFile != "" {
		return ConnectFile(ctx, d.ConnectionFile)
	}
	if d.Server != nil && d.KernelID != "" {
		return ConnectServer(ctx, d.Server.URL, d.Server.Token, d.KernelID)
	}
	return nil, fmt.Errorf("discovered kernel %q has neither a connection file nor a server", d.KernelID)
}
