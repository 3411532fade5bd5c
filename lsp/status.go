package lsp

import (
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// This file is the premortem/status notification: which kernel a notebook is attached to
// and its state, for the VS Code extension's status bar (editors/vscode/src/status.ts).

// StatusMethod is the server-to-client notification carrying a KernelStatus.
const StatusMethod = "premortem/status"

// Status states, as the extension renders them.
const (
	StatusNone       = "none"       // no kernel: static checks only
	StatusConnecting = "connecting" // attaching
	StatusIdle       = "idle"
	StatusBusy       = "busy"
	StatusDead       = "dead"  // the attached kernel was lost
	StatusError      = "error" // attaching failed
)

// attachHint tells the user how to attach, in the words they type in VS Code's command
// palette (the extension's command title), not the server's command id.
const attachHint = "run 'premortem: Attach to Kernel' (or set premortem.kernel.connectionFile)"

// statusInterval is the least time between two busy/idle notifications of one kernel:
// a notebook running many short cells would otherwise flood the client.
const statusInterval = 250 * time.Millisecond

// KernelStatus are the params of premortem/status.
type KernelStatus struct {
	// URI is the notebook (or percent-format file) the status is for; empty: every document.
	URI   string `json:"uri,omitempty"`
	State string `json:"state"`
	// Kernel is the short display name, e.g. "python3 (pid 1234)".
	Kernel         string `json:"kernel,omitempty"`
	ConnectionFile string `json:"connectionFile,omitempty"`
	// Detail is one line for the tooltip, or the error text.
	Detail string        `json:"detail,omitempty"`
	Layers *StatusLayers `json:"layers,omitempty"`
	// Sandbox is the shadow child's sandbox in force for this kernel, and why, once a
	// shadow run has said it.
	Sandbox *StatusSandbox `json:"sandbox,omitempty"`
}

// StatusSandbox says which sandbox shadow runs get: "namespaces" (user, mount, network and
// PID namespaces with a throwaway overlay) or "fallback" (file writes emulated in a private
// view; network and subprocesses refused; native code held by a syscall allow-list;
// parallelism sequential), and why: the reason says what the sandbox emulates.
type StatusSandbox struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// StatusLayers are the layers in effect for the document.
type StatusLayers struct {
	Static bool `json:"static"`
	Rules  bool `json:"rules"`
	Shadow bool `json:"shadow"`
	LLM    bool `json:"llm"`
}

// layersFor computes the effective layers for a status: the kernel layers count only
// while a kernel is attached and alive.
func (rt *runtimeLayer) layersFor(state string) *StatusLayers {
	settings := rt.s.currentSettings()
	live := state == StatusIdle || state == StatusBusy
	return &StatusLayers{
		Static: settings.Static.Enabled,
		Rules:  live && settings.Rules.Enabled,
		Shadow: live && settings.Shadow.Mode != ShadowOff,
		LLM:    rt.llm.active(settings),
	}
}

// sendStatus sends statuses in order (rt.sendMu serializes every status notification, so
// a later decision is never overtaken by an earlier one) and remembers the last per URI.
// compute runs with sendMu held, so it sees the attachments as they are when sending.
func (rt *runtimeLayer) sendStatus(compute func() []KernelStatus) {
	rt.sendMu.Lock()
	defer rt.sendMu.Unlock()
	for _, st := range compute() {
		st.Layers = rt.layersFor(st.State)
		rt.mu.Lock()
		if st.URI != "" {
			rt.lastStatus[st.URI] = st
		}
		rt.mu.Unlock()
		rt.s.notify(StatusMethod, st)
	}
}

// setStatus sends one document's status.
func (rt *runtimeLayer) setStatus(st KernelStatus) {
	rt.sendStatus(func() []KernelStatus { return []KernelStatus{st} })
}

// statusOf is the last status sent for a URI (state "none" when none was).
func (rt *runtimeLayer) statusOf(uri string) KernelStatus {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if st, ok := rt.lastStatus[uri]; ok {
		return st
	}
	return KernelStatus{URI: uri, State: StatusNone}
}

// resendStatuses sends every open document's last status again (the effective layers
// changed with the settings).
func (rt *runtimeLayer) resendStatuses() {
	rt.sendStatus(func() []KernelStatus {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		out := make([]KernelStatus, 0, len(rt.lastStatus))
		for _, st := range rt.lastStatus {
			out = append(out, st)
		}
		return out
	})
}

// attachmentStatus is the status of an attached kernel in the given state.
func (a *attachment) status(uri, state string) KernelStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := KernelStatus{URI: uri, State: state, Kernel: a.name, ConnectionFile: a.file, Detail: a.detail}
	if a.sandbox.Sandbox != "" {
		st.Sandbox = &StatusSandbox{Kind: a.sandbox.Sandbox, Reason: a.sandbox.Reason}
	}
	if a.dead != "" {
		st.State = StatusDead
		st.Detail = a.dead + "; waiting for it to come back (premortem re-attaches by itself when the kernel restarts), or " + attachHint + " to attach again"
	}
	return st
}

