package kernelclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// This file connects a Client: the first transport, the readiness handshake
// (kernel_info_reply plus an IOPub message), sent only once the kernel is not seen busy, and
// the deferred handshake of a client that attached to a busy kernel.

// awaitKey stands in the busy set for the running cell found at attach: our handshake
// waits for it. It counts as another client's run (it is one), so a caller without a
// deadline gets ErrBusy at once and one with a deadline waits (sending nothing).
const awaitKey = "attach:awaiting-idle"

// awaitInline is how long start waits for a busy kernel before returning a client that
// finishes its handshake in the background: a kernel still starting up is idle within
// it, a user's long cell is not.
const awaitInline = time.Second

// start dials the first transport, performs the readiness handshake and starts the
// supervisor (heartbeat, reconnects). The handshake is our first request, so it is sent
// only once the kernel is not seen busy (idle.go explains how that is seen without sending
// anything): a kernel still busy after awaitInline gets a client in state busy whose
// handshake runs when the kernel is idle (AwaitingIdle).
func (c *Client) start(ctx context.Context) error {
	tr, gen, err := c.openTransport(ctx)
	if err != nil {
		return err
	}
	st := c.passiveState(ctx)
	// A kernel still starting is waited for startingGrace at most (less when ctx leaves no
	// room for the handshake after it); a busy one for awaitInline. "starting" is not a
	// user's cell: a Jupyter Server reports it until it sees a status message, and it can
	// miss the only one a fresh kernel sends, so waiting for it to change could use up the
	// whole of ctx. The handshake itself waits for a kernel that is really starting.
	inline := time.Now().Add(awaitInline)
	starting := time.Now().Add(startingGrace)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-2*time.Second).Before(starting) {
		starting = dl.Add(-2 * time.Second)
	}
	for ctx.Err() == nil && ((st == StateBusy && time.Now().Before(inline)) || (st == StateStarting && time.Now().Before(starting))) {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		st = c.passiveState(ctx)
	}
	if st == StateBusy || (st == StateStarting && !roomForHandshake(ctx)) {
		c.wg.Add(1)
		go c.supervise()
		c.deferHandshake(tr, gen, func(info KernelInfo, st State) {
			c.mu.Lock()
			c.info = info
			c.handshaking = false
			c.clearAwaitLocked()
			c.recomputeLocked(false)
			c.mu.Unlock()
			if st != StateIdle {
				pctx, pcancel := context.WithTimeout(c.life, time.Second)
				c.probeShell(pctx)
				pcancel()
			}
		})
		return nil
	}
	info, err := c.handshake(ctx, tr, gen)
	if err != nil {
		c.mu.Lock()
		c.tr = nil
		c.mu.Unlock()
		tr.close()
		return err
	}
	c.mu.Lock()
	c.info = info
	c.handshaking = false
	c.recomputeLocked(false)
	c.mu.Unlock()
	if st != StateIdle {
		// Nothing outside the protocol could tell: the shell probe finds a running cell.
		c.probeShell(ctx)
	}
	c.wg.Add(1)
	go c.supervise()
	return nil
}

// handshakeRoom is what ctx must leave for a kernel still read as "starting" to get its
// handshake inline: the reply comes once the kernel is up, which a fresh kernel is within
// a few seconds.
const handshakeRoom = 5 * time.Second

// roomForHandshake reports that ctx has no deadline or leaves handshakeRoom before it.
func roomForHandshake(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) >= handshakeRoom
}

