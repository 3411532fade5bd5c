package lsp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// This file is the kernel-backed part of a pass: attaching to the notebook's kernel,
// re-checking cells with runtime rules after every run, shadow runs and the LLM. The
// layers themselves live in package judge; this file decides when to run them, caches
// their answers per cell text and kernel execution count, and publishes.

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
	j := &judge.Judge{Options: judge.Options{
		Rules:             settings.Rules.Enabled,
		Shadow:            shadowMode,
		ShadowTimeout:     settings.Shadow.Timeout.D(),
		Trace:             true,
		InspectBudget:     50 * time.Millisecond,
		DevRunCap:         settings.Shadow.FastDevRun,
		ShadowFullTimeout: settings.Shadow.FullTimeout.D(),
		ShadowSandbox:     settings.Shadow.Sandbox,
	}}
	if a != nil {
		j.Kernel = a.k
	}
	return j
}

// check runs the kernel-backed layers for a pass: rules for every code cell that has not
// run and whose cached answer is stale (the focus cell first), then a shadow run and the
// LLM for the focus cell. Each layer publishes as soon as it answers.
func (rt *runtimeLayer) check(ctx context.Context, p *pass, res *analysis.Result) {
	d, snap, settings := p.d, p.snap, p.settings
	a := rt.attachmentFor(d)
	if a != nil && settings.Rules.Enabled {
		if !rt.checkRules(ctx, p, a, res) {
			return
		}
	}
	focus := snap.Cell(p.focus)
	if focus == nil || focus.Kind != notebook.Code || focus.Executed() || ctx.Err() != nil {
		return
	}
	if a != nil && settings.Shadow.Mode != ShadowOff {
		// An explicit shadow run (the shadowRun command) takes precedence over this
		// automatic one: it is not started while one runs, and is cancelled when one
		// starts (shadowGate). The gate is held until the background full run ends too.
		if sctx, done, ok := a.shadow.beginAuto(ctx); ok {
			rt.shadow(sctx, p, a, res, focus, settings.Shadow.Mode, false, done)
		}
	}
	if rt.llm.active(settings) && ctx.Err() == nil {
		rt.llm.predict(ctx, p, a, res, focus)
	}
	// Last, once every layer's squiggle is out: prove the candidate fixes (verify.go).
	rt.verify(ctx, p, a, res, focus)
}

// checkRules inspects and runs the rules for stale cells: the focus cell alone first (the
// user is looking at it), then every other cell that has not run in one batched inspection,
// so a run in a long notebook costs one kernel round trip, not one per cell. It returns
// false when the pass must stop (cancelled, or the kernel is busy and the next idle event
// will retry).
func (rt *runtimeLayer) checkRules(ctx context.Context, p *pass, a *attachment, res *analysis.Result) bool {
	d, snap := p.d, p.snap
	count := a.executionCount()
	stale := func(c *notebook.Cell) bool {
		if c.Kind != notebook.Code || c.Executed() || res.Facts[c.ID] == nil {
			return false
		}
		l := d.layersFor(c)
		return l == nil || !l.checked || l.runID < count || p.force
	}
	var rest []*notebook.Cell
	for _, c := range snap.Cells {
		if c.ID != p.focus && stale(c) {
			rest = append(rest, c)
		}
	}
	if c := snap.Cell(p.focus); c != nil && stale(c) {
		if !rt.inspectAndCheck(ctx, p, a, res, []*notebook.Cell{c}, 50*time.Millisecond) {
			return false
		}
	}
	if len(rest) == 0 {
		return true
	}
	return rt.inspectAndCheck(ctx, p, a, res, rest, 150*time.Millisecond)
}

