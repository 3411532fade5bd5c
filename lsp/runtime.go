package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
}

// attachment is one kernel connection, possibly shared by several documents.
type attachment struct {
	k     kernelclient.Kernel
	label string // where it came from, for messages: a connection file path, "... (found by vscode)"
	name  string // short display name for the status bar
	file  string // connection file or server kernel URL
	stop  context.CancelFunc

	mu sync.Mutex
	// detail is the status tooltip line.
	detail string
	// count is the kernel's latest known execution count: cached facts taken at an older
	// count are stale.
	count int
	// waitingIdle is set when a check found the kernel busy: the next idle event
	// reschedules.
	waitingIdle bool
	dead        string
}

func newRuntimeLayer(s *Server) *runtimeLayer {
	rt := &runtimeLayer{
		s: s, att: map[string]*attachment{}, lastStatus: map[string]KernelStatus{},
		shownErrors: map[string]bool{}, lastDiscovery: map[string]time.Time{}, llm: newLLMLayer(s),
		rediscoverEvery: rediscoverEvery,
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

func (a *attachment) isDead() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dead != ""
}

func (a *attachment) executionCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.count
}

func (a *attachment) sawCount(n int) {
	a.mu.Lock()
	if n > a.count {
		a.count = n
	}
	a.mu.Unlock()
}

// wanted reports whether the kernel layers have anything to do for d.
func (rt *runtimeLayer) wanted(d *document, settings Settings) bool {
	return rt.attachmentFor(d) != nil || rt.llm.active(settings)
}

// attachOrigin says who asked for an attachment: it decides how loudly a failure is
// reported.
type attachOrigin int

const (
	// originAuto: discovery on open or after a run; failures go to the status only.
	originAuto attachOrigin = iota
	// originSetting: premortem.kernel.connectionFile; failures are also shown once.
	originSetting
	// originCommand: the attach command; failures are its error response.
	originCommand
	// originRetry: discovery again after a run; like originAuto without "connecting".
	originRetry
)

// documentOpened reports the new document's status and, when the settings ask for it,
// attaches to the notebook's kernel in the background.
func (rt *runtimeLayer) documentOpened(d *document) {
	settings := rt.s.currentSettings()
	if d.percent {
		if hasPercentMarkers(d.text) {
			rt.setStatus(KernelStatus{URI: d.uri, State: StatusNone, Detail: "percent-format file: static checks only (no kernel is attached to .py files)"})
		}
		return
	}
	if !settings.Kernel.AutoAttach && settings.Kernel.ConnectionFile == "" {
		rt.setStatus(KernelStatus{URI: d.uri, State: StatusNone, Detail: "no kernel — static checks only; " + attachHint})
		return
	}
	origin := originAuto
	if settings.Kernel.ConnectionFile != "" {
		origin = originSetting
	}
	rt.attachInBackground([]*document{d}, settings.Kernel.ConnectionFile, origin)
}

// attachInBackground attaches documents without blocking the caller (the read goroutine):
// it reports "connecting" at once, then the outcome.
func (rt *runtimeLayer) attachInBackground(docs []*document, connectionFile string, origin attachOrigin) {
	if len(docs) == 0 {
		return
	}
	if connectionFile == "" {
		rt.mu.Lock()
		for _, d := range docs {
			rt.lastDiscovery[d.uri] = time.Now()
		}
		rt.mu.Unlock()
	}
	go func() {
		defer rt.recoverTo("attaching a kernel")
		ctx, cancel := context.WithTimeout(rt.s.ctx, attachTimeout)
		defer cancel()
		_, _ = rt.attach(ctx, docs, connectionFile, origin)
	}()
}

// attachFailed reports a failed attach on the documents' status: state "none" when
// discovery found no kernel for the notebook (the usual case before the user starts
// one), else "error". A failure to attach to a configured connection file is also shown
// once with showMessage.
func (rt *runtimeLayer) attachFailed(docs []*document, connectionFile string, err error, origin attachOrigin) {
	state, detail := StatusError, err.Error()
	if connectionFile == "" && errNoMatch(err) {
		state, detail = StatusNone, "no kernel — static checks only ("+err.Error()+")"
	}
	rt.s.tracef("no kernel for %d document(s): %v", len(docs), err)
	if origin == originRetry {
		return // the status from the first attempt stands
	}
	// Shown before the status, so a client that has the status has the message too.
	if origin == originSetting {
		rt.mu.Lock()
		shown := rt.shownErrors[err.Error()]
		rt.shownErrors[err.Error()] = true
		rt.mu.Unlock()
		if !shown {
			rt.s.showf(protocol.MessageTypeWarning, "%v (premortem.kernel.connectionFile); static checks only until a kernel is attached", err)
		}
	}
	rt.sendStatus(func() []KernelStatus {
		var out []KernelStatus
		for _, d := range docs {
			if rt.s.doc(d.uri) != d {
				continue // closed meanwhile
			}
			rt.mu.Lock()
			a := rt.att[d.uri]
			rt.mu.Unlock()
			if a != nil && !a.isDead() {
				// A failed re-attach: the earlier kernel stays; show it again in place
				// of "connecting".
				out = append(out, a.status(d.uri, shownState(a.k.State())))
				continue
			}
			out = append(out, KernelStatus{URI: d.uri, State: state, ConnectionFile: connectionFile, Detail: detail})
		}
		return out
	})
}