// passiveState is the kernel's state as seen without sending it anything: busy when IOPub
// showed another client's request starting and not ending, else what the observer says
// (StateUnknown without one, after a short look at IOPub).
func (c *Client) passiveState(ctx context.Context) State {
	st := StateUnknown
	if c.observe != nil {
		st = c.observe(ctx)
	} else {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	c.mu.Lock()
	others := c.busyOthers
	if c.busy[awaitKey] {
		others--
	}
	c.mu.Unlock()
	if others > 0 {
		return StateBusy
	}
	return st
}

// deferHandshake marks the client busy with awaitKey and completes the connection in the
// background once the kernel is idle; then receives the kernel_info and the state seen
// just before sending it.
func (c *Client) deferHandshake(tr transport, gen int, then func(KernelInfo, State)) {
	c.mu.Lock()
	c.awaiting = true
	if !c.busy[awaitKey] {
		c.busy[awaitKey] = true
		c.busyOthers++
	}
	c.recomputeLocked(false)
	c.mu.Unlock()
	c.wg.Add(1)
	go c.handshakeWhenIdle(tr, gen, then)
}

// clearAwaitLocked ends the wait deferHandshake began. c.mu must be held.
func (c *Client) clearAwaitLocked() {
	c.awaiting = false
	if c.busy[awaitKey] {
		delete(c.busy, awaitKey)
		c.busyOthers--
	}
}

// startingGrace is how long a kernel seen "starting" is left alone before the deferred
// handshake is sent all the same (handshakeWhenIdle).
const startingGrace = 3 * time.Second

// busyDeferCap bounds how long the deferred handshake waits on a kernel read as busy.
const busyDeferCap = 20 * time.Second

// handshakeWhenIdle completes a connection made while the kernel was busy: it looks at the
// kernel until it is no longer seen busy, then sends the handshake. A newer transport
// generation (a reconnect) takes over from it.
func (c *Client) handshakeWhenIdle(tr transport, gen int, then func(KernelInfo, State)) {
	defer c.wg.Done()
	startingSince, busySince := time.Time{}, time.Time{}
	for {
		select {
		case <-c.done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		c.mu.Lock()
		stale := c.gen != gen || c.closed
		c.mu.Unlock()
		if stale {
			return
		}
		st := c.passiveState(c.life)
		if st == StateBusy {
			// The passive readings can stay "busy" on a loaded machine (a main thread that is
			// runnable at every sample, a server that missed the idle status): after
			// busyDeferCap the handshake is sent all the same, so a kernel is never left
			// unattached; it then waits behind a cell that really runs, as it always did.
			if busySince.IsZero() {
				busySince = time.Now()
			}
			startingSince = time.Time{}
			if time.Since(busySince) < busyDeferCap {
				continue
			}
		}
		if st == StateStarting {
			// "starting" is not a user's cell: it is what a Jupyter Server reports until it
			// sees a status message, and it can miss the only one a fresh kernel sends (its
			// IOPub subscription joins late), then reports "starting" until someone asks the
			// kernel something. Give a real start a moment, then handshake: the reply comes
			// once the kernel is up.
			if startingSince.IsZero() {
				startingSince = time.Now()
			}
			if time.Since(startingSince) < startingGrace {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(c.life, 10*time.Second)
		info, err := c.handshake(ctx, tr, gen)
		cancel()
		if err != nil {
			continue
		}
		c.mu.Lock()
		stale = c.gen != gen || c.closed
		c.mu.Unlock()
		if !stale {
			then(info, st)
		}
		return
	}
}

// AwaitingIdle reports that the client is connected but has sent the kernel nothing yet:
// the kernel was running a cell when we came, and the handshake waits for it to end.
func (c *Client) AwaitingIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.awaiting
}

// genSink routes a transport's input to the client, tagged with its generation.
type genSink struct {
	c   *Client
	gen int
}

func (s genSink) deliver(ch channel, m *Message) { s.c.deliver(s.gen, ch, m) }

func (s genSink) lost(err error) { s.c.transportLost(s.gen, err) }

// openTransport dials a new transport generation and installs it.
func (c *Client) openTransport(ctx context.Context) (transport, int, error) {
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	tr, err := c.dial(ctx, genSink{c, gen})
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		tr.close()
		return nil, 0, ErrClosed
	}
	old := c.tr
	c.tr = tr
	// Statuses seen on the old connection are void: the new one reports afresh.
	c.busy = map[string]bool{}
	c.busyOthers = 0
	c.awaiting = false
	c.handshaking = true
	c.mu.Unlock()
	if old != nil {
		old.close()
	}
	return tr, gen, nil
}

// handshake sends kernel_info_request on control until a reply AND an IOPub message arrive:
// the IOPub message proves our subscription is active (ZeroMQ's slow joiner). Control answers
// even while the user's cell runs.
func (c *Client) handshake(ctx context.Context, tr transport, gen int) (KernelInfo, error) {
	var info KernelInfo
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	gotReply := false
	for attempt := 0; ; attempt++ {
		m, err := c.sess.newMessage("kernel_info_request", struct{}{})
		if err != nil {
			return info, err
		}
		cl := c.register(m.Header.MsgID, chControl, nil)
		seenBefore := c.iopubSeen(gen)
		if err := tr.send(chControl, m); err != nil {
			c.unregister(cl)
			return info, fmt.Errorf("send kernel_info_request: %w", err)
		}
		wait := 500 * time.Millisecond << min(attempt, 3)
		t := time.NewTimer(wait)
		var reply *Message
		select {
		case reply = <-cl.reply:
		case err := <-cl.fail:
			t.Stop()
			c.unregister(cl)
			return info, err
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			c.unregister(cl)
			if gotReply {
				return info, fmt.Errorf("kernel answers on control but nothing arrives on IOPub (wrong iopub_port? a firewall?): %w", ctx.Err())
			}
			return info, fmt.Errorf("%w (no kernel_info_reply on control: a wrong key makes the kernel drop our messages silently; or the kernel is not the one this file describes): %v", ErrNoAnswer, ctx.Err())
		}
		t.Stop()
		if reply == nil {
			c.unregister(cl)
			continue
		}
		gotReply = true
		// The reply arrived: wait briefly for the matching IOPub idle (or any IOPub message).
		t = time.NewTimer(300 * time.Millisecond)
		select {
		case <-cl.idle:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		c.unregister(cl)
		if info, err = decodeKernelInfo(reply.Content); err != nil {
			return info, err
		}
		info.Session = reply.Header.Session
		if c.iopubSeen(gen) > seenBefore || isClosed(cl.idle) {
			if c.ready != nil {
				c.ready()
			}
			return info, nil
		}
		if ctx.Err() != nil {
			return info, fmt.Errorf("kernel answered but no IOPub message arrived (cannot subscribe to IOPub): %w", ctx.Err())
		}
	}
}

// probeShell learns whether the shell channel is free: control answers while a cell runs,
// so a shell kernel_info_request is sent and counted as busy until its reply. If the user's
// cell is running, the probe waits behind it and the kernel reads as busy meanwhile.
func (c *Client) probeShell(ctx context.Context) {
	m, err := c.sess.newMessage("kernel_info_request", struct{}{})
	if err != nil {
		return
	}
	cl := c.register(m.Header.MsgID, chShell, nil)
	c.mu.Lock()
	c.busy["probe:"+m.Header.MsgID] = true
	c.busyOthers++ // the probe stands for whatever is running: it is not "ours"
	c.recomputeLocked(false)
	tr := c.tr
	c.mu.Unlock()
	clear := func() {
		c.mu.Lock()
		if c.busy["probe:"+m.Header.MsgID] {
			delete(c.busy, "probe:"+m.Header.MsgID)
			c.busyOthers--
		}
		delete(c.busy, m.Header.MsgID) // the probe's own busy, if its idle got lost
		c.recomputeLocked(false)
		c.mu.Unlock()
		c.unregister(cl)
	}
	if tr == nil || tr.send(chShell, m) != nil {
		clear()
		return
	}
	wait := func() {
		select {
		case <-cl.reply:
		case <-cl.fail:
		case <-c.done:
		}
		clear()
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-cl.reply:
		// Its idle status follows at once: let it land so State() reads idle.
		select {
		case <-cl.idle:
		case <-t.C:
		}
		clear()
	case <-cl.fail:
		clear()
	case <-t.C:
		go wait()
	case <-ctx.Done():
		go wait()
	}
}

func (c *Client) iopubSeen(gen int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return 0
	}
	return c.iopubN
}

// decodeKernelInfo reads kernel_info_reply content.
func decodeKernelInfo(raw []byte) (KernelInfo, error) {
	var r struct {
		ProtocolVersion       string `json:"protocol_version"`
		Implementation        string `json:"implementation"`
		ImplementationVersion string `json:"implementation_version"`
		LanguageInfo          struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"language_info"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return KernelInfo{}, fmt.Errorf("decode kernel_info_reply: %w", err)
	}
	return KernelInfo{
		ProtocolVersion:       r.ProtocolVersion,
		Implementation:        r.Implementation,
		ImplementationVersion: r.ImplementationVersion,
		LanguageName:          r.LanguageInfo.Name,
		LanguageVersion:       r.LanguageInfo.Version,
	}, nil
}
