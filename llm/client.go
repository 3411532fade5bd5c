package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/premortem/premortem/finding"
	openai "github.com/sashabaranov/go-openai"
)

// Client asks one OpenAI-compatible endpoint. It is safe for concurrent use; at most
// Config.MaxInFlight requests run at once.
type Client struct {
	cfg     Config
	api     *openai.Client
	limiter *Limiter
	cache   *lru
	log     *slog.Logger
	// mode is the response_format in use (a jsonMode), downgraded for good when the
	// endpoint rejects it.
	mode atomic.Int32
	// sleep waits between retries; tests replace it to observe the waits.
	sleep func(ctx context.Context, d time.Duration) error
	// observe, when set, sees every prediction prompt (the eval harness counts tokens).
	observe atomic.Pointer[func(Prompt)]
}

// jsonMode is the response_format the client sends.
type jsonMode int32

const (
	modeSchema jsonMode = iota
	modeObject
	modeOff
)

func (m jsonMode) String() string {
	return [...]string{"json_schema", "json_object", "off"}[m]
}

// New returns a client for cfg. It fails when no base URL is configured; a missing key is
// allowed (local servers need none) and the endpoint's 401 says so.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.BaseURL == "" {
		return nil, errors.New("llm: no endpoint configured: set premortem.llm.baseURL, --llm-base-url or PREMORTEM_LLM_BASE_URL")
	}
	if cfg.Model == "" {
		return nil, errors.New("llm: no model configured: set premortem.llm.model, --llm-model or PREMORTEM_LLM_MODEL")
	}
	key := cfg.APIKey()
	var oc openai.ClientConfig
	if strings.Contains(cfg.BaseURL, ".openai.azure.com") {
		oc = openai.DefaultAzureConfig(key, cfg.BaseURL)
	} else {
		oc = openai.DefaultConfig(key)
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = &http.Client{Transport: &hintTransport{base: http.DefaultTransport}}
	c := &Client{
		cfg:     cfg,
		api:     openai.NewClientWithConfig(oc),
		limiter: NewLimiter(cfg.MaxInFlight),
		cache:   newLRU(cfg.CacheSize),
		log:     slog.Default(),
		sleep:   sleepCtx,
	}
	switch cfg.JSONMode {
	case JSONModeObject:
		c.mode.Store(int32(modeObject))
	case JSONModeOff:
		c.mode.Store(int32(modeOff))
	case JSONModeSchema, JSONModeAuto:
		c.mode.Store(int32(modeSchema))
	default:
		return nil, fmt.Errorf("llm: unknown JSON mode %q (want schema, object, off or empty)", cfg.JSONMode)
	}
	return c, nil
}

// SetLogger sets where the client logs unknown verdicts, retries and fallbacks (never keys
// or prompt text). The default is slog.Default().
func (c *Client) SetLogger(l *slog.Logger) {
	if l != nil {
		c.log = l
	}
}

// SetPromptObserver registers f to see every prediction prompt Predict builds, cached or
// not (premortem eval measures prompt sizes with it). nil removes it.
func (c *Client) SetPromptObserver(f func(Prompt)) {
	if f == nil {
		c.observe.Store(nil)
		return
	}
	c.observe.Store(&f)
}

// Config returns the client's configuration with defaults applied.
func (c *Client) Config() Config { return c.cfg }

// Limiter returns the client's in-flight limiter, so a scheduler can see or share it.
func (c *Client) Limiter() *Limiter { return c.limiter }

// JSONMode reports the response_format the client currently sends ("json_schema",
// "json_object" or "off"), after any fallback.
func (c *Client) JSONMode() string { return jsonMode(c.mode.Load()).String() }

