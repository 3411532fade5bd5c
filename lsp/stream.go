package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxMessageSize bounds one message body: a bigger Content-Length is treated as garbage
// rather than allocated.
const maxMessageSize = 256 << 20

// stream is a jsonrpc2.Stream with LSP header framing that survives bad input. The stock
// jsonrpc2 stream returns an error for a body that is not a JSON-RPC message, and jsonrpc2's
// connection then closes for good; here such a message is reported through badMessage
// (which answers a call with an error when it can find its id) and reading goes on. Only
// an error of the underlying reader ends the stream.
type stream struct {
	rwc io.ReadWriteCloser
	in  *bufio.Reader
	// badMessage is told about every message that could not be decoded; id is the raw
	// "id" member when one could be found.
	badMessage func(problem string, id json.RawMessage)

	writeMu   sync.Mutex // Write and writeRaw come from different goroutines
	closeOnce sync.Once
}

func newStream(rwc io.ReadWriteCloser, badMessage func(string, json.RawMessage)) *stream {
	return &stream{rwc: rwc, in: bufio.NewReader(rwc), badMessage: badMessage}
}

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		data, err := s.readFrame()
		if err != nil {
			return nil, 0, err
		}
		if data == nil {
			continue // a framing problem, already reported
		}
		msg, err := jsonrpc2.DecodeMessage(data)
		if err != nil {
			s.badMessage(fmt.Sprintf("ignoring a message that is not valid JSON-RPC (%v): %.200s", err, data), rawID(data))
			continue
		}
		if _, ok := msg.(*jsonrpc2.Response); ok && !isResponse(data) {
			// DecodeMessage takes anything with an id and no method for a response.
			s.badMessage(fmt.Sprintf("ignoring a message without a method: %.200s", data), rawID(data))
			continue
		}
		return msg, int64(len(data)), nil
	}
}

// readFrame reads one header block and body. It returns (nil, nil) after reporting a
// malformed frame it could skip.
func (s *stream) readFrame() ([]byte, error) {
	length := int64(-1)
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if length < 0 {
				// A stray blank line between messages is harmless; anything else was
				// reported when it was read.
				continue
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			s.badMessage(fmt.Sprintf("ignoring invalid header line %.100q", line), nil)
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n <= 0 || n > maxMessageSize {
				s.badMessage(fmt.Sprintf("ignoring invalid Content-Length %.40q", value), nil)
				length = -1
				continue
			}
			length = n
		}
	}
	data := make([]byte, length)
	if _, err := io.ReadFull(s.in, data); err != nil {
		return nil, fmt.Errorf("read message body: %w", err)
	}
	return data, nil
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshal message: %w", err)
	}
	return s.writeRaw(data)
}

func (s *stream) writeRaw(data []byte) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	buf := make([]byte, 0, len(data)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, data...)
	n, err := s.rwc.Write(buf)
	if err != nil {
		return int64(n), fmt.Errorf("write message: %w", err)
	}
	return int64(n), nil
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.rwc.Close() })
	return err
}

// replyError answers the call with the given raw id with a JSON-RPC error, when the id is
// a number or a string (a null or missing id gets no answer).
func (s *stream) replyError(id json.RawMessage, code jsonrpc2.Code, message string) {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		return
	}
	data, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	if err != nil {
		return
	}
	_, _ = s.writeRaw(data)
}

// rawID digs the "id" member out of a message that failed to decode, so a call can still
// get an error response.
func rawID(data []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return nil
	}
	return probe.ID
}

// isResponse reports whether data has a result or error member, as a response must.
func isResponse(data []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return false
	}
	_, r := probe["result"]
	_, e := probe["error"]
	return r || e
}
