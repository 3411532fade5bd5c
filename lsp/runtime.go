package lsp

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is the glue between a document and its kernel: the runtime layer's state (the
// attachments, attach.go), the judge a pass runs with, waiting for a busy kernel, and the
// runtime facts a hover shows. The layers run in package judge's pipeline (layers.go
// calls it); attaching and following kernels is attach.go.

// hoverInspectBudget bounds a live inspection made for a hover.
const hoverInspectBudget = 300 * time.Millisecond

// attachTimeout bounds connecting to a kernel (discovery included).
const attachTimeout = 15 * time.Second

// rediscoverEvery is the least time between two discoveries for a notebook without a
// kernel, retried when the client reports a run (the user started a kernel).
const rediscoverEvery = 10 * time.Second

// runtimeLayer holds the kernel attachments of the server's documents.
type runtimeLayer struct {
	s *Server

	mu  sync.Mutex
	att map[string]*attachment // by document URI
	// lastStatus is the last premortem/status sent per document URI.
	lastStatus map[string]KernelStatus
	// shownErrors are the attach failures already shown with showMessage (by text), so
	// several notebooks failing on the same configured file pop up once.
	shownErrors map[string]bool
	// lastDiscovery is when discovery last ran for a notebook without a kernel.
	lastDiscovery map[string]time.Time
	closed        bool

	// sendMu orders status notifications (see sendStatus).
	sendMu sync.Mutex

	llm *llmLayer
	// dirs are the runtime directories discovery scans (nil: kernelclient.RuntimeDirs()).
	dirs []string
	// discover finds and connects the kernel of a notebook path (tests may replace it).
	discover func(ctx context.Context, nbPath string) (*connected, error)
	// rediscoverEvery is rediscoverEvery (tests shorten it).
	rediscoverEvery time.Duration
	// reattachEvery is reattachEvery (tests shorten it).
	reattachEvery time.Duration
	// checked, when set, is told of every pass whose kernel layers ran to their end (not
	// cancelled): tests wait for the pipeline's last answer with it.
	checked func(p *pass)
}

func newRuntimeLayer(s *Server) *runtimeLayer {
	rt := &runtimeLayer{
		s: s, att: map[string]*attachment{}, lastStatus: map[string]KernelStatus{},
		shownErrors: map[string]bool{}, lastDiscovery: map[string]time.Time{}, llm: newLLMLayer(s),
		rediscoverEvery: rediscoverEvery, reattachEvery: reattachEvery,
	}
	rt.discover = rt.discoverKernel
	return rt
}

// attachmentFor returns the document's kernel, nil when none is attached.
func (rt *runtimeLayer) attachmentFor(d *document) *attachment {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	a := rt.att[d.uri]
	if a != nil && a.isDead() {
		return nil
	}
	return a
}

// attachmentAt returns the document's kernel (nil when none is attached) and the Session
// epoch it belongs to, read together: a pass given both stores nothing once the kernel it
// took is swapped for another (adopt and detach change both under rt.mu).
func (rt *runtimeLayer) attachmentAt(d *document) (*attachment, int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	a := rt.att[d.uri]
	if a != nil && a.isDead() {
		a = nil
	}
	return a, d.sess.Epoch()
}

// epochOf is the Session epoch of d's kernel when a is still that kernel; ok is false when
// another one (or none) has been attached since a was taken.
func (rt *runtimeLayer) epochOf(d *document, a *attachment) (epoch int, ok bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return d.sess.Epoch(), rt.att[d.uri] == a
}

// wanted reports whether the kernel layers have anything to do for d.
func (rt *runtimeLayer) wanted(d *document, settings Settings) bool {
	return rt.attachmentFor(d) != nil || rt.llm.active(settings)
}

// close detaches everything.
func (rt *runtimeLayer) close() {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return
	}
	rt.closed = true
	seen := map[*attachment]bool{}
	for _, a := range rt.att {
		seen[a] = true
	}
	rt.att = map[string]*attachment{}
	rt.mu.Unlock()
	for a := range seen {
		a.close()
	}
}

func (rt *runtimeLayer) recoverTo(what string) {
	if r := recover(); r != nil {
		rt.s.tracef("panic while %s: %v\n%s", what, r, debug.Stack())
		rt.s.logf(protocol.MessageTypeError, "internal error while %s: %v", what, r)
	}
}

// judgeFor builds the judge of a pass.
func (rt *runtimeLayer) judgeFor(a *attachment, settings Settings, shadowMode string) *judge.Judge {
	// The command line's defaults, with what the editor's settings choose (long runs stay
	// off in the editor: see judge.Options.ShadowLongRuns).
	o := judge.DefaultOptions()
	o.Rules, o.Shadow = settings.Rules.Enabled, shadowMode
	o.ShadowTimeout, o.ShadowFullTimeout = settings.Shadow.Timeout.D(), settings.Shadow.FullTimeout.D()
	o.DevRunCap, o.ShadowSandbox, o.ShadowTensors = settings.Shadow.FastDevRun, settings.Shadow.Sandbox, settings.Shadow.Tensors
	j := &judge.Judge{Options: o}
	if a != nil {
		j.Kernel = a.k
	}
	return j
}

func (rt *runtimeLayer) waitIdle(a *attachment) {
	a.mu.Lock()
	a.waitingIdle = true
	a.mu.Unlock()
	// The idle event may have come between the busy state and now: check again.
	if a.k.State() == kernelclient.StateIdle {
		a.mu.Lock()
		a.waitingIdle = false
		a.mu.Unlock()
		rt.rescheduleFor(a, false)
	}
}

// value returns the runtime facts of a name for a hover: from the cell's cached
// inspection when it has them, else from a quick live inspection when the kernel is idle.
func (rt *runtimeLayer) value(ctx context.Context, d *document, c *notebook.Cell, name string) (facts.Value, int, bool) {
	if insp := d.sess.Inspection(c); insp != nil {
		if v, ok := insp.Values[name]; ok {
			return v, insp.ExecutionCount, true
		}
	}
	a := rt.attachmentFor(d)
	if a == nil || a.k.State() == kernelclient.StateBusy {
		return facts.Value{}, 0, false // a hover never waits for a request in flight
	}
	v, count, ok, err := judge.Value(ctx, a.k, name, hoverInspectBudget)
	if err != nil {
		rt.s.tracef("hover: %v", err)
	}
	return v, count, ok
}

// status says in words whether a kernel is attached, for hovers.
func (rt *runtimeLayer) status(d *document) string {
	rt.mu.Lock()
	a := rt.att[d.uri]
	rt.mu.Unlock()
	if a == nil {
		return "premortem: no kernel attached (static checks only; " + attachHint + ")"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead != "" {
		return fmt.Sprintf("premortem: kernel %s lost (%s)", a.label, a.dead)
	}
	if a.execCount > 0 {
		return fmt.Sprintf("premortem: kernel %s attached, as of run %d", a.label, a.execCount)
	}
	return fmt.Sprintf("premortem: kernel %s attached", a.label)
}
