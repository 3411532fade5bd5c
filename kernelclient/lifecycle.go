package kernelclient

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file follows the kernel's life after connecting: a restart (a new session), the
// loss of a transport and reconnecting, the heartbeat supervisor, death.

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
			if c.deadByHeartbeat(misses) {
				c.MarkDead()
				c.reconnect()
				misses = 0
			}
		}
	}
}

// deadByHeartbeat decides whether misses unanswered heartbeats in a row make the kernel
// dead: HeartbeatMisses of them, or RunningMissFactor times as many for a process known to
// be scheduled. Under CI load or memory pressure a live kernel misses ten beats in a row,
// and a kernel declared dead fails the user's replay for nothing.
func (c *Client) deadByHeartbeat(misses int) bool {
	if misses < c.opts.HeartbeatMisses {
		return false
	}
	if c.opts.Running == nil || !c.opts.Running() {
		return true
	}
	return misses >= c.opts.HeartbeatMisses*RunningMissFactor
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
