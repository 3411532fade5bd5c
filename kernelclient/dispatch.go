package kernelclient

import (
	"encoding/json"
	"time"
)

// This file routes what the kernel sends: replies to the pending calls, IOPub output and
// status (busy/idle, ours or another client's), stdin requests, a new session (restart).

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
