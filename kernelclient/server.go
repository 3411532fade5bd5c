package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// ErrNoSuchKernel: the Jupyter Server has no kernel with that id.
var ErrNoSuchKernel = errors.New("no such kernel on the server")

// ErrUnauthorized: the server refused the token.
var ErrUnauthorized = errors.New("server refused the token (403/401): pass the token from the server's URL or jpserver-*.json")

// serverSession is one entry of GET /api/sessions.
type serverSession struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Kernel struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		ExecutionState string `json:"execution_state"`
	} `json:"kernel"`
}

// ServerKernel is one entry of GET /api/kernels.
type ServerKernel struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	ExecutionState string `json:"execution_state"`
	LastActivity   string `json:"last_activity"`
	Connections    int    `json:"connections"`
}

// serverAPI is a small REST client for a Jupyter Server (or classic notebook server).
type serverAPI struct {
	base  *url.URL // always ends with "/"
	token string
	http  *http.Client
}

func newServerAPI(baseURL, token string) (*serverAPI, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("server URL %q: want http or https", baseURL)
	}
	if q := u.Query().Get("token"); q != "" && token == "" {
		token = q
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return &serverAPI{base: u, token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

func (s *serverAPI) url(path string) string {
	u := *s.base
	u.Path += strings.TrimPrefix(path, "/")
	return u.String()
}

// do sends a request and decodes a JSON answer into out (when non-nil).
func (s *serverAPI) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url(path), rd)
	if err != nil {
		return err
	}
	if s.token != "" {
		req.Header.Set("Authorization", "token "+s.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s %s: %w (404)", method, path, ErrNoSuchKernel)
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s %s: %w", method, path, ErrUnauthorized)
	case resp.StatusCode >= 300:
		return fmt.Errorf("%s %s: HTTP %d: %.200s", method, path, resp.StatusCode, data)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

func listSessions(ctx context.Context, si *ServerInfo) ([]serverSession, error) {
	api, err := newServerAPI(si.URL, si.Token)
	if err != nil {
		return nil, err
	}
	var out []serverSession
	if err := api.do(ctx, http.MethodGet, "api/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListServerKernels returns GET /api/kernels of a Jupyter Server.
func ListServerKernels(ctx context.Context, baseURL, token string) ([]ServerKernel, error) {
	api, err := newServerAPI(baseURL, token)
	if err != nil {
		return nil, err
	}
	var out []ServerKernel
	if err := api.do(ctx, http.MethodGet, "api/kernels", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ConnectServer connects to a kernel managed by a Jupyter Server (local or remote:
// JupyterHub, Enterprise Gateway) through its channels WebSocket, behind the same Kernel
// interface as a ZeroMQ connection. token may be "" (or be in baseURL's ?token=).
func ConnectServer(ctx context.Context, baseURL, token, kernelID string) (*Client, error) {
	return ConnectServerWithOptions(ctx, baseURL, token, kernelID, Options{})
}

// ConnectServerWithOptions is ConnectServer with tuning.
func ConnectServerWithOptions(ctx context.Context, baseURL, token, kernelID string, opts Options) (*Client, error) {
	api, err := newServerAPI(baseURL, token)
	if err != nil {
		return nil, err
	}
	var k ServerKernel
	if err := api.do(ctx, http.MethodGet, "api/kernels/"+url.PathEscape(kernelID), nil, &k); err != nil {
		return nil, fmt.Errorf("connect to server kernel %s: %w", kernelID, err)
	}
	c := newClient(api.url("api/kernels/"+kernelID), nil, opts)
	c.dial = func(ctx context.Context, s sink) (transport, error) {
		return dialWS(ctx, api, kernelID, c.sess.id, s)
	}
	// The server's REST model knows whether the kernel runs a cell: attaching waits for
	// idle before its first request (idle.go).
	c.observe = serverObserver(api, kernelID)
	if err := c.start(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect to server kernel %s: %w", kernelID, err)
	}
	return c, nil
}

// wsTransport multiplexes the channels over the server's WebSocket (the default v1 JSON
// protocol: one JSON text message per Jupyter message, with a "channel" field; the server
// signs and verifies on the ZeroMQ side).
type wsTransport struct {
	api      *serverAPI
	kernelID string
	conn     *websocket.Conn
	sink     sink
	cancel   context.CancelFunc
	closed   atomic.Bool
	writeMu  sync.Mutex
	life     context.Context
	readDone chan struct{} // closed when the reader goroutine has returned
}

// wsMessage is the JSON form of a message on the channels WebSocket.
type wsMessage struct {
	Channel  string          `json:"channel"`
	Header   Header          `json:"header"`
	Parent   json.RawMessage `json:"parent_header"`
	Metadata json.RawMessage `json:"metadata"`
	Content  json.RawMessage `json:"content"`
	Buffers  []any           `json:"buffers"`
}

func dialWS(ctx context.Context, api *serverAPI, kernelID, sessionID string, s sink) (*wsTransport, error) {
	u := *api.base
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path += "api/kernels/" + url.PathEscape(kernelID) + "/channels"
	u.RawQuery = url.Values{"session_id": {sessionID}}.Encode()
	hdr := http.Header{}
	if api.token != "" {
		hdr.Set("Authorization", "token "+api.token)
	}
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized) {
			return nil, fmt.Errorf("open channels websocket: %w", ErrUnauthorized)
		}
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("open channels websocket: %w", ErrNoSuchKernel)
		}
		return nil, fmt.Errorf("open channels websocket: %w", err)
	}
	conn.SetReadLimit(256 << 20)
	life, cancel := context.WithCancel(context.Background())
	t := &wsTransport{api: api, kernelID: kernelID, conn: conn, sink: s, cancel: cancel, life: life, readDone: make(chan struct{})}
	go t.read()
	return t, nil
}

// read is the WebSocket's reader goroutine.
func (t *wsTransport) read() {
	defer close(t.readDone)
	for {
		typ, data, err := t.conn.Read(t.life)
		if err != nil {
			if !t.closed.Load() {
				t.sink.lost(fmt.Errorf("websocket: %w", err))
			}
			return
		}
		if typ != websocket.MessageText {
			continue // binary frames carry buffers; premortem needs none
		}
		var wm wsMessage
		if err := json.Unmarshal(data, &wm); err != nil || wm.Header.MsgType == "" {
			continue
		}
		m := &Message{Header: wm.Header, Metadata: wm.Metadata, Content: wm.Content}
		if err := decodeParent(wm.Parent, &m.Parent); err != nil {
			// Without its parent a message cannot be routed: as another client's it would
			// misreport our own request. Drop it, as the ZeroMQ side drops malformed ones.
			continue
		}
		if len(m.Content) == 0 {
			m.Content = json.RawMessage("{}")
		}
		t.sink.deliver(channel(wm.Channel), m)
	}
}

func (t *wsTransport) send(ch channel, m *Message) error {
	if t.closed.Load() {
		return ErrClosed
	}
	parent := json.RawMessage("{}")
	if m.Parent.MsgID != "" {
		b, err := json.Marshal(m.Parent)
		if err != nil {
			return err
		}
		parent = b
	}
	wm := wsMessage{Channel: string(ch), Header: m.Header, Parent: parent, Metadata: m.Metadata, Content: m.Content, Buffers: []any{}}
	if len(wm.Metadata) == 0 {
		wm.Metadata = json.RawMessage("{}")
	}
	data, err := json.Marshal(wm)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(t.life, 10*time.Second)
	defer cancel()
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	return t.conn.Write(ctx, websocket.MessageText, data)
}

// ping asks the server whether the kernel still exists and is not dead.
func (t *wsTransport) ping(ctx context.Context) error {
	var k ServerKernel
	if err := t.api.do(ctx, http.MethodGet, "api/kernels/"+url.PathEscape(t.kernelID), nil, &k); err != nil {
		return err
	}
	if k.ExecutionState == "dead" {
		return errors.New("server reports the kernel dead")
	}
	return nil
}

func (t *wsTransport) close() error {
	if t.closed.Swap(true) {
		return nil
	}
	err := t.conn.Close(websocket.StatusNormalClosure, "")
	t.cancel()
	// No goroutine of a closed transport may outlive it (or deliver into the client).
	<-t.readDone
	return err
}
