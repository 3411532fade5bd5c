package kernelclient

import (
	"context"
	"fmt"
)

var _ Kernel = (*Client)(nil)

// Connect connects to a local kernel over ZeroMQ and completes the readiness handshake
// (kernel_info_reply plus an IOPub message). A kernel found running a cell gets nothing
// until the cell ends: Connect then returns a client in state busy whose handshake follows
// when the kernel is idle (Client.AwaitingIdle; see idle.go). ctx bounds the handshake only; without a
// deadline it is bounded at 10 s. A kernel that never answers (wrong key, stale file) gives
// an error, never a hang.
func Connect(ctx context.Context, ci ConnectionInfo) (*Client, error) {
	return ConnectWithOptions(ctx, ci, Options{})
}

// ConnectWithOptions is Connect with tuning (heartbeat period, default reply timeout).
func ConnectWithOptions(ctx context.Context, ci ConnectionInfo, opts Options) (*Client, error) {
	if err := ci.Validate(); err != nil {
		return nil, &ConnectionFileError{Path: ci.Path, Reason: ReasonIncomplete, Err: err}
	}
	signer, err := NewSigner(ci.Key, ci.SignatureScheme)
	if err != nil {
		return nil, &ConnectionFileError{Path: ci.Path, Reason: ReasonIncomplete, Err: err}
	}
	name := ci.Path
	if name == "" {
		name = ci.endpoint(ci.ShellPort)
	}
	c := newClient(name, nil, opts)
	c.dial = dialZMQ(ci, signer, c.sess.id)
	w := newProcWatch(ci)
	c.observe, c.ready = w.observe, w.ready
	if err := c.start(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect to kernel %s: %w", name, err)
	}
	return c, nil
}

// ConnectFile reads a connection file and connects to its kernel.
func ConnectFile(ctx context.Context, path string) (*Client, error) {
	ci, err := ReadConnectionFile(path)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, ci)
}