// inspectAndCheck takes one inspection of every name the cells need and runs the rules on
// each cell, then publishes.
func (rt *runtimeLayer) inspectAndCheck(ctx context.Context, p *pass, a *attachment, res *analysis.Result, cells []*notebook.Cell, budget time.Duration) bool {
	d := p.d
	if a.k.State() == kernelclient.StateBusy {
		rt.waitIdle(a)
		return false
	}
	count := a.executionCount()
	epoch := d.kernelEpoch()
	seen := map[string]bool{}
	var names []string
	for _, c := range cells {
		for _, n := range rules.Wanted(res.Facts[c.ID]) {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	start := time.Now()
	insp, err := a.k.Inspect(ctx, kernelclient.InspectRequest{Names: names, Budget: budget, Namespace: true})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return false
	case errors.Is(err, kernelclient.ErrBusy):
		rt.waitIdle(a)
		return false
	case errors.Is(err, kernelclient.ErrClosed), errors.Is(err, kernelclient.ErrRestarted):
		// Detached, or the kernel restarted under the request: follow handles both.
		return false
	case errors.Is(err, kernelclient.ErrDead):
		// markDead shows the one visible message of this death, whether the heartbeat or
		// this request noticed first.
		rt.markDead(a, "it died during an inspection: "+err.Error())
		return false
	default:
		for _, c := range cells {
			d.updateLayersAt(c, epoch, func(l *cellLayers) {
				l.checked, l.runID, l.notes = true, count, []string{"runtime facts unavailable: " + err.Error()}
			})
		}
		rt.s.logf(protocol.MessageTypeWarning, "runtime facts unavailable: %v", err)
		return true
	}
	a.sawCount(insp.ExecutionCount)
	env := &rules.Env{
		Values:         insp.Values,
		Namespace:      nameSet(insp.Namespace),
		Imported:       nameSet(insp.Imported),
		ExecutionCount: insp.ExecutionCount,
	}
	if res.Flow != nil {
		env.LastDefiner = func(name string) (int, int, bool) {
			def, ok := res.Flow.LastDefinition(name)
			return def.Index, def.ExecutionOrder, ok
		}
	}
	total := 0
	for _, c := range cells {
		// Each cell gets its own copy: the notebook-order rules need to know where on the
		// page the checked cell sits.
		cellEnv := *env
		cellEnv.Cell, cellEnv.HasCell = p.snap.Index(c.ID), true
		fs := rules.Check(c.ID, res.Facts[c.ID], &cellEnv)
		total += len(fs)
		if !d.updateLayersAt(c, epoch, func(l *cellLayers) {
			l.inspection, l.rules, l.checked = insp, fs, true
			l.runID = max(count, insp.ExecutionCount)
		}) {
			return false // the kernel restarted: these facts are the old kernel's
		}
	}
	rt.s.tracef("rules for %d cell(s) of %s: %d finding(s), facts as of run %d, %v", len(cells), d.uri, total, insp.ExecutionCount, time.Since(start).Round(time.Microsecond))
	if rt.s.setNamespace(ctx, p, insp.Namespace) {
		// The static layer now knows which names the kernel holds: re-analyze so its
		// NameErrors are certain (and the disproved ones go).
		if _, err := rt.s.reanalyze(ctx, p); err != nil {
			return false
		}
	}
	rt.s.publish(ctx, d, p.gen)
	return ctx.Err() == nil
}

// nameSet turns a name list into a set; nil stays nil (unknown).
func nameSet(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
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
	if l := d.layersFor(c); l != nil && l.inspection != nil {
		if v, ok := l.inspection.Values[name]; ok {
			return v, l.inspection.ExecutionCount, true
		}
	}
	a := rt.attachmentFor(d)
	if a == nil || a.k.State() == kernelclient.StateBusy {
		return facts.Value{}, 0, false
	}
	ictx, cancel := context.WithTimeout(ctx, hoverInspectBudget)
	defer cancel()
	insp, err := a.k.Inspect(ictx, kernelclient.InspectRequest{Names: []string{name}, Budget: 50 * time.Millisecond})
	if err != nil {
		rt.s.tracef("hover inspect %s: %v", name, err)
		return facts.Value{}, 0, false
	}
	v, ok := insp.Values[name]
	return v, insp.ExecutionCount, ok
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
	if a.count > 0 {
		return fmt.Sprintf("premortem: kernel %s attached, as of run %d", a.label, a.count)
	}
	return fmt.Sprintf("premortem: kernel %s attached", a.label)
}