// Predict asks whether in.Target will crash. Answers that are not the JSON asked for get one
// repair retry, then become an Unknown verdict (logged). Endpoint failures after retries
// return an Unknown verdict AND the error. Cancelling ctx returns ctx's error at once.
func (c *Client) Predict(ctx context.Context, in Input) (*Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := BuildPrompt(in, c.cfg)
	if f := c.observe.Load(); f != nil {
		(*f)(p)
	}
	key := c.key("predict", p.System, p.User)
	if v, ok := c.cache.get(key); ok {
		out := v.(*Verdict).clone()
		out.Cached = true
		return out, nil
	}
	tctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	type result struct {
		v   *Verdict
		err error
	}
	k := c.cfg.Samples
	results := make(chan result, k)
	for i := 0; i < k; i++ {
		go func() {
			v, err := c.sample(tctx, p)
			results <- result{v, err}
		}()
	}
	var answers []*Verdict
	var firstErr error
	for i := 0; i < k; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r := <-results:
			if r.err != nil {
				if firstErr == nil {
					firstErr = r.err
				}
				continue
			}
			answers = append(answers, r.v)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := vote(answers)
	v.Model = c.cfg.Model
	v.PromptTokens = p.Tokens
	if v.Samples == 0 && firstErr != nil {
		err := c.scrub(firstErr)
		v.Unknown = true
		v.Reason = "endpoint error: " + err.Error()
		c.log.Warn("llm: unknown verdict", "reason", v.Reason, "model", c.cfg.Model)
		return v, fmt.Errorf("llm predict: %w", err)
	}
	if v.Unknown {
		c.log.Warn("llm: unknown verdict", "reason", v.Reason, "model", c.cfg.Model)
		return v, nil
	}
	c.cache.put(key, v)
	return v.clone(), nil
}

// sample gets one answer, with one repair retry when it is not the JSON asked for.
func (c *Client) sample(ctx context.Context, p Prompt) (*Verdict, error) {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: p.System},
		{Role: openai.ChatMessageRoleUser, Content: p.User},
	}
	text, err := c.complete(ctx, msgs, true)
	if err != nil {
		return nil, err
	}
	v, perr := ParseAnswer(text)
	if perr == nil {
		return v, nil
	}
	c.log.Info("llm: invalid answer, asking for a repair", "error", perr.Error())
	msgs = append(msgs,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "Your answer could not be used: " + perr.Error() +
			". Reply with only the JSON object, complete and valid, with the fields reasoning, crash, confidence, line, exception, category, explanation, fix."},
	)
	text, err = c.complete(ctx, msgs, true)
	if err != nil {
		return nil, err
	}
	v, perr = ParseAnswer(text)
	if perr != nil {
		return &Verdict{Unknown: true, Reason: "invalid answer after a repair retry: " + perr.Error()}, nil
	}
	return v, nil
}

// Explain asks for a longer Markdown diagnosis of finding f (from any layer) on in.Target.
func (c *Client) Explain(ctx context.Context, in Input, f finding.Finding) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var extra strings.Builder
	fmt.Fprintf(&extra, "# Finding to explain (from premortem's %s check)\n", f.Source)
	what := f.Message
	if f.Exception != "" && !strings.Contains(what, f.Exception) {
		what = f.Exception + ": " + what
	}
	fmt.Fprintf(&extra, "line %d: %s\n", f.Range.Start.Line+1, what)
	for _, e := range f.Evidence {
		fmt.Fprintf(&extra, "because: %s\n", oneLine(e, 300))
	}
	// The finding itself is the subject; do not repeat it as evidence.
	ev := in.Evidence[:0:0]
	for _, e := range in.Evidence {
		if e.Source != f.Source || e.Message != f.Message {
			ev = append(ev, e)
		}
	}
	in.Evidence = ev
	p := buildPrompt(in, c.cfg, explainSystemPrompt, extra.String())
	key := c.key("explain", p.System, p.User)
	if v, ok := c.cache.get(key); ok {
		return v.(string), nil
	}
	tctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	text, err := c.complete(tctx, []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: p.System},
		{Role: openai.ChatMessageRoleUser, Content: p.User},
	}, false)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("llm explain: %w", c.scrub(err))
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("llm explain: the model returned an empty answer")
	}
	c.cache.put(key, text)
	return text, nil
}

// scrubbedError is an endpoint error whose message has the API key and anything that looks
// like a credential removed; it still unwraps to the original for errors.Is/As.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub hides the key (some endpoints echo it) and credential-like strings in err's message.
func (c *Client) scrub(err error) error {
	msg := err.Error()
	if key := c.cfg.APIKey(); len(key) >= 4 {
		msg = strings.ReplaceAll(msg, key, Redacted)
	}
	msg, _ = RedactSecrets(msg)
	return &scrubbedError{msg: msg, err: err}
}

