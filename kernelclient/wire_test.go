package kernelclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/premortem/premortem/internal/testkit/python"
)

type goldenCase struct {
	Scheme      string   `json:"scheme"`
	Key         string   `json:"key"`
	MsgType     string   `json:"msg_type"`
	MsgID       string   `json:"msg_id"`
	ParentMsgID string   `json:"parent_msg_id"`
	Frames      []string `json:"frames"`
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	data, err := os.ReadFile("testdata/golden_messages.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return g.Cases
}

func (g goldenCase) frames(t *testing.T) [][]byte {
	t.Helper()
	out := make([][]byte, len(g.Frames))
	for i, f := range g.Frames {
		b, err := base64.StdEncoding.DecodeString(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestDecodeJupyterClientGolden decodes messages signed by Python's jupyter_client.
func TestDecodeJupyterClientGolden(t *testing.T) {
	for _, g := range loadGolden(t) {
		t.Run(g.Scheme+"/"+g.MsgType+"/key="+g.Key, func(t *testing.T) {
			s, err := NewSigner(g.Key, g.Scheme)
			if err != nil {
				t.Fatal(err)
			}
			m, err := s.Decode(g.frames(t))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if m.Header.MsgType != g.MsgType || m.Header.MsgID != g.MsgID || m.Parent.MsgID != g.ParentMsgID {
				t.Errorf("header %+v parent %+v; want %s %s parent %s", m.Header, m.Parent, g.MsgType, g.MsgID, g.ParentMsgID)
			}
			if len(m.Identities) != 1 || !strings.HasPrefix(string(m.Identities[0]), "topic.") {
				t.Errorf("identities %q", m.Identities)
			}
			if m.Header.Version != "5.3" || m.Header.Session != "golden-session" {
				t.Errorf("header %+v", m.Header)
			}
			// Decoding the same frames again is a replay (only when signed).
			_, err = s.Decode(g.frames(t))
			if g.Key != "" && !errors.Is(err, ErrReplayed) {
				t.Errorf("second decode: %v, want ErrReplayed", err)
			}
			if g.Key == "" && err != nil {
				t.Errorf("unsigned second decode: %v", err)
			}
		})
	}
}

// TestDecodeRejects covers tampering, wrong keys, missing signatures and bad framing.
func TestDecodeRejects(t *testing.T) {
	var signed goldenCase
	for _, g := range loadGolden(t) {
		if g.Key != "" && g.Scheme == "hmac-sha256" {
			signed = g
			break
		}
	}
	tests := []struct {
		name   string
		key    string
		mutate func([][]byte) [][]byte
		want   error
	}{
		{"wrong key", "not-the-key", nil, ErrBadSignature},
		{"tampered content", signed.Key, func(f [][]byte) [][]byte {
			f[len(f)-1] = bytes.Replace(f[len(f)-1], []byte("busy"), []byte("idle"), 1)
			return f
		}, ErrBadSignature},
		{"tampered header", signed.Key, func(f [][]byte) [][]byte {
			f[3] = bytes.Replace(f[3], []byte("golden"), []byte("GOLDEN"), 1)
			return f
		}, ErrBadSignature},
		{"unsigned", signed.Key, func(f [][]byte) [][]byte { f[2] = nil; return f }, ErrUnsigned},
		{"no delimiter", signed.Key, func(f [][]byte) [][]byte { f[1] = []byte("<IDS|MSX>"); return f }, ErrMalformed},
		{"too few frames", signed.Key, func(f [][]byte) [][]byte { return f[:5] }, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSigner(tc.key, "hmac-sha256")
			if err != nil {
				t.Fatal(err)
			}
			f := signed.frames(t)
			if tc.mutate != nil {
				f = tc.mutate(f)
			}
			if _, err := s.Decode(f); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, key := range []string{"", "k3y"} {
		s, err := NewSigner(key, "hmac-sha256")
		if err != nil {
			t.Fatal(err)
		}
		sess := newSession()
		m, err := sess.newMessage("execute_request", map[string]any{"code": "print('ü')", "silent": true})
		if err != nil {
			t.Fatal(err)
		}
		m.Parent = Header{MsgID: "p1", MsgType: "x"}
		frames, err := s.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" && len(frames[1]) != 64 {
			t.Errorf("signature %q is not a sha256 hex digest", frames[1])
		}
		if key == "" && len(frames[1]) != 0 {
			t.Errorf("unsigned message carries signature %q", frames[1])
		}
		got, err := s.Decode(frames)
		if err != nil {
			t.Fatal(err)
		}
		if got.Header != m.Header || got.Parent.MsgID != "p1" || !bytes.Equal(got.Content, m.Content) {
			t.Errorf("round trip: %+v", got)
		}
	}
}

func TestSignerSchemes(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		ok     bool
	}{{"hmac-sha256", true}, {"", true}, {"HMAC-SHA512", true}, {"hmac-sha1", true}, {"hmac-md4", false}, {"rot13", false}} {
		_, err := NewSigner("k", tc.scheme)
		if (err == nil) != tc.ok {
			t.Errorf("NewSigner(%q): %v", tc.scheme, err)
		}
	}
}

func TestDigestHistoryBounded(t *testing.T) {
	h := newDigestHistory(3)
	for _, s := range []string{"a", "b", "c"} {
		if !h.add(s) {
			t.Fatalf("%s rejected", s)
		}
	}
	if h.add("a") {
		t.Fatal("replay of a accepted")
	}
	h.add("d") // evicts a
	if len(h.seen) != 3 {
		t.Fatalf("history holds %d, want 3", len(h.seen))
	}
	if !h.add("a") {
		t.Fatal("a still remembered after eviction")
	}
}

// TestPythonVerifiesOurMessages has jupyter_client's Session deserialize what we sign.
func TestPythonVerifiesOurMessages(t *testing.T) {
	python.Require(t, "jupyter_client")
	s, _ := NewSigner("py-check-key", "hmac-sha256")
	m, err := newSession().newMessage("execute_request", map[string]any{"code": "x = 'é ✓'", "silent": false})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := s.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var enc []string
	for _, f := range frames {
		enc = append(enc, base64.StdEncoding.EncodeToString(f))
	}
	in, _ := json.Marshal(enc)
	script := `
import base64, json, sys
from jupyter_client.session import Session
frames = [base64.b64decode(f) for f in json.load(sys.stdin)]
s = Session(key=b"py-check-key", signature_scheme="hmac-sha256")
idents, rest = s.feed_identities(frames)
msg = s.deserialize(rest)
print(msg["header"]["msg_type"], msg["content"]["code"])
`
	cmd := exec.Command(python.Path(), "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python rejected our message: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "execute_request x = 'é ✓'" {
		t.Fatalf("python decoded %q", got)
	}
}

// FuzzDecode: arbitrary frames never panic the decoder, signed or not.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("<IDS|MSG>"), []byte(""), []byte(`{"msg_type":"status"}`), []byte("{}"), []byte("{}"), []byte("{}"))
	f.Add([]byte("topic"), []byte("<IDS|MSG>"), []byte("abc"), []byte(`{"msg_type":1}`), []byte("[]"), []byte("null"))
	f.Fuzz(func(t *testing.T, a, b, c, d, e, g []byte) {
		for _, key := range []string{"", "k"} {
			s, _ := NewSigner(key, "hmac-sha256")
			m, err := s.Decode([][]byte{a, b, c, d, e, g, []byte("{}")})
			if err == nil && m.Header.MsgType == "" {
				t.Fatal("decoded a message without msg_type")
			}
		}
	})
}

// TestReplayInOtherCase: the signature is compared case-insensitively, so a replay whose hex
// digest is upper-cased must still be recognised as one.
func TestReplayInOtherCase(t *testing.T) {
	s, err := NewSigner("k3y", "hmac-sha256")
	if err != nil {
		t.Fatal(err)
	}
	m, err := newSession().newMessage("status", map[string]any{"execution_state": "idle"})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := s.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decode(frames); err != nil {
		t.Fatal(err)
	}
	frames[1] = bytes.ToUpper(frames[1])
	if _, err := s.Decode(frames); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay with an upper-case signature: %v, want ErrReplayed", err)
	}
}