// documentClosed detaches the document (the kernel connection closes when no document
// uses it any more) and reports it detached.
func (rt *runtimeLayer) documentClosed(d *document) {
	rt.detach(d)
	rt.mu.Lock()
	_, reported := rt.lastStatus[d.uri]
	rt.mu.Unlock()
	if reported {
		rt.setStatus(KernelStatus{URI: d.uri, State: StatusNone, Detail: "closed"})
	}
	rt.mu.Lock()
	delete(rt.lastStatus, d.uri)
	delete(rt.lastDiscovery, d.uri)
	rt.mu.Unlock()
}

// detach removes the document's attachment, closing the kernel connection when no other
// document uses it, and forgets what the kernel layers knew.
func (rt *runtimeLayer) detach(d *document) {
	rt.mu.Lock()
	a := rt.att[d.uri]
	delete(rt.att, d.uri)
	inUse := false
	for _, other := range rt.att {
		if other == a {
			inUse = true
		}
	}
	rt.mu.Unlock()
	if a != nil && !inUse {
		a.close()
	}
	d.rmu.Lock()
	d.layers = map[string]*cellLayers{}
	d.namespace = nil
	d.rmu.Unlock()
}

// detachAll detaches every notebook (the user turned off both the connection file and
// auto-attach: the extension's "Detach" choice).
func (rt *runtimeLayer) detachAll() {
	for _, d := range rt.s.notebooks() {
		rt.mu.Lock()
		attached := rt.att[d.uri] != nil
		rt.mu.Unlock()
		if !attached {
			continue
		}
		rt.detach(d)
		rt.setStatus(KernelStatus{URI: d.uri, State: StatusNone, Detail: "detached — static checks only; " + attachHint})
		rt.s.schedule(d)
	}
}

func (a *attachment) close() {
	if a.stop != nil {
		a.stop()
	}
	_ = a.k.Close()
}

// attachAllFromSetting attaches every open notebook to the kernel of the
// premortem.kernel.connectionFile setting.
func (rt *runtimeLayer) attachAllFromSetting() {
	path := rt.s.currentSettings().Kernel.ConnectionFile
	rt.mu.Lock()
	rt.shownErrors = map[string]bool{} // a new explicit choice: report its failure again
	rt.mu.Unlock()
	rt.attachInBackground(rt.s.notebooks(), path, originSetting)
}

// attachUnattached starts discovery for the notebooks without a kernel (auto-attach was
// turned on).
func (rt *runtimeLayer) attachUnattached() {
	for _, d := range rt.s.notebooks() {
		rt.mu.Lock()
		a := rt.att[d.uri]
		rt.mu.Unlock()
		if a == nil || a.isDead() {
			rt.attachInBackground([]*document{d}, "", originAuto)
		}
	}
}

