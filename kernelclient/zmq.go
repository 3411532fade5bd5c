package kernelclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
)

// zmqTransport is the five ZeroMQ sockets of a local kernel: shell, control and stdin
// DEALERs (sharing our session id as identity, so stdin requests reach us), IOPub SUB and
// the heartbeat. One reader goroutine per socket.
//
// The heartbeat speaks REQ on the wire (an empty delimiter frame, then the payload) but
// through a DEALER: zmq4's REQ ties its reader to the last send, so a ping whose echo never
// comes would wedge it; the kernel's echo device cannot tell the difference.
type zmqTransport struct {
	signer *Signer
	sink   sink
	cancel context.CancelFunc

	shell, control, stdin, iopub, hb zmq4.Socket

	sendMu sync.Mutex // zmq4 sockets are not safe for concurrent Send of multipart messages
	hbMu   sync.Mutex // one heartbeat at a time
	hbIn   chan []byte
	hbSeq  atomic.Uint64

	closeOnce sync.Once
	wg        sync.WaitGroup
	closed    atomic.Bool
}

// quietLogger keeps zmq4 from writing to the user's stderr.
var quietLogger = log.New(io.Discard, "", 0)

// dialZMQ returns a dialFunc for a connection file. Each connection gets a fresh socket
// identity (shared by its shell, control and stdin, so stdin requests reach it): a kernel's
// ROUTER ignores a new peer that reuses an identity it has not yet seen disconnect.
func dialZMQ(ci ConnectionInfo, signer *Signer, identityBase string) dialFunc {
	var n atomic.Uint64
	return func(ctx context.Context, s sink) (transport, error) {
		return openZMQ(ctx, ci, signer, identityBase+"-"+strconv.FormatUint(n.Add(1), 10), s)
	}
}

func openZMQ(ctx context.Context, ci ConnectionInfo, signer *Signer, identity string, s sink) (*zmqTransport, error) {
	life, cancel := context.WithCancel(context.Background())
	t := &zmqTransport{signer: signer, sink: s, cancel: cancel, hbIn: make(chan []byte, 4)}
	dialTimeout := 2 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		dialTimeout = max(min(dialTimeout, time.Until(dl)), 10*time.Millisecond)
	}
	opts := func(id string) []zmq4.Option {
		o := []zmq4.Option{zmq4.WithLogger(quietLogger), zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(dialTimeout), zmq4.WithTimeout(5 * time.Second)}
		if id != "" {
			o = append(o, zmq4.WithID(zmq4.SocketIdentity(id)))
		}
		return o
	}
	t.shell = zmq4.NewDealer(life, opts(identity)...)
	t.control = zmq4.NewDealer(life, opts(identity)...)
	t.stdin = zmq4.NewDealer(life, opts(identity)...)
	t.iopub = zmq4.NewSub(life, opts("")...)
	t.hb = zmq4.NewDealer(life, opts("")...)
	if err := t.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.close()
		return nil, fmt.Errorf("subscribe iopub: %w", err)
	}

	// Dial in the background: zmq4's ZMTP handshake does not watch our context, and a
	// stale file's port may be held by something that never speaks ZMTP.
	errc := make(chan error, 1)
	go func() {
		for _, d := range []struct {
			name string
			sock zmq4.Socket
			port int
		}{{"shell", t.shell, ci.ShellPort}, {"control", t.control, ci.ControlPort}, {"stdin", t.stdin, ci.StdinPort}, {"iopub", t.iopub, ci.IOPubPort}, {"hb", t.hb, ci.HBPort}} {
			if err := d.sock.Dial(ci.endpoint(d.port)); err != nil {
				errc <- fmt.Errorf("connect %s channel at %s: %w", d.name, ci.endpoint(d.port), err)
				return
			}
		}
		errc <- nil
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.close()
			return nil, fmt.Errorf("%w: %v", ErrStale, err)
		}
	case <-ctx.Done():
		t.close()
		return nil, fmt.Errorf("connect to kernel: %w", ctx.Err())
	}
	for _, r := range []struct {
		ch   channel
		sock zmq4.Socket
	}{{chShell, t.shell}, {chControl, t.control}, {chStdin, t.stdin}, {chIOPub, t.iopub}} {
		t.wg.Add(1)
		go t.read(r.ch, r.sock)
	}
	t.wg.Add(1)
	go t.readHB()
	return t, nil
}

// read is the reader goroutine of one socket.
func (t *zmqTransport) read(ch channel, sock zmq4.Socket) {
	defer t.wg.Done()
	for {
		msg, err := sock.Recv()
		if err != nil {
			if !t.closed.Load() {
				t.sink.lost(fmt.Errorf("%s channel: %w", ch, err))
			}
			return
		}
		if len(msg.Frames) == 0 {
			continue
		}
		m, err := t.signer.Decode(msg.Frames)
		if err != nil {
			// Messages we cannot verify are dropped, as jupyter_client does.
			continue
		}
		t.sink.deliver(ch, m)
	}
}

// readHB reads heartbeat echoes.
func (t *zmqTransport) readHB() {
	defer t.wg.Done()
	for {
		msg, err := t.hb.Recv()
		if err != nil {
			if !t.closed.Load() {
				t.sink.lost(fmt.Errorf("heartbeat channel: %w", err))
			}
			return
		}
		if len(msg.Frames) == 0 {
			continue
		}
		select {
		case t.hbIn <- msg.Frames[len(msg.Frames)-1]:
		default:
		}
	}
}

func (t *zmqTransport) send(ch channel, m *Message) error {
	if t.closed.Load() {
		return ErrClosed
	}
	var sock zmq4.Socket
	switch ch {
	case chShell:
		sock = t.shell
	case chControl:
		sock = t.control
	case chStdin:
		sock = t.stdin
	default:
		return fmt.Errorf("cannot send on %s", ch)
	}
	frames, err := t.signer.Encode(m)
	if err != nil {
		return err
	}
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	return sock.SendMulti(zmq4.NewMsgFrom(frames...))
}

// ping sends one heartbeat and waits for its echo.
func (t *zmqTransport) ping(ctx context.Context) error {
	t.hbMu.Lock()
	defer t.hbMu.Unlock()
	if t.closed.Load() {
		return ErrClosed
	}
	payload := []byte("premortem-ping-" + strconv.FormatUint(t.hbSeq.Add(1), 10))
	errc := make(chan error, 1)
	go func() { errc <- t.hb.SendMulti(zmq4.NewMsgFrom([]byte{}, payload)) }()
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
	case <-ctx.Done():
		return errors.New("heartbeat: send timed out")
	}
	for {
		select {
		case got := <-t.hbIn:
			if bytes.Equal(got, payload) {
				return nil
			}
			// A late echo of an earlier ping: keep waiting for ours.
		case <-ctx.Done():
			return errors.New("heartbeat: no echo")
		}
	}
}

func (t *zmqTransport) close() error {
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		for _, s := range []zmq4.Socket{t.shell, t.control, t.stdin, t.iopub, t.hb} {
			if s != nil {
				_ = s.Close()
			}
		}
		t.cancel()
		// The readers end once their socket is closed; waiting for them means no goroutine
		// of a closed transport can still deliver into the client.
		t.wg.Wait()
	})
	return nil
}