// noteSandbox records the sandbox a shadow run reported for a's kernel and, when it is news,
// re-sends the status so the status bar says which sandbox is in force.
func (rt *runtimeLayer) noteSandbox(a *attachment, r *facts.ShadowResult) {
	if r == nil || r.Sandbox == "" {
		return
	}
	a.mu.Lock()
	changed := a.sandbox.Sandbox != r.Sandbox || a.sandbox.Reason != r.SandboxReason
	a.sandbox = facts.SandboxInfo{Sandbox: r.Sandbox, Reason: r.SandboxReason}
	a.mu.Unlock()
	if changed {
		rt.sendAttachmentStatus(a, shownState(a.k.State()))
	}
}

// sendAttachmentStatus sends the status of every document attached to a.
func (rt *runtimeLayer) sendAttachmentStatus(a *attachment, state string) {
	rt.sendStatus(func() []KernelStatus {
		var out []KernelStatus
		for _, uri := range rt.urisOf(a) {
			out = append(out, a.status(uri, state))
		}
		return out
	})
}

// urisOf lists the documents attached to a.
func (rt *runtimeLayer) urisOf(a *attachment) []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var uris []string
	for uri, x := range rt.att {
		if x == a {
			uris = append(uris, uri)
		}
	}
	return uris
}

// shownState maps a kernel state to a status state.
func shownState(s kernelclient.State) string {
	switch s {
	case kernelclient.StateBusy:
		return StatusBusy
	case kernelclient.StateDead:
		return StatusDead
	}
	return StatusIdle
}

// stateCoalescer limits busy/idle notifications of one kernel to one per statusInterval:
// the latest state is sent at once when the last send is old enough, else when the
// interval ends. It is used by the attachment's follow goroutine only.
type stateCoalescer struct {
	shown    string // last state sent
	pending  string // state to send when the timer fires ("" none)
	lastSent time.Time
	timer    *time.Timer
}

// want records a state; it returns the state to send now ("" none).
func (c *stateCoalescer) want(state string, now time.Time) string {
	if c.timer != nil {
		c.pending = state
		return ""
	}
	if state == c.shown {
		return ""
	}
	if wait := statusInterval - now.Sub(c.lastSent); wait > 0 {
		c.pending = state
		c.timer = time.NewTimer(wait)
		return ""
	}
	c.shown, c.lastSent = state, now
	return state
}

// fire is called when the timer fired; it returns the state to send ("" none).
func (c *stateCoalescer) fire(now time.Time) string {
	c.timer = nil
	st := c.pending
	c.pending = ""
	if st == "" || st == c.shown {
		return ""
	}
	c.shown, c.lastSent = st, now
	return st
}

// sent records a state sent outside the coalescer (attach, restart).
func (c *stateCoalescer) sent(state string, now time.Time) {
	c.shown, c.lastSent = state, now
	c.pending = ""
	c.stop()
}

// timerC is the timer's channel, nil when no send is pending.
func (c *stateCoalescer) timerC() <-chan time.Time {
	if c.timer == nil {
		return nil
	}
	return c.timer.C
}

func (c *stateCoalescer) stop() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}
