package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// This file is kernel attachment: connecting documents to a kernel (a connection file, a
// Jupyter Server kernel, or discovery), following the kernel's events and its death;
// restart.go follows it through restarts.

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
	// execCount is the kernel's latest known execution count: cached facts taken at an
	// older one are stale.
	execCount int
	// waitingIdle is set when a check found the kernel busy: the next idle event
	// reschedules.
	waitingIdle bool
	dead        string
	// baseDetail is detail as attached; detail says more for a while (waiting for idle,
	// restarted) and goes back to it.
	baseDetail string
	// awaitingIdle: the kernel ran a cell when we attached and has been sent nothing yet
	// (kernelclient's deferred handshake); the next idle ends it.
	awaitingIdle bool
	// reattaching is set while reattach looks for the notebook's new kernel.
	reattaching bool
	// shadow keeps an explicit shadow run from being cancelled by an automatic one.
	shadow shadowGate
	// pendingShadow are the cells whose shadow run was asked for while the kernel was
	// busy: they run at the next idle.
	pendingShadow []string
	// sandbox is the shadow sandbox the kernel's last shadow run reported (status bar).
	sandbox facts.SandboxInfo
}

// awaiter is what a kernelclient.Client says about a handshake deferred because the
// kernel was busy at attach (kernelclient.Client.AwaitingIdle).
type awaiter interface{ AwaitingIdle() bool }

// Status details of the steps through a restart and a busy attach.
const (
	detailAwaitingIdle = "waiting for the kernel to be idle: your cell is running, and premortem sends nothing to a busy kernel"
	detailRestarting   = "kernel restarted: re-attaching"
	detailWaitKernel   = "waiting for the kernel"
	detailRestarted    = "the kernel restarted: runtime checks use the new kernel's state (run your setup cells again)"
)

func (a *attachment) isDead() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dead != ""
}

// latestExecCount is the kernel's latest known execution count.
func (a *attachment) latestExecCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.execCount
}

// sawExecCount records an execution count the kernel reported.
func (a *attachment) sawExecCount(n int) {
	a.mu.Lock()
	if n > a.execCount {
		a.execCount = n
	}
	a.mu.Unlock()
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
	d.sess.KernelChanged() // with the swap, as in adopt
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
	a := &attachment{k: c.k, label: c.label, name: c.name, file: c.file, detail: c.detail, baseDetail: c.detail, stop: cancel}
	if w, ok := c.k.(awaiter); ok && w.AwaitingIdle() {
		a.awaitingIdle = true
		a.detail = joinDetail(detailAwaitingIdle, c.detail)
	}
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
		// The new epoch begins with the swap, under the same lock attachmentAt reads both
		// under: a pass sees either the old kernel and the old epoch or the new ones.
		d.sess.KernelChanged()
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
		rt.s.schedule(d)
	}
	return a
}

