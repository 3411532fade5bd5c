package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Options configure a Server.
type Options struct {
	// Log receives the server's own trace (one line per problem or notable event); nil
	// discards it. Problems are also sent to the client as window/logMessage.
	Log io.Writer
	// Version is reported in serverInfo.
	Version string
}

// Server is one language server connection. Notifications are handled in arrival order on
// the connection's read goroutine (they only apply changes and schedule passes, so they
// are quick); requests take a snapshot there and run in their own goroutine.
type Server struct {
	opts   Options
	conn   jsonrpc2.Conn
	stream *stream

	mu       sync.Mutex
	docs     map[string]*document // by notebook (or percent .py file) URI
	cells    map[string]*document // by cell URI
	settings Settings
	client   clientInfo
	state    lifecycle
	running  map[string]context.CancelFunc // in-flight requests by raw id, for $/cancelRequest

	// ctx is cancelled when the connection ends, stopping every pass.
	ctx    context.Context
	cancel context.CancelFunc
	exit   chan int
	logMu  sync.Mutex

	rt *runtimeLayer
}

// lifecycle is where the server is in initialize/shutdown/exit.
type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// clientInfo is what the server remembers of the client's capabilities.
type clientInfo struct {
	workDoneProgress bool
	documentChanges  bool
	inlayHintRefresh bool
	configuration    bool
	hasInitOptions   bool
}

// Serve runs a language server on rwc until the client sends exit or the stream ends. It
// returns the process exit code: 0 after shutdown then exit, 1 otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	s := newServer(ctx, opts)
	return s.run(rwc)
}

func newServer(ctx context.Context, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &Server{
		opts:     opts,
		docs:     map[string]*document{},
		cells:    map[string]*document{},
		settings: DefaultSettings(),
		running:  map[string]context.CancelFunc{},
		exit:     make(chan int, 1),
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.rt = newRuntimeLayer(s)
	return s
}

func (s *Server) run(rwc io.ReadWriteCloser) int {
	s.stream = newStream(rwc, s.badMessage)
	s.conn = jsonrpc2.NewConn(s.stream)
	s.conn.Go(s.ctx, s.handle)
	code := 1
	select {
	case code = <-s.exit:
	case <-s.conn.Done():
		s.mu.Lock()
		if s.state == stateShutdown {
			code = 0
		}
		s.mu.Unlock()
		if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) {
			s.tracef("connection ended: %v", err)
		}
	case <-s.ctx.Done():
	}
	s.cancel()
	s.rt.close()
	_ = s.conn.Close()
	return code
}

// handlerFunc handles one request or notification. For notifications the result is
// ignored. A returned error becomes the error response of a request, or a logMessage for a
// notification.
type handlerFunc func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// method describes how a method is served.
type method struct {
	h handlerFunc
	// async requests run in their own goroutine after sync() took what they need from the
	// live state; notifications and quick requests run on the read goroutine, in order.
	async bool
}

// methods is the dispatch table. Anything else gets MethodNotFound (calls) or is ignored
// ($/ notifications) or logged (other notifications).
var methods map[string]method

func init() {
	methods = map[string]method{
		"initialize":                          {h: (*Server).initialize},
		"initialized":                         {h: (*Server).initialized},
		"shutdown":                            {h: (*Server).shutdown},
		"exit":                                {h: (*Server).exitNotification},
		"$/cancelRequest":                     {h: (*Server).cancelRequest},
		"$/setTrace":                          {h: nop},
		"workspace/didChangeConfiguration":    {h: (*Server).didChangeConfiguration},
		"notebookDocument/didOpen":            {h: (*Server).didOpenNotebook},
		"notebookDocument/didChange":          {h: (*Server).didChangeNotebook},
		"notebookDocument/didSave":            {h: nop},
		"notebookDocument/didClose":           {h: (*Server).didCloseNotebook},
		"textDocument/didOpen":                {h: (*Server).didOpenText},
		"textDocument/didChange":              {h: (*Server).didChangeText},
		"textDocument/didSave":                {h: nop},
		"textDocument/didClose":               {h: (*Server).didCloseText},
		"textDocument/hover":                  {h: (*Server).hover, async: true},
		"textDocument/codeAction":             {h: (*Server).codeAction, async: true},
		"textDocument/inlayHint":              {h: (*Server).inlayHint, async: true},
		"workspace/executeCommand":            {h: (*Server).executeCommand, async: true},
		"workspace/didChangeWatchedFiles":     {h: nop},
		"workspace/didChangeWorkspaceFolders": {h: nop},
	}
}

