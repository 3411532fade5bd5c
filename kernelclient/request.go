package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrNoAnswer: the kernel took a request but never answered within the deadline. With a
// kernel that is otherwise alive this usually means a wrong key (the kernel drops messages
// with a bad signature without a word).
var ErrNoAnswer = errors.New("kernel did not answer: wrong key?")

// acquire takes the right to send one request (ours go one at a time).
func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.reqSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: another premortem request is in flight: %v", ErrBusy, ctx.Err())
	case <-c.done:
		return ErrClosed
	}
}

func (c *Client) release() { <-c.reqSem }

// waitIdle returns once the kernel is idle. A busy kernel is waited for only while ctx
// allows; a context without deadline gets ErrBusy at once: premortem never queues behind
// the user's cell.
func (c *Client) waitIdle(ctx context.Context, hasDeadline bool) error {
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return ErrClosed
		case c.dead:
			c.mu.Unlock()
			return ErrDead
		case c.tr == nil:
			// Reconnecting: wait like for busy.
		case len(c.busy) == 0:
			c.mu.Unlock()
			return nil
		}
		others := c.busyOthers > 0
		wake := c.wake
		c.mu.Unlock()
		if !hasDeadline && others {
			return fmt.Errorf("%w: it is running another client's code", ErrBusy)
		}
		select {
		case <-wake:
		case <-ctx.Done():
			if others {
				return fmt.Errorf("%w: still running another client's code at the deadline", ErrBusy)
			}
			return fmt.Errorf("%w: %v", ErrBusy, ctx.Err())
		}
	}
}

// requestOpts tune request.
type requestOpts struct {
	// onIOPub receives IOPub messages whose parent is this request.
	onIOPub func(*Message)
	// noDefaultTimeout: wait as long as ctx allows even without deadline (Execute).
	noDefaultTimeout bool
	// onCancel runs when ctx ends before the reply (Execute interrupts the kernel).
	onCancel func()
}