// key identifies a request in the cache: the prompt, the model and the sampling settings.
func (c *Client) key(kind, system, user string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%g\x00", kind, c.cfg.Model, c.cfg.Samples, c.cfg.Temperature)
	io.WriteString(h, system)
	h.Write([]byte{0})
	io.WriteString(h, user)
	return hex.EncodeToString(h.Sum(nil))
}

// complete sends one chat request and returns the answer text, retrying 429/5xx/network
// failures with backoff (honouring Retry-After) and downgrading response_format when the
// endpoint rejects it.
func (c *Client) complete(ctx context.Context, msgs []openai.ChatCompletionMessage, wantJSON bool) (string, error) {
	if err := c.limiter.Acquire(ctx); err != nil {
		return "", err
	}
	defer c.limiter.Release()
	retries := 0
	for {
		mode := modeOff
		if wantJSON {
			mode = jsonMode(c.mode.Load())
		}
		req := c.request(msgs, mode)
		hint := &retryHint{}
		text, err := c.send(withHint(ctx, hint), req)
		if err == nil {
			return text, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if mode != modeOff && rejectsResponseFormat(err) {
			next := mode + 1
			if c.mode.CompareAndSwap(int32(mode), int32(next)) {
				c.log.Info("llm: endpoint rejected response_format, falling back", "from", mode.String(), "to", next.String())
			}
			continue
		}
		if !retryable(err) || retries >= c.cfg.MaxRetries {
			return "", err
		}
		wait := backoff(retries, hint.get())
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return "", fmt.Errorf("%w (retry after %s would pass the deadline)", err, wait)
		}
		retries++
		c.log.Info("llm: retrying", "attempt", retries, "wait", wait.String(), "error", c.scrub(err).Error())
		if err := c.sleep(ctx, wait); err != nil {
			return "", err
		}
	}
}

// request builds the chat request for the given response_format mode.
func (c *Client) request(msgs []openai.ChatCompletionMessage, mode jsonMode) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, Stream: c.cfg.Stream}
	if c.cfg.Temperature > 0 && !reasoningModel(c.cfg.Model) {
		req.Temperature = c.cfg.Temperature
	}
	switch mode {
	case modeSchema:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: "crash_verdict", Schema: answerSchema, Strict: true,
			},
		}
	case modeObject:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return req
}

// send performs one request, streamed or not, and returns the answer's text.
func (c *Client) send(ctx context.Context, req openai.ChatCompletionRequest) (string, error) {
	if !req.Stream {
		resp, err := c.api.CreateChatCompletion(ctx, req)
		if err != nil {
			return "", err
		}
		if len(resp.Choices) == 0 {
			return "", errors.New("the endpoint returned no choices")
		}
		return resp.Choices[0].Message.Content, nil
	}
	stream, err := c.api.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", err
	}
	defer stream.Close()
	var b strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if len(chunk.Choices) > 0 {
			b.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
}

// reasoningModel reports models that reject a temperature (OpenAI's o-series and GPT-5).
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// statusOf extracts the HTTP status of an endpoint error (0 when none).
func statusOf(err error) int {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode
	}
	return 0
}

// rejectsResponseFormat reports a 400/422 that blames response_format or JSON schemas.
func rejectsResponseFormat(err error) bool {
	s := statusOf(err)
	if s != http.StatusBadRequest && s != http.StatusUnprocessableEntity {
		return false
	}
	msg := strings.ToLower(err.Error())
	var re *openai.RequestError
	if errors.As(err, &re) {
		msg += strings.ToLower(string(re.Body))
	}
	for _, w := range []string{"response_format", "json_schema", "json_object", "structured output", "response format"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// retryable reports errors worth another try: rate limits, server errors and network
// failures.
func retryable(err error) bool {
	switch s := statusOf(err); {
	case s == http.StatusTooManyRequests, s == http.StatusRequestTimeout, s >= 500:
		return true
	case s != 0:
		return false
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// backoff is the wait before retry n (0-based): the server's Retry-After when given (at most
// defaultMaxRetryWait), else 0.5s doubling up to 8s.
func backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, defaultMaxRetryWait)
	}
	return min(500*time.Millisecond<<n, 8*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