func nop(*Server, context.Context, json.RawMessage) (any, error) { return nil, nil }

// handle is the jsonrpc2 handler. It never returns an error: jsonrpc2 would close the
// connection.
func (s *Server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	call, isCall := req.(*jsonrpc2.Call)
	name := req.Method()
	m, ok := methods[name]

	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case !ok:
		if isCall {
			_ = reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "premortem does not handle %q", name))
		} else if len(name) < 2 || name[:2] != "$/" {
			s.tracef("ignoring notification %q", name)
		}
		return nil
	case st == stateNew && name != "initialize" && name != "exit":
		if isCall {
			_ = reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server has not been initialized"))
		}
		return nil
	case st == stateShutdown && name != "exit":
		if isCall {
			_ = reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down"))
		}
		return nil
	}

	params := json.RawMessage(req.Params())
	if !isCall {
		if _, err := s.protect(ctx, name, m.h, params); err != nil {
			s.logf(protocol.MessageTypeError, "%s: %v", name, err)
		}
		return nil
	}
	if !m.async {
		result, err := s.protect(ctx, name, m.h, params)
		_ = reply(ctx, result, asWireError(err))
		return nil
	}
	// An async request gets its own cancellable context, found again by $/cancelRequest.
	rctx, cancel := context.WithCancel(s.ctx)
	key := fmtID(call.ID())
	s.mu.Lock()
	s.running[key] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.running, key)
			s.mu.Unlock()
			cancel()
		}()
		result, err := s.protect(rctx, name, m.h, params)
		if rctx.Err() != nil && err != nil {
			err = jsonrpc2.NewError(requestCancelled, "request cancelled")
		}
		_ = reply(ctx, result, asWireError(err))
	}()
	return nil
}

// requestCancelled is LSP's RequestCancelled error code.
const requestCancelled jsonrpc2.Code = -32800

// protect runs one handler with the server's single recover: a panic becomes an error
// (and a logMessage with the stack in the trace log), and the server goes on.
func (s *Server) protect(ctx context.Context, name string, h handlerFunc, params json.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.tracef("panic in %s: %v\n%s", name, r, debug.Stack())
			err = jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v (premortem keeps running; please report this)", name, r)
			result = nil
		}
	}()
	return h(s, ctx, params)
}

// asWireError keeps jsonrpc2 errors as they are and turns others into InternalError.
func asWireError(err error) error {
	if err == nil {
		return nil
	}
	var w *jsonrpc2.Error
	if errors.As(err, &w) {
		return w
	}
	return jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
}

// invalidParams is the error for params that do not decode.
func invalidParams(method string, err error) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid params: %v", method, err)
}

// decode unmarshals params, reporting InvalidParams on failure.
func decode(method string, params json.RawMessage, v any) error {
	if len(params) == 0 {
		return invalidParams(method, errors.New("missing params"))
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams(method, err)
	}
	return nil
}

// badMessage is called by the stream for undecodable input.
func (s *Server) badMessage(problem string, id json.RawMessage) {
	s.stream.replyError(id, jsonrpc2.InvalidRequest, problem)
	go s.logf(protocol.MessageTypeError, "%s", problem)
}

// notify sends a notification to the client, ignoring a closed connection.
func (s *Server) notify(method string, params any) {
	if s.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.conn.Notify(ctx, method, params); err != nil {
		s.tracef("notify %s: %v", method, err)
	}
}

// logf sends window/logMessage and writes the trace log.
func (s *Server) logf(typ protocol.MessageType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.tracef("%s", msg)
	s.notify("window/logMessage", protocol.LogMessageParams{Type: typ, Message: "premortem: " + msg})
}

// showf sends window/showMessage (for what the user should see once: kernel attached).
func (s *Server) showf(typ protocol.MessageType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.tracef("show: %s", msg)
	s.notify("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: "premortem: " + msg})
}

// tracef writes one line to the trace log only.
func (s *Server) tracef(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// doc returns the open document with the URI, nil when none.
func (s *Server) doc(uri string) *document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[uri]
}

// notebooks returns the open notebook documents (not percent files).
func (s *Server) notebooks() []*document {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*document
	for _, d := range s.docs {
		if !d.percent {
			out = append(out, d)
		}
	}
	return out
}

// fmtID is the key of a request id in Server.running.
func fmtID(id jsonrpc2.ID) string { return fmt.Sprint(id) }

// currentSettings returns a copy of the settings.
func (s *Server) currentSettings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}