// attach connects to a kernel (the connection file or server kernel URL when given, else
// discovery for the first document) and attaches the documents to it. It reports
// "connecting", then the attached kernel or the failure, on the documents' status.
func (rt *runtimeLayer) attach(ctx context.Context, docs []*document, connectionFile string, origin attachOrigin) (*attachment, error) {
	connecting := KernelStatus{State: StatusConnecting, ConnectionFile: connectionFile, Detail: "looking for the kernel of this notebook"}
	if connectionFile != "" {
		connecting.Kernel = filepath.Base(connectionFile)
		connecting.Detail = "connecting to " + connectionFile
	}
	if origin != originRetry {
		rt.sendStatus(func() []KernelStatus {
			out := make([]KernelStatus, 0, len(docs))
			for _, d := range docs {
				st := connecting
				st.URI = d.uri
				out = append(out, st)
			}
			return out
		})
	}
	var (
		c   *connected
		err error
	)
	if connectionFile != "" {
		c, err = rt.connectTarget(ctx, connectionFile)
	} else {
		var nbPath string
		if len(docs) > 0 {
			nbPath = notebookPath(docs[0].uri)
		}
		c, err = rt.discover(ctx, nbPath)
	}
	if err != nil {
		rt.attachFailed(docs, connectionFile, err, origin)
		return nil, err
	}
	if origin == originAuto || origin == originRetry {
		// An explicit attach that finished while discovery ran wins.
		var free []*document
		for _, d := range docs {
			if rt.attachmentFor(d) == nil {
				free = append(free, d)
			}
		}
		if len(free) == 0 {
			_ = c.k.Close()
			return rt.attachmentFor(docs[0]), nil
		}
		docs = free
	}
	switch origin {
	case originSetting:
		c.detail = joinDetail("from premortem.kernel.connectionFile", c.detail)
	case originCommand:
		c.detail = joinDetail("attached with 'premortem: Attach to Kernel'", c.detail)
	}
	return rt.adopt(c, docs), nil
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// adopt attaches documents to an already connected kernel and starts following its
// events (which reports the attachment's status). Tests use it with launched kernels.
func (rt *runtimeLayer) adopt(c *connected, docs []*document) *attachment {
	ctx, cancel := context.WithCancel(rt.s.ctx)
	if c.name == "" {
		c.name = filepath.Base(c.file)
	}
	if c.label == "" {
		c.label = c.file
	}
	a := &attachment{k: c.k, label: c.label, name: c.name, file: c.file, detail: c.detail, stop: cancel}
	var old []*attachment
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		cancel()
		_ = c.k.Close()
		return a
	}
	for _, d := range docs {
		if prev := rt.att[d.uri]; prev != nil && prev != a {
			old = append(old, prev)
		}
		rt.att[d.uri] = a
	}
	for _, o := range old {
		still := false
		for _, x := range rt.att {
			if x == o {
				still = true
			}
		}
		if still {
			continue
		}
		defer o.close()
	}
	rt.mu.Unlock()
	// The first status goes out before follow starts, so a busy/idle change it reports
	// always comes after.
	first := shownState(c.k.State())
	rt.sendAttachmentStatus(a, first)
	go rt.follow(ctx, a, first)
	rt.s.showf(protocol.MessageTypeInfo, "attached to kernel %s", a.label)
	for _, d := range docs {
		d.rmu.Lock()
		d.layers = map[string]*cellLayers{}
		d.rmu.Unlock()
		rt.s.schedule(d)
	}
	return a
}

// markDead records that the kernel is lost and reports it, once.
func (rt *runtimeLayer) markDead(a *attachment, reason string) bool {
	a.mu.Lock()
	first := a.dead == ""
	if first {
		a.dead = reason
	}
	a.mu.Unlock()
	if first {
		rt.sendAttachmentStatus(a, StatusDead)
	}
	return first
}

// follow reacts to what happens on the kernel: a user's run makes every cached fact stale,
// an idle kernel lets a deferred check go on, a restart or death drops what was known.
// It also reports the kernel's busy/idle state after shown, the one adopt reported
// (coalesced: at most one per
// statusInterval; premortem's own requests are not shown as busy).
func (rt *runtimeLayer) follow(ctx context.Context, a *attachment, shown string) {
	defer rt.recoverTo("following kernel events")
	events := a.k.Events()
	var co stateCoalescer
	co.sent(shown, time.Now())
	defer co.stop()
	for {
		var ev kernelclient.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case <-co.timerC():
			if st := co.fire(time.Now()); st != "" {
				rt.sendAttachmentStatus(a, st)
			}
			continue
		case ev, ok = <-events:
			if !ok {
				return
			}
		}
		show := func(state string) {
			if st := co.want(state, time.Now()); st != "" {
				rt.sendAttachmentStatus(a, st)
			}
		}
		switch ev.Kind {
		case kernelclient.EventExecuteInput:
			if !ev.Ours {
				show(StatusBusy)
			}
		case kernelclient.EventExecuteReply:
			if ev.Ours {
				continue
			}
			a.sawCount(ev.ExecutionCount)
			rt.rescheduleFor(a, false)
		case kernelclient.EventStatus:
			switch ev.State {
			case kernelclient.StateBusy:
				if !ev.Ours {
					show(StatusBusy)
				}
			case kernelclient.StateIdle:
				show(StatusIdle)
			}
			if ev.State != kernelclient.StateIdle {
				continue
			}
			a.mu.Lock()
			waiting := a.waitingIdle
			a.waitingIdle = false
			a.mu.Unlock()
			if waiting {
				rt.rescheduleFor(a, false)
			}
		case kernelclient.EventRestart:
			a.mu.Lock()
			a.count = 0
			a.detail = "the kernel restarted; re-checking"
			a.mu.Unlock()
			st := shownState(a.k.State())
			co.sent(st, time.Now())
			rt.sendAttachmentStatus(a, st)
			rt.s.showf(protocol.MessageTypeInfo, "kernel %s restarted; re-checking", a.label)
			rt.rescheduleFor(a, true)
		case kernelclient.EventDead:
			co.stop()
			if rt.markDead(a, "the kernel stopped responding") {
				rt.s.showf(protocol.MessageTypeWarning, "kernel %s stopped responding; runtime checks are off until you attach again: %s", a.label, attachHint)
			}
			rt.rescheduleFor(a, true)
			return
		}
	}
}

