package kernelclient

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// delimiter separates the routing identities from the signed part of a wire message.
var delimiter = []byte("<IDS|MSG>")

// ProtocolVersion is the messaging protocol version premortem speaks.
const ProtocolVersion = "5.3"

// Errors from decoding and verifying wire messages.
var (
	// ErrBadSignature: the HMAC did not match (wrong key, or a tampered message).
	ErrBadSignature = errors.New("invalid message signature")
	// ErrUnsigned: the message carried no signature although the connection has a key.
	ErrUnsigned = errors.New("unsigned message")
	// ErrReplayed: a signature seen before (a replayed message).
	ErrReplayed = errors.New("duplicate message signature (replay)")
	// ErrMalformed: the frames do not form a Jupyter message.
	ErrMalformed = errors.New("malformed message")
)

// Header is a Jupyter message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one Jupyter message. Content and Metadata stay raw JSON so that callers decode
// only what they need; Parent is decoded because replies are routed by it.
type Message struct {
	// Identities are the routing frames before the delimiter (the IOPub topic, for IOPub).
	Identities [][]byte
	Header     Header
	Parent     Header
	Metadata   json.RawMessage
	Content    json.RawMessage
	Buffers    [][]byte
}

// Signer computes and checks message signatures: HMAC over the exact header, parent header,
// metadata and content bytes, as in jupyter_client's Session.sign.
type Signer struct {
	newHash func() hash.Hash
	key     []byte
	history *digestHistory
}

// NewSigner returns a signer for a connection file's key and signature_scheme. An empty key
// disables signing (and verification), as in jupyter_client.
func NewSigner(key, scheme string) (*Signer, error) {
	s := &Signer{history: newDigestHistory(1 << 16)}
	if key == "" {
		return s, nil
	}
	switch strings.ToLower(scheme) {
	case "", "hmac-sha256":
		s.newHash = sha256.New
	case "hmac-sha512":
		s.newHash = sha512.New
	case "hmac-sha1":
		s.newHash = sha1.New
	default:
		return nil, fmt.Errorf("unsupported signature_scheme %q (want hmac-sha256)", scheme)
	}
	s.key = []byte(key)
	return s, nil
}

// Enabled reports whether messages are signed.
func (s *Signer) Enabled() bool { return s.newHash != nil }

// Sign returns the hex digest of the four signed parts (empty when signing is off).
func (s *Signer) Sign(parts ...[]byte) []byte {
	if !s.Enabled() {
		return nil
	}
	h := hmac.New(s.newHash, s.key)
	for _, p := range parts {
		h.Write(p)
	}
	sum := h.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// verify checks a received signature over the raw parts and records it against replays.
func (s *Signer) verify(sig []byte, parts ...[]byte) error {
	if !s.Enabled() {
		return nil
	}
	if len(sig) == 0 {
		return ErrUnsigned
	}
	// Hex case does not change a digest: compare and remember it in one case, or a replay
	// could pass as new by changing the case of its signature.
	sig = bytes.ToLower(sig)
	want := s.Sign(parts...)
	if !hmac.Equal(sig, want) {
		return ErrBadSignature
	}
	if !s.history.add(string(sig)) {
		return ErrReplayed
	}
	return nil
}

// Encode serializes m into wire frames: identities, delimiter, signature, header, parent,
// metadata, content, buffers.
func (s *Signer) Encode(m *Message) ([][]byte, error) {
	header, err := json.Marshal(m.Header)
	if err != nil {
		return nil, fmt.Errorf("encode header: %w", err)
	}
	parent := []byte("{}")
	if m.Parent.MsgID != "" {
		if parent, err = json.Marshal(m.Parent); err != nil {
			return nil, fmt.Errorf("encode parent header: %w", err)
		}
	}
	meta := []byte(m.Metadata)
	if len(meta) == 0 {
		meta = []byte("{}")
	}
	content := []byte(m.Content)
	if len(content) == 0 {
		content = []byte("{}")
	}
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, delimiter, s.Sign(header, parent, meta, content), header, parent, meta, content)
	frames = append(frames, m.Buffers...)
	return frames, nil
}

// Decode parses wire frames into a message, verifying the signature over the exact bytes
// received and rejecting replays.
func (s *Signer) Decode(frames [][]byte) (*Message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], delimiter) {
		i++
	}
	if i == len(frames) {
		return nil, fmt.Errorf("%w: no <IDS|MSG> delimiter", ErrMalformed)
	}
	rest := frames[i+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%w: %d frames after the delimiter, want at least 5", ErrMalformed, len(rest))
	}
	if err := s.verify(rest[0], rest[1], rest[2], rest[3], rest[4]); err != nil {
		return nil, err
	}
	m := &Message{Identities: frames[:i], Metadata: rest[3], Content: rest[4], Buffers: rest[5:]}
	if err := json.Unmarshal(rest[1], &m.Header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("%w: header without msg_type", ErrMalformed)
	}
	if err := decodeParent(rest[2], &m.Parent); err != nil {
		return nil, fmt.Errorf("%w: parent header: %v", ErrMalformed, err)
	}
	if !json.Valid(m.Content) {
		return nil, fmt.Errorf("%w: content is not JSON", ErrMalformed)
	}
	return m, nil
}

// decodeParent accepts an empty object (no parent) as well as a full header.
func decodeParent(b []byte, h *Header) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return json.Unmarshal(b, h)
}

// digestHistory remembers recent signatures to reject replays, bounded like jupyter_client's
// digest_history (oldest forgotten first).
type digestHistory struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
	ring []string
	next int
}

func newDigestHistory(max int) *digestHistory {
	return &digestHistory{max: max, seen: make(map[string]struct{})}
}

// add records sig and reports false when it was already seen.
func (d *digestHistory) add(sig string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.seen[sig]; dup {
		return false
	}
	if len(d.ring) < d.max {
		d.ring = append(d.ring, sig)
	} else {
		delete(d.seen, d.ring[d.next])
		d.ring[d.next] = sig
		d.next = (d.next + 1) % d.max
	}
	d.seen[sig] = struct{}{}
	return true
}
