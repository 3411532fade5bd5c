package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// go-openai's errors carry the status but not the headers, so a wrapping transport records
// the Retry-After of a rate-limited or unavailable response in a hint the request's context
// carries.

type retryHint struct {
	mu sync.Mutex
	d  time.Duration
}

func (h *retryHint) set(d time.Duration) {
	h.mu.Lock()
	h.d = d
	h.mu.Unlock()
}

func (h *retryHint) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.d
}

type hintKey struct{}

func withHint(ctx context.Context, h *retryHint) context.Context {
	return context.WithValue(ctx, hintKey{}, h)
}

// hintTransport records Retry-After (seconds or an HTTP date) and retry-after-ms.
type hintTransport struct{ base http.RoundTripper }

func (t *hintTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	if h, ok := req.Context().Value(hintKey{}).(*retryHint); ok {
		h.set(parseRetryAfter(resp.Header, time.Now()))
	}
	return resp, err
}

// parseRetryAfter reads retry-after-ms, then Retry-After; 0 when absent or unparsable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// answerSchema is the strict JSON schema of an answer (response_format json_schema).
// "reasoning" comes first so that the model reasons before it decides.
var answerSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "reasoning": {"type": "string"},
    "crash": {"type": "boolean"},
    "confidence": {"type": "number"},
    "line": {"type": "integer"},
    "exception": {"type": "string"},
    "category": {"type": "string"},
    "explanation": {"type": "string"},
    "fix": {"anyOf": [
      {"type": "null"},
      {"type": "object",
       "properties": {
         "start_line": {"type": "integer"},
         "end_line": {"type": "integer"},
         "replacement": {"type": "string"}
       },
       "required": ["start_line", "end_line", "replacement"],
       "additionalProperties": false}
    ]}
  },
  "required": ["reasoning", "crash", "confidence", "line", "exception", "category", "explanation", "fix"],
  "additionalProperties": false
}`)
