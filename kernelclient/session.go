package kernelclient

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/user"
	"sync/atomic"
	"time"
)

// session is the client side of a Jupyter session: one id for every message this client
// sends, and a counter-based msg_id like jupyter_client's "<session>_<pid>_<n>".
type session struct {
	id       string
	username string
	counter  atomic.Uint64
}

func newSession() *session {
	name := "premortem"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return &session{id: newID(), username: name}
}

// newID returns a random 32-hex-digit id.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to the clock.
		return fmt.Sprintf("%032x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// newMessage builds a request with a fresh header.
func (s *session) newMessage(msgType string, content any) (*Message, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encode %s content: %w", msgType, err)
	}
	n := s.counter.Add(1)
	return &Message{
		Header: Header{
			MsgID:    fmt.Sprintf("%s_%d", s.id[:12], n) + "_" + newID()[:8],
			Session:  s.id,
			Username: s.username,
			Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
			MsgType:  msgType,
			Version:  ProtocolVersion,
		},
		Metadata: json.RawMessage("{}"),
		Content:  raw,
	}, nil
}

// reply builds a reply to parent (used on stdin). It carries no identities: the kernel's
// ROUTER knows our DEALER by its identity.
func (s *session) reply(parent *Message, msgType string, content any) (*Message, error) {
	m, err := s.newMessage(msgType, content)
	if err != nil {
		return nil, err
	}
	m.Parent = parent.Header
	return m, nil
}
