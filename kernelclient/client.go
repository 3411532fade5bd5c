package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// channel names a Jupyter channel.
type channel string

const (
	chShell   channel = "shell"
	chControl channel = "control"
	chStdin   channel = "stdin"
	chIOPub   channel = "iopub"
)

// transport carries messages to and from one kernel: ZeroMQ sockets or a Jupyter Server
// WebSocket. Incoming messages and the loss of the transport are reported to the sink it was
// created with.
type transport interface {
	send(ch channel, m *Message) error
	// ping checks liveness (heartbeat); nil means the kernel answered.
	ping(ctx context.Context) error
	close() error
}

// sink receives what a transport reads. Each transport generation has its own sink so that
// late messages from a replaced transport are ignored.
type sink interface {
	deliver(ch channel, m *Message)
	lost(err error)
}

// dialFunc opens a new transport (used for the first connection and for reconnects).
type dialFunc func(ctx context.Context, s sink) (transport, error)

// Options tune a Client. The zero value is usable.
type Options struct {
	// HeartbeatInterval between liveness probes (default 1 s).
	HeartbeatInterval time.Duration
	// HeartbeatMisses after which the kernel is declared dead (default 3).
	HeartbeatMisses int
	// ReplyTimeout bounds a request when the caller's context has no deadline (default 30 s;
	// Execute has no default bound).
	ReplyTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = time.Second
	}
	if o.HeartbeatMisses <= 0 {
		o.HeartbeatMisses = 3
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 30 * time.Second
	}
	return o
}

// Client is a connection to one kernel. It implements Kernel. Safe for concurrent use; its
// own requests are sent one at a time, and only to an idle kernel.
type Client struct {
	sess *session
	opts Options
	dial dialFunc
	name string // what we connected to, for errors

	mu          sync.Mutex
	tr          transport
	gen         int
	info        KernelInfo
	state       State
	busy        map[string]bool // parent msg ids between busy and idle (any client)
	busyOthers  int             // how many of busy are not ours
	wake        chan struct{}   // closed and replaced on every change callers wait on
	pending     map[string]*call
	runs        map[string]*run // other clients' executions seen on IOPub
	dead        bool
	closed      bool
	restarts    int
	lastBusy    time.Duration
	stats       Stats
	iopubN      int
	injectedFor string // kernel session the inspector was last injected in
	injections  int
	handshaking bool // a (re)connect handshake is running: session changes are its business
	interrupt   func(ctx context.Context) error
	lostCh      chan struct{}
	// observe reads the kernel's state without sending it anything (see idle.go); nil
	// when nothing outside the protocol can tell.
	observe observer
	// ready is told when a handshake completed (nil: nobody to tell).
	ready func()
	// awaiting: connected, but the kernel was running a cell when we came, so the
	// handshake (our first request) waits for it to end. awaitKey stands in c.busy
	// meanwhile.
	awaiting bool

	reqSem chan struct{}
	events *eventQueue
	done   chan struct{}
	// life ends at Close, so that background work (reconnects, heartbeats) stops at once.
	life       context.Context
	cancelLife context.CancelFunc
	wg         sync.WaitGroup
}

// Stats are counters about our own requests, for benchmarks and diagnostics.
type Stats struct {
	// Requests is the number of our requests that got a reply.
	Requests int
	// BusyTotal is the sum over our requests of the time the kernel reported itself busy
	// for them (IOPub busy -> idle, kernel timestamps).
	BusyTotal time.Duration
	// LastBusy is that time for the last request.
	LastBusy time.Duration
	// MaxBusy is the longest.
	MaxBusy time.Duration
}

// call is one of our requests waiting for its reply.
type call struct {
	id      string
	ch      channel
	reply   chan *Message
	idle    chan struct{}
	idleSet bool
	fail    chan error
	busyAt  time.Time
	onIOPub func(m *Message)
}

// run is an execution by another client (or by our Execute) seen on IOPub.
type run struct {
	code      string
	count     int
	errored   bool
	ename     string
	evalue    string
	traceback []string
	ours      bool
}

