package kernelclient

import (
	"context"
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
	// Running, when set, tells whether the kernel's process exists and is scheduled (not
	// exited, not stopped). Launch sets it for the kernels it starts. While it says yes,
	// unanswered heartbeats are taken for a starved machine (swap, every core busy) rather
	// than a dead kernel, for RunningMissFactor times longer: the process's own exit is seen
	// at once, and request deadlines still bound a wedged kernel.
	Running func() bool
	// ReplyTimeout bounds a request when the caller's context has no deadline (default 30 s;
	// Execute has no default bound).
	ReplyTimeout time.Duration
}

// RunningMissFactor multiplies HeartbeatMisses while Options.Running says the kernel's
// process is scheduled.
const RunningMissFactor = 6

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

// RunningOthers reports whether the kernel is running another client's code.
func (c *Client) RunningOthers() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead && c.busyOthers > 0
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