// request sends one of our requests on ch and returns the reply. For shell requests it also
// waits briefly for the IOPub idle that follows, so the busy time is measured and the
// kernel is known idle before our next request.
func (c *Client) request(ctx context.Context, ch channel, msgType string, content any, o requestOpts) (*Message, error) {
	_, callerDeadline := ctx.Deadline()
	if !o.noDefaultTimeout {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.ReplyTimeout)
			defer cancel()
		}
	}
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.release()
	if err := c.waitIdle(ctx, callerDeadline); err != nil {
		return nil, err
	}
	m, err := c.sess.newMessage(msgType, content)
	if err != nil {
		return nil, err
	}
	cl := c.register(m.Header.MsgID, ch, o.onIOPub)
	defer c.finish(cl)
	c.mu.Lock()
	tr := c.tr
	restarts := c.restarts
	c.mu.Unlock()
	if tr == nil {
		return nil, fmt.Errorf("%w: not connected (reconnecting)", ErrDead)
	}
	sent := time.Now()
	if err := tr.send(ch, m); err != nil {
		return nil, fmt.Errorf("send %s: %w", msgType, err)
	}
	var reply *Message
	select {
	case reply = <-cl.reply:
	case err := <-cl.fail:
		return nil, c.failure(ctx, err, restarts)
	case <-ctx.Done():
		if o.onCancel != nil {
			o.onCancel()
		}
		return nil, c.noAnswer(msgType, ctx, sent)
	}
	c.mu.Lock()
	c.stats.Requests++
	c.mu.Unlock()
	if ch == chShell || ch == chControl {
		// ipykernel sends the reply just before the idle status; both are on their way.
		t := time.NewTimer(time.Second)
		select {
		case <-cl.idle:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return reply, nil
}

// noAnswer builds the error for a request whose reply did not arrive in time.
func (c *Client) noAnswer(msgType string, ctx context.Context, sent time.Time) error {
	c.mu.Lock()
	saw := c.iopubN
	dead := c.dead
	c.mu.Unlock()
	if dead {
		return fmt.Errorf("%s: %w", msgType, ErrDead)
	}
	_ = saw
	return fmt.Errorf("%s after %v: %w (or the kernel is wedged): %v", msgType, time.Since(sent).Round(time.Millisecond), ErrNoAnswer, ctx.Err())
}

// failure maps a pending-call failure to the error callers switch on: a restart during the
// call wins over a lost connection.
func (c *Client) failure(ctx context.Context, err error, restarts int) error {
	if errors.Is(err, ErrRestarted) || errors.Is(err, ErrClosed) {
		return err
	}
	// A lost connection is a restart or a death: wait (briefly, within ctx) to learn which.
	deadline := time.Now().Add(c.opts.HeartbeatInterval * time.Duration(c.opts.HeartbeatMisses+1))
	for {
		c.mu.Lock()
		r, dead, closed, wake := c.restarts, c.dead, c.closed, c.wake
		c.mu.Unlock()
		switch {
		case r != restarts:
			return ErrRestarted
		case closed:
			return ErrClosed
		case dead:
			return fmt.Errorf("%w (%v)", ErrDead, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		t := time.NewTimer(left)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		t.Stop()
	}
}

// executeReply is the content of execute_reply.
type executeReply struct {
	Status          string                     `json:"status"`
	ExecutionCount  int                        `json:"execution_count"`
	Ename           string                     `json:"ename"`
	Evalue          string                     `json:"evalue"`
	Traceback       []string                   `json:"traceback"`
	UserExpressions map[string]json.RawMessage `json:"user_expressions"`
}

// Execute runs code as a user would (store_history, execution count advances). When ctx
// ends first the kernel is interrupted and ctx's error returned.
func (c *Client) Execute(ctx context.Context, code string) (*ExecuteResult, error) {
	res := &ExecuteResult{}
	var (
		mu          sync.Mutex
		out, errOut strings.Builder
	)
	onIOPub := func(m *Message) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Header.MsgType {
		case "stream":
			var s struct {
				Name string `json:"name"`
				Text string `json:"text"`
			}
			if json.Unmarshal(m.Content, &s) == nil {
				if s.Name == "stderr" {
					errOut.WriteString(s.Text)
				} else {
					out.WriteString(s.Text)
				}
			}
		case "error":
			var e struct {
				Ename     string   `json:"ename"`
				Evalue    string   `json:"evalue"`
				Traceback []string `json:"traceback"`
			}
			if json.Unmarshal(m.Content, &e) == nil {
				res.Ename, res.Evalue, res.Traceback = e.Ename, e.Evalue, e.Traceback
			}
		}
	}
	start := time.Now()
	content := map[string]any{
		"code": code, "silent": false, "store_history": true,
		"user_expressions": map[string]string{}, "allow_stdin": false, "stop_on_error": false,
	}
	reply, err := c.request(ctx, chShell, "execute_request", content, requestOpts{
		onIOPub:          onIOPub,
		noDefaultTimeout: true,
		onCancel: func() {
			// In the background: Execute must not block past its caller's deadline.
			go func() {
				ictx, cancel := context.WithTimeout(c.life, 2*time.Second)
				defer cancel()
				_ = c.Interrupt(ictx)
			}()
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("execute (interrupted): %w", ctx.Err())
		}
		return nil, fmt.Errorf("execute: %w", err)
	}
	var r executeReply
	if err := json.Unmarshal(reply.Content, &r); err != nil {
		return nil, fmt.Errorf("decode execute_reply: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	res.ExecutionCount = r.ExecutionCount
	res.Status = r.Status
	if r.Status == "error" && res.Ename == "" {
		res.Ename, res.Evalue, res.Traceback = r.Ename, r.Evalue, r.Traceback
	}
	res.Stdout = out.String()
	res.Stderr = errOut.String()
	res.Duration = time.Since(start)
	return res, nil
}

// SetInterrupter replaces how Interrupt reaches the kernel (Launch uses SIGINT for kernelspecs
// without interrupt_mode "message").
func (c *Client) SetInterrupter(f func(ctx context.Context) error) {
	c.mu.Lock()
	c.interrupt = f
	c.mu.Unlock()
}

// Interrupt interrupts the running cell: interrupt_request on control unless an interrupter
// was set.
func (c *Client) Interrupt(ctx context.Context) error {
	c.mu.Lock()
	f := c.interrupt
	c.mu.Unlock()
	if f != nil {
		return f(ctx)
	}
	// Sent directly (not through request): the request semaphore is held by the call being
	// interrupted.
	if _, err := c.controlRequest(ctx, "interrupt_request", struct{}{}); err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	return nil
}

// controlRequest sends a control message outside the one-at-a-time order of our other
// requests and without waiting for idle: control exists to reach a busy kernel (interrupt,
// shutdown).
func (c *Client) controlRequest(ctx context.Context, msgType string, content any) (*Message, error) {
	c.mu.Lock()
	tr := c.tr
	c.mu.Unlock()
	if tr == nil {
		return nil, ErrDead
	}
	m, err := c.sess.newMessage(msgType, content)
	if err != nil {
		return nil, err
	}
	cl := c.register(m.Header.MsgID, chControl, nil)
	defer c.finish(cl)
	if err := tr.send(chControl, m); err != nil {
		return nil, err
	}
	select {
	case r := <-cl.reply:
		return r, nil
	case err := <-cl.fail:
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("no %s reply: %w", strings.TrimSuffix(msgType, "_request"), ctx.Err())
	}
}

// exprResult is one user_expressions entry.
type exprResult struct {
	Status    string            `json:"status"`
	Data      map[string]string `json:"data"`
	Ename     string            `json:"ename"`
	Evalue    string            `json:"evalue"`
	Traceback []string          `json:"traceback"`
}

// evalSilent evaluates Python expressions through user_expressions of a silent execute with
// empty code: nothing runs as a cell, history and the execution count do not move.
func (c *Client) evalSilent(ctx context.Context, exprs map[string]string) (map[string]exprResult, int, error) {
	content := map[string]any{
		"code": "", "silent": true, "store_history": false,
		"user_expressions": exprs, "allow_stdin": false, "stop_on_error": false,
	}
	var r executeReply
	// After a failed cell ipykernel aborts the requests that arrive in the next moment
	// (stop_on_error of the user's execute): ours gets status "aborted" and is resent.
	for attempt := 0; ; attempt++ {
		reply, err := c.request(ctx, chShell, "execute_request", content, requestOpts{})
		if err != nil {
			return nil, 0, err
		}
		r = executeReply{}
		if err := json.Unmarshal(reply.Content, &r); err != nil {
			return nil, 0, fmt.Errorf("decode execute_reply: %w", err)
		}
		if r.Status != "aborted" || attempt == 3 {
			break
		}
	}
	if r.Status != "ok" {
		return nil, r.ExecutionCount, fmt.Errorf("silent execute: status %q: %s: %s", r.Status, r.Ename, r.Evalue)
	}
	out := make(map[string]exprResult, len(r.UserExpressions))
	for k, raw := range r.UserExpressions {
		var e exprResult
		if err := json.Unmarshal(raw, &e); err != nil {
			// data may hold non-string mime values (application/json): keep text/plain only.
			var loose struct {
				Status    string                     `json:"status"`
				Data      map[string]json.RawMessage `json:"data"`
				Ename     string                     `json:"ename"`
				Evalue    string                     `json:"evalue"`
				Traceback []string                   `json:"traceback"`
			}
			if err := json.Unmarshal(raw, &loose); err != nil {
				return nil, r.ExecutionCount, fmt.Errorf("decode user_expressions[%s]: %w", k, err)
			}
			e = exprResult{Status: loose.Status, Ename: loose.Ename, Evalue: loose.Evalue, Traceback: loose.Traceback, Data: map[string]string{}}
			var s string
			if json.Unmarshal(loose.Data["text/plain"], &s) == nil {
				e.Data["text/plain"] = s
			}
		}
		out[k] = e
	}
	return out, r.ExecutionCount, nil
}

// finish unregisters our call and forgets its busy status if its idle never came (the reply
// did, or the call was abandoned): our own requests must never make the kernel look busy.
func (c *Client) finish(cl *call) {
	c.mu.Lock()
	delete(c.pending, cl.id)
	if c.busy[cl.id] {
		delete(c.busy, cl.id)
		c.recomputeLocked(true)
	}
	c.mu.Unlock()
}