func newClient(name string, dial dialFunc, opts Options) *Client {
	life, cancel := context.WithCancel(context.Background())
	return &Client{
		life:       life,
		cancelLife: cancel,
		sess:       newSession(),
		opts:       opts.withDefaults(),
		dial:       dial,
		name:       name,
		state:      StateUnknown,
		busy:       map[string]bool{},
		wake:       make(chan struct{}),
		pending:    map[string]*call{},
		runs:       map[string]*run{},
		lostCh:     make(chan struct{}, 1),
		reqSem:     make(chan struct{}, 1),
		events:     newEventQueue(),
		done:       make(chan struct{}),
	}
}

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
	// A kernel still starting is waited for as long as ctx leaves room for the handshake;
	// a busy one for awaitInline.
	inline := time.Now().Add(awaitInline)
	starting := inline
	if dl, ok := ctx.Deadline(); ok {
		starting = dl.Add(-2 * time.Second)
	}
	for ctx.Err() == nil && ((st == StateBusy && time.Now().Before(inline)) || (st == StateStarting && time.Now().Before(starting))) {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		st = c.passiveState(ctx)
	}
	if st == StateBusy || st == StateStarting {
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
func (s genSink) lost(err error)                 { s.c.transportLost(s.gen, err) }

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

// register records a pending call.
func (c *Client) register(id string, ch channel, onIOPub func(*Message)) *call {
	cl := &call{id: id, ch: ch, reply: make(chan *Message, 1), idle: make(chan struct{}), fail: make(chan error, 1), onIOPub: onIOPub}
	c.mu.Lock()
	c.pending[id] = cl
	c.mu.Unlock()
	return cl
}

func (c *Client) unregister(cl *call) {
	c.mu.Lock()
	delete(c.pending, cl.id)
	c.mu.Unlock()
}

// broadcastLocked wakes everyone waiting on a state change. c.mu must be held.
func (c *Client) broadcastLocked() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// recomputeLocked derives the execution state from the busy set and emits a status event
// when it changes. c.mu must be held.
func (c *Client) recomputeLocked(ours bool) {
	st := StateIdle
	switch {
	case c.dead:
		st = StateDead
	case len(c.busy) > 0:
		st = StateBusy
	}
	if st != c.state {
		c.state = st
		c.events.push(Event{Kind: EventStatus, State: st, Ours: ours})
	}
	c.broadcastLocked()
}

// deliver handles one incoming message from transport generation gen.
func (c *Client) deliver(gen int, ch channel, m *Message) {
	c.mu.Lock()
	if gen != c.gen || c.closed {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	switch ch {
	case chIOPub:
		c.handleIOPub(m)
	case chShell, chControl:
		c.mu.Lock()
		cl := c.pending[m.Parent.MsgID]
		c.mu.Unlock()
		if cl != nil {
			select {
			case cl.reply <- m:
			default:
			}
		}
	case chStdin:
		c.handleStdin(m)
	}
}

// handleStdin answers input_request for our own requests with an empty value so the kernel
// never waits on us; requests of other clients never reach our socket, and are never
// answered anyway.
func (c *Client) handleStdin(m *Message) {
	if m.Header.MsgType != "input_request" || m.Parent.Session != c.sess.id {
		return
	}
	reply, err := c.sess.reply(m, "input_reply", map[string]any{"value": "", "status": "error"})
	if err != nil {
		return
	}
	c.mu.Lock()
	tr := c.tr
	c.mu.Unlock()
	if tr != nil {
		_ = tr.send(chStdin, reply)
	}
}

// handleIOPub tracks state, routes side effects to our pending calls and turns other
// clients' executions into events.
func (c *Client) handleIOPub(m *Message) {
	ours := m.Parent.Session == c.sess.id
	pid := m.Parent.MsgID
	c.mu.Lock()
	c.iopubN++
	if !c.handshaking && m.Header.Session != "" && m.Header.Session != c.info.Session && isKernelMessage(m) {
		if c.info.Session == "" {
			c.info.Session = m.Header.Session // after a server-announced restart
		} else {
			c.restartedLocked(m.Header.Session)
		}
	}
	cl := c.pending[pid]
	c.mu.Unlock()

	switch m.Header.MsgType {
	case "status":
		var st struct {
			State string `json:"execution_state"`
		}
		_ = json.Unmarshal(m.Content, &st)
		c.handleStatus(m, pid, st.State, ours, cl)
		return
	case "execute_input":
		var in struct {
			Code  string `json:"code"`
			Count int    `json:"execution_count"`
		}
		_ = json.Unmarshal(m.Content, &in)
		c.mu.Lock()
		c.runs[pid] = &run{code: in.Code, count: in.Count, ours: ours}
		if len(c.runs) > 1024 { // idle lost: forget the oldest arbitrary entries
			for k := range c.runs {
				if k != pid {
					delete(c.runs, k)
					break
				}
			}
		}
		c.mu.Unlock()
		c.events.push(Event{Kind: EventExecuteInput, State: StateBusy, ExecutionCount: in.Count, Code: in.Code, Ours: ours})
	case "shutdown_reply":
		// ipykernel publishes its shutdown_reply on IOPub too: with restart set, a restart
		// is under way (jupyter_client's restart_kernel), whoever asked for it.
		var sr struct {
			Restart bool `json:"restart"`
		}
		if json.Unmarshal(m.Content, &sr) == nil && sr.Restart {
			c.events.push(Event{Kind: EventStatus, State: StateStarting})
		}
	case "error":
		var e struct {
			Ename     string   `json:"ename"`
			Evalue    string   `json:"evalue"`
			Traceback []string `json:"traceback"`
		}
		_ = json.Unmarshal(m.Content, &e)
		c.mu.Lock()
		if r := c.runs[pid]; r != nil {
			r.errored, r.ename, r.evalue, r.traceback = true, e.Ename, e.Evalue, e.Traceback
		}
		c.mu.Unlock()
	}
	if cl != nil && cl.onIOPub != nil {
		cl.onIOPub(m)
	}
}

// isKernelMessage excludes messages a Jupyter Server synthesizes on the WebSocket (they carry
// the server's session, not the kernel's).
func isKernelMessage(m *Message) bool {
	if m.Header.MsgType != "status" {
		return true
	}
	var st struct {
		State string `json:"execution_state"`
	}
	_ = json.Unmarshal(m.Content, &st)
	return st.State == "busy" || st.State == "idle" || st.State == "starting"
}

func (c *Client) handleStatus(m *Message, pid, st string, ours bool, cl *call) {
	at := parseDate(m.Header.Date)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case "busy":
		if pid == "" {
			return
		}
		if !c.busy[pid] {
			c.busy[pid] = true
			if !ours {
				c.busyOthers++
			}
		}
		if cl != nil {
			cl.busyAt = at
		}
		c.recomputeLocked(ours)
	case "idle":
		if c.busy[pid] {
			delete(c.busy, pid)
			if !ours {
				c.busyOthers--
			}
		}
		if cl != nil && !cl.idleSet {
			cl.idleSet = true
			if !cl.busyAt.IsZero() && !at.IsZero() {
				d := at.Sub(cl.busyAt)
				c.lastBusy = d
				c.stats.LastBusy = d
				c.stats.BusyTotal += d
				if d > c.stats.MaxBusy {
					c.stats.MaxBusy = d
				}
			}
			close(cl.idle)
		}
		if r := c.runs[pid]; r != nil {
			delete(c.runs, pid)
			ev := Event{Kind: EventExecuteReply, State: StateIdle, ExecutionCount: r.count, Code: r.code, Status: "ok", Ours: r.ours}
			if r.errored {
				ev.Status, ev.Ename, ev.Evalue, ev.Traceback = "error", r.ename, r.evalue, r.traceback
			}
			c.events.push(ev)
		}
		c.recomputeLocked(ours)
	case "starting":
		c.busy = map[string]bool{}
		c.busyOthers = 0
		c.state = StateStarting
		c.events.push(Event{Kind: EventStatus, State: StateStarting})
		c.broadcastLocked()
	case "restarting":
		// A Jupyter Server announces a restart on the WebSocket (the ZeroMQ side is
		// reconnected by the server, not us).
		c.restartedLocked("")
	case "dead":
		c.markDeadLocked()
	}
}

// parseDate parses a Jupyter header date (ISO 8601, microseconds, Z or offset).
func parseDate(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05.999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// restartedLocked handles a new kernel session (c.mu held): pending calls fail with
// ErrRestarted, the inspector must be injected again, and EventRestart is emitted.
// newSession "" means not known yet: the next kernel message's session is adopted.
func (c *Client) restartedLocked(newSession string) {
	c.info.Session = newSession
	c.restarts++
	c.injectedFor = ""
	c.busy = map[string]bool{}
	c.busyOthers = 0
	c.awaiting = false
	c.runs = map[string]*run{}
	c.dead = false
	for _, cl := range c.pending {
		select {
		case cl.fail <- ErrRestarted:
		default:
		}
	}
	c.state = StateIdle
	c.events.push(Event{Kind: EventRestart, State: StateIdle})
	c.broadcastLocked()
}

// transportLost is called by a transport when a socket fails.
func (c *Client) transportLost(gen int, err error) {
	c.mu.Lock()
	if gen != c.gen || c.closed {
		c.mu.Unlock()
		return
	}
	lostErr := fmt.Errorf("%w: connection to the kernel lost: %v", ErrDead, err)
	for _, cl := range c.pending {
		select {
		case cl.fail <- lostErr:
		default:
		}
	}
	c.mu.Unlock()
	select {
	case c.lostCh <- struct{}{}:
	default:
	}
}

func (c *Client) markDeadLocked() {
	if c.dead {
		return
	}
	c.dead = true
	c.state = StateDead
	c.busy = map[string]bool{}
	c.busyOthers = 0
	c.awaiting = false
	for _, cl := range c.pending {
		select {
		case cl.fail <- ErrDead:
		default:
		}
	}
	c.events.push(Event{Kind: EventDead, State: StateDead})
	c.broadcastLocked()
}

// MarkDead declares the kernel dead at once (used when its process is known to be gone).
func (c *Client) MarkDead() {
	c.mu.Lock()
	c.markDeadLocked()
	c.mu.Unlock()
}

// supervise runs the heartbeat and reconnects after a lost transport. A reconnect that finds
// a new kernel session is a restart.
func (c *Client) supervise() {
	defer c.wg.Done()
	tick := time.NewTicker(c.opts.HeartbeatInterval)
	defer tick.Stop()
	misses := 0
	for {
		select {
		case <-c.done:
			return
		case <-c.lostCh:
			c.reconnect()
			misses = 0
		case <-tick.C:
			c.mu.Lock()
			tr := c.tr
			c.mu.Unlock()
			if tr == nil {
				c.reconnect()
				continue
			}
			ctx, cancel := context.WithTimeout(c.life, c.opts.HeartbeatInterval)
			err := tr.ping(ctx)
			cancel()
			if err == nil {
				misses = 0
				continue
			}
			misses++
			if misses >= c.opts.HeartbeatMisses {
				c.MarkDead()
				c.reconnect()
				misses = 0
			}
		}
	}
}

// reconnect dials new transports until one completes the handshake, the client closes, or
// (while the kernel is gone) forever with backoff: a kernel restarted on the same ports
// comes back as EventRestart.
func (c *Client) reconnect() {
	lostAt := time.Now()
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-c.done:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(c.life, 3*time.Second)
		tr, gen, err := c.openTransport(ctx)
		if err == nil {
			// The new connection knows nothing of a cell already running: look before
			// sending, as at the first connection.
			st := c.passiveState(ctx)
			if st == StateBusy || st == StateStarting {
				cancel()
				c.deferHandshake(tr, gen, c.reconnected)
				return
			}
			var info KernelInfo
			info, err = c.handshake(ctx, tr, gen)
			if err == nil {
				cancel()
				c.reconnected(info, st)
				return
			}
			c.mu.Lock()
			if c.tr == tr {
				c.tr = nil
			}
			c.mu.Unlock()
			tr.close()
		}
		cancel()
		if errors.Is(err, ErrClosed) {
			return
		}
		c.mu.Lock()
		if !c.dead && time.Since(lostAt) > c.opts.HeartbeatInterval*time.Duration(c.opts.HeartbeatMisses) {
			c.markDeadLocked()
		}
		c.mu.Unlock()
		t := time.NewTimer(backoff)
		select {
		case <-c.done:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// reconnected completes a reconnect whose handshake got info; st is the kernel's state as
// seen before it (a shell probe finds a running cell when nothing else could tell). A new
// session is a restart.
func (c *Client) reconnected(info KernelInfo, st State) {
	c.mu.Lock()
	old := c.info.Session
	keep := info
	keep.Session = old
	c.info = keep
	c.dead = false
	c.handshaking = false
	c.clearAwaitLocked()
	if info.Session != old {
		// EventRestart comes first, so that a follower never mistakes the new kernel
		// for the old one answering again.
		c.restartedLocked(info.Session)
	} else {
		c.recomputeLocked(false)
		// The same kernel answers again: say so even when it was not declared dead yet
		// (a caller may have seen ErrDead from the lost connection).
		c.events.push(Event{Kind: EventStatus, State: c.state})
	}
	c.mu.Unlock()
	if st != StateIdle {
		pctx, pcancel := context.WithTimeout(c.life, time.Second)
		c.probeShell(pctx)
		pcancel()
	}
}

// Info returns what kernel_info_reply said.
func (c *Client) Info() KernelInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// State returns the last known execution state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Events delivers what happens on the kernel; closed by Close.
func (c *Client) Events() <-chan Event { return c.events.out }

// LastBusy is how long the kernel was busy (IOPub busy -> idle, kernel clock) for our last
// request: the delay our request could add to the user's next cell.
func (c *Client) LastBusy() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastBusy
}

// Stats returns counters about our requests.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close disconnects; the kernel keeps running.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	tr := c.tr
	c.tr = nil
	for _, cl := range c.pending {
		select {
		case cl.fail <- ErrClosed:
		default:
		}
	}
	c.broadcastLocked()
	c.mu.Unlock()
	close(c.done)
	c.cancelLife()
	var err error
	if tr != nil {
		err = tr.close()
	}
	c.wg.Wait()
	c.events.close()
	return err
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
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