// rescheduleFor starts a new pass for every document attached to a; forget drops what
// the kernel layers knew.
func (rt *runtimeLayer) rescheduleFor(a *attachment, forget bool) {
	rt.mu.Lock()
	var uris []string
	for uri, x := range rt.att {
		if x == a {
			uris = append(uris, uri)
		}
	}
	rt.mu.Unlock()
	for _, uri := range uris {
		d := rt.s.doc(uri)
		if d == nil {
			continue
		}
		if forget {
			d.rmu.Lock()
			d.layers = map[string]*cellLayers{}
			d.namespace = nil
			d.rmu.Unlock()
		}
		rt.s.schedule(d)
	}
}

// cellsRan is told that the client reported finished runs (executionSummary).
func (rt *runtimeLayer) cellsRan(d *document) {
	a := rt.attachmentFor(d)
	if a == nil {
		rt.maybeRediscover(d)
		return
	}
	max := 0
	rt.s.mu.Lock()
	for _, c := range d.nb.Cells {
		if c.ExecutionOrder > max {
			max = c.ExecutionOrder
		}
	}
	rt.s.mu.Unlock()
	a.sawCount(max)
}

// maybeRediscover looks for the kernel of a notebook that has none when the client
// reports a run (the user has started a kernel since the notebook opened), at most once
// per rediscoverEvery.
func (rt *runtimeLayer) maybeRediscover(d *document) {
	settings := rt.s.currentSettings()
	if d.percent || !settings.Kernel.AutoAttach || settings.Kernel.ConnectionFile != "" {
		return
	}
	rt.mu.Lock()
	a := rt.att[d.uri]
	attached := a != nil && !a.isDead()
	recent := time.Since(rt.lastDiscovery[d.uri]) < rt.rediscoverEvery
	rt.mu.Unlock()
	if attached || recent {
		return
	}
	rt.attachInBackground([]*document{d}, "", originRetry)
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
		Rules:         settings.Rules.Enabled,
		Shadow:        shadowMode,
		ShadowTimeout: settings.Shadow.Timeout.D(),
		Trace:         true,
		InspectBudget: 50 * time.Millisecond,
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
		rt.shadow(ctx, p, a, res, focus, settings.Shadow.Mode)
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
	case errors.Is(err, kernelclient.ErrDead), errors.Is(err, kernelclient.ErrClosed):
		if rt.markDead(a, err.Error()) && !errors.Is(err, kernelclient.ErrClosed) {
			rt.s.logf(protocol.MessageTypeWarning, "runtime checks stopped: %v", err)
		}
		return false
	default:
		for _, c := range cells {
			d.updateLayers(c, func(l *cellLayers) {
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
		d.updateLayers(c, func(l *cellLayers) {
			l.inspection, l.rules, l.checked = insp, fs, true
			l.runID = max(count, insp.ExecutionCount)
		})
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

// shadow runs the focus cell in a forked kernel, unless its cached result is current.
func (rt *runtimeLayer) shadow(ctx context.Context, p *pass, a *attachment, res *analysis.Result, c *notebook.Cell, mode string) *facts.ShadowResult {
	count := a.executionCount()
	if l := p.d.layersFor(c); l != nil && l.shadow != nil && l.shadowRun >= count && !p.force {
		return l.shadow
	}
	j := rt.judgeFor(a, p.settings, mode)
	cf := res.Facts[c.ID]
	gate := shadowGate(a) // one shadow child at a time with fix verification (verify.go)
	gate.Lock()
	r, err := j.ShadowRun(ctx, c.Text, cf)
	gate.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			rt.s.tracef("shadow run of %s: %v", c.ID, err)
		}
		return nil
	}
	if r == nil {
		return nil
	}
	fs, notes := judge.ShadowFindings(c.ID, c.Text, cf, r)
	p.d.updateLayers(c, func(l *cellLayers) {
		l.shadow, l.shadowFind, l.shadowRun = r, fs, count
		l.notes = append(l.notes, notes...)
	})
	rt.s.publish(ctx, p.d, p.gen)
	if len(r.Trace) > 0 {
		rt.s.refreshInlayHints()
	}
	return r
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
