package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// fakeAPI is an httptest server speaking the OpenAI chat completions API, streamed or not,
// answering from a script of replies, recording every request.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	script   []reply
	fallback *reply // answers once the script is used up; nil fails the test
	requests []recorded

	inflight, maxInflight atomic.Int32
	// arrived receives a value per request, so tests wait on arrivals instead of polling.
	arrived chan struct{}
}

// reply is one scripted answer: an HTTP error, a body to send as the model's content, or a
// handler taking over.
type reply struct {
	status     int    // non-200: an error response
	errMessage string // the error's message
	retryAfter string // Retry-After header
	content    string // the model's text
	// block waits for the request's context to end (timeouts, cancellation).
	block bool
}

// recorded is a request as the server saw it.
type recorded struct {
	Req           openai.ChatCompletionRequest
	Raw           map[string]json.RawMessage
	Authorization string
}

func newFakeAPI(t *testing.T, script ...reply) *fakeAPI {
	f := &fakeAPI{t: t, script: script, arrived: make(chan struct{}, 1024)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxInflight.Load()
		if n <= m || f.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found: "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var rec recorded
	if err := json.Unmarshal(body, &rec.Req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_ = json.Unmarshal(body, &rec.Raw)
	rec.Authorization = r.Header.Get("Authorization")

	f.mu.Lock()
	f.requests = append(f.requests, rec)
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	var rp reply
	switch {
	case len(f.script) > 0:
		rp = f.script[0]
		f.script = f.script[1:]
	case f.fallback != nil:
		rp = *f.fallback
	default:
		f.mu.Unlock()
		f.t.Errorf("fake API: unexpected request %d", len(f.requests))
		http.Error(w, "script exhausted", http.StatusInternalServerError)
		return
	}
	f.mu.Unlock()

	if rp.block {
		<-r.Context().Done()
		return
	}
	if rp.status != 0 && rp.status != http.StatusOK {
		writeError(w, rp.status, rp.errMessage, rp.retryAfter)
		return
	}
	if rec.Req.Stream {
		writeStream(w, rp.content)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": rec.Req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rp.content},
		}},
		"usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func formatOf(req openai.ChatCompletionRequest) string {
	if req.ResponseFormat == nil {
		return ""
	}
	return string(req.ResponseFormat.Type)
}

func writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

// writeStream sends content as server-sent events in small chunks, as OpenAI does.
func writeStream(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}}}})
	for len(content) > 0 {
		n := min(7, len(content))
		send(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content[:n]}}}})
		content = content[n:]
	}
	send(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func (f *fakeAPI) recorded() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// config returns a Config pointing at the fake server, with the key in a test variable.
func (f *fakeAPI) config(t *testing.T) Config {
	t.Setenv("PREMORTEM_TEST_KEY", "test-key-123")
	return Config{BaseURL: f.srv.URL + "/v1", Model: "test-model", APIKeyEnv: "PREMORTEM_TEST_KEY"}
}

// recordedAnswer reads a recorded model answer from testdata/llm/answers.
func recordedAnswer(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "llm", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(string(b), "\n")
}
