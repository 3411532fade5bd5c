package lsp

// This file is following a kernel restart: the steps shown while it happens, forgetting
// what the old kernel proved, and re-attaching when a restart left the old connection
// behind (the same ports, or a new kernel found by discovery or a Jupyter Server session).

import (
	"context"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/kernelclient"
)

// sendRestarting reports the first step of following a restart.
func (rt *runtimeLayer) sendRestarting(a *attachment) {
	rt.sendStatus(func() []KernelStatus {
		var out []KernelStatus
		for _, uri := range rt.urisOf(a) {
			out = append(out, KernelStatus{URI: uri, State: StatusConnecting, Kernel: a.name, ConnectionFile: a.file, Detail: detailRestarting})
		}
		return out
	})
}

// kernelRestarted revives a after its kernel restarted on the same connection and resets
// what the documents know to the new kernel's: an empty namespace, execution count 0, no
// cached facts (a cached answer keyed by an execution count of the old kernel would
// collide with the new kernel's counts, which start again at 1), and an executed history
// without the runs of the old kernel.
func (rt *runtimeLayer) kernelRestarted(a *attachment) {
	a.mu.Lock()
	a.execCount = 0
	a.dead = ""
	a.waitingIdle = false
	a.detail = joinDetail(detailRestarted, a.baseDetail)
	a.mu.Unlock()
	rt.forgetKernel(a)
}

// revive brings back an attachment marked dead whose kernel answers again as itself (the
// connection was lost, not the kernel: the same session came back).
func (rt *runtimeLayer) revive(a *attachment) {
	if a.k.State() == kernelclient.StateDead {
		return
	}
	a.mu.Lock()
	was := a.dead
	a.dead = ""
	a.mu.Unlock()
	if was == "" {
		return
	}
	rt.s.showf(protocol.MessageTypeInfo, "kernel %s answers again; runtime checks are back", a.label)
	rt.rescheduleFor(a, true)
}

// forgetKernel drops what a's documents know of the kernel (it died or restarted) and
// starts new passes: the cells' runs so far belong to the old kernel.
func (rt *runtimeLayer) forgetKernel(a *attachment) {
	for _, uri := range rt.urisOf(a) {
		d := rt.s.doc(uri)
		if d == nil {
			continue
		}
		rt.s.mu.Lock()
		d.kernelRestartedLocked()
		rt.s.mu.Unlock()
		rt.s.schedule(d)
	}
}

// ranInKernel is told that the user ran code in a's kernel: a cell with that text whose
// run predates a restart is part of the new kernel's history again (its execution order
// may even be the same as before the restart, so the order alone cannot tell).
func (rt *runtimeLayer) ranInKernel(a *attachment, code string) {
	a.mu.Lock()
	restarted := a.detail != a.baseDetail && !a.awaitingIdle
	if restarted {
		a.detail = a.baseDetail
	}
	a.mu.Unlock()
	for _, uri := range rt.urisOf(a) {
		if d := rt.s.doc(uri); d != nil {
			rt.s.mu.Lock()
			d.ranInKernelLocked(code)
			rt.s.mu.Unlock()
		}
	}
}

// reattachEvery is the time between two discoveries while an attached kernel is lost.
const reattachEvery = 2 * time.Second

// reattach looks for the new kernel of a's notebooks while a is dead, and attaches them
// to it: VS Code restarts a kernel on new ports with a new connection file, and a Jupyter
// Server session may point to a new kernel. It stops when a comes back by itself (the
// same connection file answers again: follow's EventRestart), when a is replaced or
// closed, or when auto-attach is off (a kernel chosen by hand is only followed on its own
// connection).
func (rt *runtimeLayer) reattach(ctx context.Context, a *attachment) {
	defer rt.recoverTo("re-attaching a restarted kernel")
	a.mu.Lock()
	if a.reattaching {
		a.mu.Unlock()
		return
	}
	a.reattaching = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.reattaching = false
		a.mu.Unlock()
	}()
	every := rt.reattachEvery
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		settings := rt.s.currentSettings()
		if !a.isDead() || !settings.Kernel.AutoAttach || settings.Kernel.ConnectionFile != "" {
			return
		}
		var docs []*document
		nbPath := ""
		for _, uri := range rt.urisOf(a) {
			if d := rt.s.doc(uri); d != nil && !d.percent {
				docs = append(docs, d)
				if nbPath == "" {
					nbPath = notebookPath(uri)
				}
			}
		}
		if nbPath == "" {
			return
		}
		dctx, cancel := context.WithTimeout(ctx, attachTimeout)
		c, err := rt.discover(dctx, nbPath)
		cancel()
		if err != nil {
			rt.s.tracef("re-attach %s: %v", nbPath, err)
			continue
		}
		if !a.isDead() || ctx.Err() != nil {
			_ = c.k.Close()
			return
		}
		c.detail = joinDetail("re-attached after the kernel restarted", c.detail)
		// A new kernel: the cells' runs so far were in the old one.
		for _, d := range docs {
			rt.s.mu.Lock()
			d.kernelRestartedLocked()
			rt.s.mu.Unlock()
		}
		rt.adopt(c, docs)
		rt.s.showf(protocol.MessageTypeInfo, "kernel %s restarted; premortem re-attached to it (run your setup cells again: runtime checks use the new kernel's state)", c.label)
		return
	}
}