// markDead records that the kernel is lost and reports it, once per death: the status,
// and always one visible message (whichever notices first, the heartbeat or a request
// that failed, reports it; the other finds it reported). A kernel that comes back (the
// same connection file answers again, or discovery finds the notebook's new kernel) is
// re-attached by follow and reattach.
func (rt *runtimeLayer) markDead(a *attachment, reason string) bool {
	a.mu.Lock()
	first := a.dead == ""
	if first {
		a.dead = reason
	}
	a.mu.Unlock()
	if first {
		rt.sendAttachmentStatus(a, StatusDead)
		rt.s.showf(protocol.MessageTypeWarning, "kernel %s stopped responding (%s); runtime checks are off until it comes back: premortem re-attaches by itself when the kernel restarts, or %s", a.label, reason, attachHint)
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
			a.sawExecCount(ev.ExecutionCount)
			rt.ranInKernel(a, ev.Code)
			rt.rescheduleFor(a, false)
		case kernelclient.EventStatus:
			if ev.State == kernelclient.StateIdle || ev.State == kernelclient.StateBusy {
				rt.revive(a)
			}
			switch ev.State {
			case kernelclient.StateBusy:
				if !ev.Ours {
					show(StatusBusy)
				}
			case kernelclient.StateIdle:
				a.mu.Lock()
				ended := a.awaitingIdle
				a.awaitingIdle = false
				if ended {
					a.detail = a.baseDetail
				}
				if strings.HasPrefix(a.detail, detailWaitKernel) {
					// The restarted kernel is ready: the last step of the restart.
					a.detail = joinDetail(detailRestarted, a.baseDetail)
				}
				a.mu.Unlock()
				if ended {
					// The deferred handshake is done: the kernel can be checked now.
					co.sent(StatusIdle, time.Now())
					rt.sendAttachmentStatus(a, StatusIdle)
					rt.rescheduleFor(a, true)
				} else {
					show(StatusIdle)
				}
			case kernelclient.StateStarting:
				// IOPub "starting" (a new kernel process on our ports) or a shutdown_reply
				// with restart: a restart is under way.
				co.sent(StatusConnecting, time.Now())
				rt.sendRestarting(a)
				continue
			}
			if ev.State != kernelclient.StateIdle {
				continue
			}
			a.mu.Lock()
			pending := len(a.pendingShadow) > 0
			a.mu.Unlock()
			if pending {
				go rt.runPendingShadows(a)
			}
			a.mu.Lock()
			waiting := a.waitingIdle
			a.waitingIdle = false
			a.mu.Unlock()
			if waiting {
				rt.rescheduleFor(a, false)
			}
		case kernelclient.EventRestart:
			// A new kernel session on the same connection: the kernel restarted (through
			// jupyter_client or a Jupyter Server, or killed and started again on the same
			// ports). Everything known about the old one is dropped.
			rt.sendRestarting(a)
			rt.kernelRestarted(a)
			st := shownState(a.k.State())
			if st != StatusIdle {
				a.mu.Lock()
				a.detail = joinDetail(detailWaitKernel, a.baseDetail)
				a.mu.Unlock()
			}
			co.sent(st, time.Now())
			rt.sendAttachmentStatus(a, st)
			rt.s.showf(protocol.MessageTypeInfo, "kernel %s restarted; premortem re-attached to it (run your setup cells again: runtime checks use the new kernel's state)", a.label)
		case kernelclient.EventDead:
			co.stop()
			rt.markDead(a, "no heartbeat")
			// What the kernel layers knew goes; the executed history stays until we know
			// whether the kernel comes back as itself (a lost connection) or restarted.
			rt.rescheduleFor(a, true)
			// Keep following: the client reconnects to the same connection file for as long
			// as it is open, and a kernel started again on it comes back as EventRestart.
			// Meanwhile discovery looks for the notebook's new kernel (VS Code restarts a
			// kernel on new ports with a new connection file; a Jupyter Server session may
			// point to a new kernel).
			go rt.reattach(ctx, a)
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
			d.sess.KernelChanged()
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
		// A run from before a restart says nothing of the new kernel's count.
		if o := d.currentRun(c); o > max {
			max = o
		}
	}
	rt.s.mu.Unlock()
	a.sawExecCount(max)
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

// shadowWhenIdle remembers a shadow run the user asked for while the kernel ran a cell;
// follow makes it when the kernel is idle and shows its outcome. It returns the command's
// answer.
func (rt *runtimeLayer) shadowWhenIdle(a *attachment, cellURI string) string {
	a.mu.Lock()
	if !slices.Contains(a.pendingShadow, cellURI) {
		a.pendingShadow = append(a.pendingShadow, cellURI)
	}
	a.mu.Unlock()
	// The idle event may have come between the busy state and now.
	if a.k.State() == kernelclient.StateIdle {
		go rt.runPendingShadows(a)
	}
	return shadowBusyAnswer
}

// runPendingShadows makes the shadow runs asked for while the kernel was busy.
func (rt *runtimeLayer) runPendingShadows(a *attachment) {
	defer rt.recoverTo("running a deferred shadow run")
	a.mu.Lock()
	uris := a.pendingShadow
	a.pendingShadow = nil
	a.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(rt.s.ctx, rt.s.currentSettings().Shadow.Timeout.D()+attachTimeout)
		msg, err := rt.s.explicitShadow(ctx, a, uri)
		cancel()
		switch {
		case errors.Is(err, kernelclient.ErrBusy):
			rt.shadowWhenIdle(a, uri) // busy again (the next cell of a run-all): wait again
		case err != nil:
			rt.s.showf(protocol.MessageTypeWarning, "shadow run of the cell asked for while the kernel was busy: %v", err)
		default:
			rt.s.showf(protocol.MessageTypeInfo, "shadow run of the cell (asked for while the kernel was busy): %s", msg)
		}
	}
}

// lostAttachment says which kernel d lost and why ("" when d's kernel is not lost).
func (rt *runtimeLayer) lostAttachment(d *document) string {
	rt.mu.Lock()
	a := rt.att[d.uri]
	rt.mu.Unlock()
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead == "" {
		return ""
	}
	return fmt.Sprintf("the kernel %s stopped responding (%s)", a.label, a.dead)
}
