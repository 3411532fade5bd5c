package kernelclient

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// recordingSink collects what a transport delivers.
type recordingSink struct {
	got    chan *Message
	failed chan error
}

func (s recordingSink) deliver(_ channel, m *Message) { s.got <- m }
func (s recordingSink) lost(err error) {
	select {
	case s.failed <- err:
	default:
	}
}

// TestWSDropsUnroutableMessages: a message whose parent_header cannot be decoded cannot be
// routed to its request; delivering it with an empty parent would make our own request's
// output look like another client's execution, so it is dropped.
func TestWSDropsUnroutableMessages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		ctx := r.Context()
		for _, msg := range []string{
			`{"channel":"iopub","header":{"msg_id":"a","msg_type":"status"},"parent_header":"not a header","metadata":{},"content":{"execution_state":"busy"}}`,
			`{"channel":"iopub","header":{"msg_id":"b","msg_type":"status"},"parent_header":{"msg_id":"p2"},"metadata":{},"content":{"execution_state":"idle"}}`,
		} {
			if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				return
			}
		}
		conn.Read(ctx) // until the client goes away
	}))
	defer srv.Close()
	api, err := newServerAPI(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	s := recordingSink{got: make(chan *Message, 4), failed: make(chan error, 1)}
	tr, err := dialWS(ctxT(t, 10*time.Second), api, "k1", "sess", s)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-s.got:
		if m.Header.MsgID != "b" || m.Parent.MsgID != "p2" {
			t.Errorf("first delivered message: %+v, want msg b with parent p2", m.Header)
		}
	case <-ctxT(t, 10*time.Second).Done():
		t.Fatal("nothing delivered")
	}
	closed := make(chan struct{})
	go func() { tr.close(); close(closed) }()
	select {
	case <-closed:
	case <-ctxT(t, 15*time.Second).Done():
		t.Fatal("close did not return")
	}
	select {
	case <-tr.readDone:
	default:
		t.Fatal("reader still running after close")
	}
}
