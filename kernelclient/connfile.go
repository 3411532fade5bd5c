package kernelclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/premortem/premortem/internal/smallfile"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// ConnectionInfo is the content of a kernel connection file (kernel-*.json), as written by
// jupyter_client, ipykernel, Jupyter Server and VS Code.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name,omitempty"`
	// Path is the file the info was read from (not part of the JSON).
	Path string `json:"-"`
}

// ConnectionFileError says why a connection file cannot be used. Reason is one of the
// Reason* constants so callers (discovery) can report it.
type ConnectionFileError struct {
	Path   string
	Reason string
	Err    error
}

// Reasons for a ConnectionFileError.
const (
	ReasonUnreadable = "unreadable"
	ReasonMalformed  = "malformed"
	ReasonIncomplete = "incomplete"
	ReasonStale      = "stale"
)

// Error names the file and why it could not be used, so the user knows which file to fix or delete.
func (e *ConnectionFileError) Error() string {
	msg := fmt.Sprintf("connection file %s: %s", e.Path, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap exposes the cause (for example ErrStale or an *os.PathError) to errors.Is/As.
func (e *ConnectionFileError) Unwrap() error { return e.Err }

// ErrStale marks a connection file whose kernel is gone (nothing answers on its ports).
var ErrStale = errors.New("no kernel answers at the ports this file names (stale file: the kernel has exited)")

// ReadConnectionFile reads and validates a connection file.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	data, err := smallfile.Read(path, MaxConnectionFileSize)
	if err != nil {
		if errors.Is(err, smallfile.ErrRefused) {
			err = fmt.Errorf("%w; a connection file is the small kernel-*.json a kernel writes in its runtime directory (`jupyter --runtime-dir` prints it): point at that file", err)
		}
		return ConnectionInfo{}, &ConnectionFileError{Path: path, Reason: ReasonUnreadable, Err: err}
	}
	info, err := ParseConnectionInfo(data)
	if err != nil {
		var cfe *ConnectionFileError
		if errors.As(err, &cfe) {
			cfe.Path = path
		}
		return ConnectionInfo{}, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	info.Path = path
	return info, nil
}

// ParseConnectionInfo decodes and validates connection file content.
func ParseConnectionInfo(data []byte) (ConnectionInfo, error) {
	var info ConnectionInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return info, &ConnectionFileError{Reason: ReasonMalformed, Err: err}
	}
	if err := info.Validate(); err != nil {
		return info, &ConnectionFileError{Reason: ReasonIncomplete, Err: err}
	}
	return info, nil
}

// Validate checks that the info names a usable endpoint for every channel.
func (c *ConnectionInfo) Validate() error {
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.Transport != "tcp" && c.Transport != "ipc" {
		return fmt.Errorf("transport %q (want tcp or ipc)", c.Transport)
	}
	if c.IP == "" {
		return errors.New("no ip")
	}
	for _, p := range []struct {
		name string
		port int
	}{{"shell_port", c.ShellPort}, {"iopub_port", c.IOPubPort}, {"stdin_port", c.StdinPort}, {"control_port", c.ControlPort}, {"hb_port", c.HBPort}} {
		if p.port <= 0 || p.port > 65535 {
			return fmt.Errorf("%s %d out of range", p.name, p.port)
		}
	}
	if c.Key != "" && c.SignatureScheme == "" {
		c.SignatureScheme = "hmac-sha256"
	}
	return nil
}

// endpoint returns the ZeroMQ endpoint of a port: tcp://ip:port, or ipc://ip-port.
func (c ConnectionInfo) endpoint(port int) string {
	if c.Transport == "ipc" {
		return "ipc://" + c.IP + "-" + strconv.Itoa(port)
	}
	ip := c.IP
	if ip == "0.0.0.0" || ip == "*" {
		ip = "127.0.0.1"
	}
	return "tcp://" + net.JoinHostPort(ip, strconv.Itoa(port))
}

// WriteConnectionFile writes info as JSON, readable only by the owner (it holds the key).
func WriteConnectionFile(path string, info ConnectionInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("encode connection file: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write connection file: %w", err)
	}
	return nil
}
