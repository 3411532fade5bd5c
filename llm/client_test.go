package llm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// pandasInput is a JunoBench-like case (pandas_10): converting '10,000+' strings to int.
func pandasInput() Input {
	return Input{
		Executed: []CellText{
			{Index: 0, ExecutionOrder: 1, Text: "import pandas as pd"},
			{Index: 1, ExecutionOrder: 2, Text: "df=pd.read_csv('data/googleplaystore.csv')"},
		},
		Target: CellText{Index: 2, Text: "df['Installs']=df['Installs'].astype('int')"},
		Facts: map[string]facts.Value{"df": {Name: "df", Exists: true, Type: "pandas.core.frame.DataFrame",
			Shape: []int{10, 2}, Columns: []facts.Column{{Name: "Installs", Dtype: "object"}}}},
		Dependencies: []int{0, 1},
	}
}

// newTestClient returns a client on f whose retry waits are recorded instead of slept.
func newTestClient(t *testing.T, f *fakeAPI, edit func(*Config)) (*Client, *[]time.Duration) {
	t.Helper()
	cfg := f.config(t)
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, waits
}

func TestPredictStreamingOffAndOn(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "stream"}[stream]
		t.Run(name, func(t *testing.T) {
			f := newFakeAPI(t, reply{content: recordedAnswer(t, "installs_keyerror.json")})
			c, _ := newTestClient(t, f, func(c *Config) { c.Stream = stream })
			v, err := c.Predict(context.Background(), pandasInput())
			if err != nil {
				t.Fatal(err)
			}
			if v.Unknown || !v.Crash || v.Exception != "ValueError" || v.Line != 1 || v.Confidence != 0.93 {
				t.Fatalf("verdict = %+v", v)
			}
			if v.Fix == nil || !strings.Contains(v.Fix.Replacement, "str.replace") {
				t.Errorf("fix = %+v", v.Fix)
			}
			reqs := f.recorded()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Req.Stream != stream {
				t.Errorf("stream = %v", r.Req.Stream)
			}
			if r.Authorization != "Bearer test-key-123" {
				t.Errorf("Authorization = %q", r.Authorization)
			}
			if r.Req.Model != "test-model" || r.Req.Temperature != DefaultTemperature {
				t.Errorf("model %q temperature %v", r.Req.Model, r.Req.Temperature)
			}
			if r.Req.ResponseFormat == nil || r.Req.ResponseFormat.Type != "json_schema" || r.Req.ResponseFormat.JSONSchema == nil ||
				!r.Req.ResponseFormat.JSONSchema.Strict {
				t.Errorf("response_format = %+v", r.Req.ResponseFormat)
			}
			if len(r.Req.Messages) != 2 || r.Req.Messages[0].Role != "system" || !strings.Contains(r.Req.Messages[1].Content, "1| df['Installs']") {
				t.Errorf("messages = %+v", r.Req.Messages)
			}
		})
	}
}

func TestPredictRetries429HonouringRetryAfter(t *testing.T) {
	f := newFakeAPI(t,
		reply{status: 429, errMessage: "Rate limit reached", retryAfter: "7"},
		reply{status: 429, errMessage: "Rate limit reached", retryAfter: "1.5"},
		reply{content: recordedAnswer(t, "no_crash.json")},
	)
	c, waits := newTestClient(t, f, nil)
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil || v.Unknown || v.Crash {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	want := []time.Duration{7 * time.Second, 1500 * time.Millisecond}
	if len(*waits) != 2 || (*waits)[0] != want[0] || (*waits)[1] != want[1] {
		t.Errorf("waits = %v, want %v", *waits, want)
	}
}

func TestPredictRetriesAreBounded(t *testing.T) {
	f := newFakeAPI(t)
	f.fallback = &reply{status: 429, errMessage: "Rate limit reached", retryAfter: "600"}
	c, waits := newTestClient(t, f, func(c *Config) { c.MaxRetries = 2 })
	v, err := c.Predict(context.Background(), pandasInput())
	if err == nil || v == nil || !v.Unknown || !strings.Contains(v.Reason, "429") {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	if n := len(f.recorded()); n != 3 {
		t.Errorf("%d requests, want 3 (1 + 2 retries)", n)
	}
	for _, w := range *waits {
		if w > defaultMaxRetryWait {
			t.Errorf("waited %v, more than the cap %v", w, defaultMaxRetryWait)
		}
	}
}

func TestPredictRetries500WithBackoff(t *testing.T) {
	f := newFakeAPI(t,
		reply{status: 500, errMessage: "internal error"},
		reply{status: 503, errMessage: "overloaded"},
		reply{content: recordedAnswer(t, "installs_keyerror.json")},
	)
	c, waits := newTestClient(t, f, nil)
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil || !v.Crash {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	if len(*waits) != 2 || (*waits)[0] != 500*time.Millisecond || (*waits)[1] != time.Second {
		t.Errorf("waits = %v, want [500ms 1s]", *waits)
	}
}

func TestPredictDoesNotRetryClientErrors(t *testing.T) {
	f := newFakeAPI(t, reply{status: 401, errMessage: "Incorrect API key provided: test-key-123"})
	c, waits := newTestClient(t, f, nil)
	v, err := c.Predict(context.Background(), pandasInput())
	if err == nil || !v.Unknown {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	if len(f.recorded()) != 1 || len(*waits) != 0 {
		t.Errorf("%d requests, waits %v: a 401 must not be retried", len(f.recorded()), *waits)
	}
	if strings.Contains(v.Reason, "test-key-123") || strings.Contains(err.Error(), "test-key-123") {
		t.Error("the API key leaked into an error")
	}
}

func TestPredictTimeout(t *testing.T) {
	f := newFakeAPI(t, reply{block: true})
	c, _ := newTestClient(t, f, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	v, err := c.Predict(context.Background(), pandasInput())
	if !errors.Is(err, context.DeadlineExceeded) || v == nil || !v.Unknown {
		t.Fatalf("verdict %+v, err %v; want unknown and deadline exceeded", v, err)
	}
}

func TestPredictHonoursCancellation(t *testing.T) {
	f := newFakeAPI(t, reply{block: true})
	c, _ := newTestClient(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Predict(ctx, pandasInput())
		done <- err
	}()
	// Cancel once the request is at the server.
	select {
	case <-f.arrived:
	case err := <-done:
		t.Fatalf("Predict returned before cancellation: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the server")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// An already cancelled context never reaches the endpoint.
	n := len(f.recorded())
	if _, err := c.Predict(ctx, pandasInput()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if len(f.recorded()) != n {
		t.Error("a request was sent with a cancelled context")
	}
}

func TestPredictRepairsMalformedJSON(t *testing.T) {
	bad := recordedAnswer(t, "malformed.txt")
	f := newFakeAPI(t, reply{content: bad}, reply{content: recordedAnswer(t, "installs_keyerror.json")})
	c, _ := newTestClient(t, f, nil)
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil || v.Unknown || !v.Crash {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	reqs := f.recorded()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Req.Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content != bad || !strings.Contains(msgs[3].Content, "only the JSON object") {
		t.Errorf("repair request messages = %+v", msgs)
	}
}

func TestPredictTruncatedJSONBecomesUnknown(t *testing.T) {
	trunc := recordedAnswer(t, "truncated.txt")
	f := newFakeAPI(t, reply{content: trunc}, reply{content: trunc})
	c, _ := newTestClient(t, f, nil)
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil {
		t.Fatalf("err = %v: an unusable answer is an unknown verdict, not an error", err)
	}
	if !v.Unknown || !strings.Contains(v.Reason, "repair") {
		t.Fatalf("verdict = %+v", v)
	}
	if len(f.recorded()) != 2 {
		t.Errorf("%d requests, want 2 (one repair retry)", len(f.recorded()))
	}
	if len(v.Findings("c1", "x")) != 0 {
		t.Error("an unknown verdict yielded findings")
	}
}

func TestPredictFencedAnswer(t *testing.T) {
	f := newFakeAPI(t, reply{content: recordedAnswer(t, "fenced_keyerror.md")})
	c, _ := newTestClient(t, f, func(c *Config) { c.JSONMode = JSONModeOff })
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil || v.Exception != "KeyError" || v.Line != 2 {
		t.Fatalf("verdict %+v, err %v", v, err)
	}
	if f.recorded()[0].Req.ResponseFormat != nil {
		t.Error("JSON mode off still sent response_format")
	}
}

func TestResponseFormatFallbackIsRemembered(t *testing.T) {
	answer := recordedAnswer(t, "no_crash.json")
	f := newFakeAPI(t,
		reply{status: 400, errMessage: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."},
		reply{status: 400, errMessage: "response_format json_object is not supported"},
		reply{content: answer},
		reply{content: answer},
	)
	c, _ := newTestClient(t, f, nil)
	if _, err := c.Predict(context.Background(), pandasInput()); err != nil {
		t.Fatal(err)
	}
	if got := c.JSONMode(); got != "off" {
		t.Errorf("JSONMode = %s, want off", got)
	}
	in := pandasInput()
	in.Target.Text += "\ndf.head()"
	if _, err := c.Predict(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	var formats []string
	for _, r := range f.recorded() {
		formats = append(formats, formatOf(r.Req))
	}
	if strings.Join(formats, ",") != "json_schema,json_object,," {
		t.Errorf("response formats sent = %q, want json_schema,json_object then none twice", formats)
	}
}

func TestPredictMajorityVote(t *testing.T) {
	crashA := `{"reasoning":"r","crash":true,"confidence":0.9,"line":1,"exception":"ValueError","category":"data value","explanation":"A","fix":null}`
	crashB := `{"reasoning":"r","crash":true,"confidence":0.6,"line":1,"exception":"ValueError","category":"data value","explanation":"B","fix":null}`
	crashOther := `{"reasoning":"r","crash":true,"confidence":0.3,"line":1,"exception":"TypeError","category":"x","explanation":"C","fix":null}`
	noCrash := recordedAnswer(t, "no_crash.json")
	f := newFakeAPI(t, reply{content: crashA}, reply{content: crashB}, reply{content: noCrash}, reply{content: crashOther}, reply{content: noCrash})
	c, _ := newTestClient(t, f, func(c *Config) { c.Samples = 5 })
	v, err := c.Predict(context.Background(), pandasInput())
	if err != nil {
		t.Fatal(err)
	}
	if !v.Crash || v.Exception != "ValueError" || v.Samples != 5 || v.Votes != 3 {
		t.Fatalf("verdict = %+v", v)
	}
	if want := (0.9 + 0.6 + 0.3) / 3; v.Confidence < want-1e-9 || v.Confidence > want+1e-9 {
		t.Errorf("confidence %v, want mean of the majority %v", v.Confidence, want)
	}
}

func TestPredictCachesByPromptAndModel(t *testing.T) {
	f := newFakeAPI(t, reply{content: recordedAnswer(t, "installs_keyerror.json")})
	c, _ := newTestClient(t, f, nil)
	first, err := c.Predict(context.Background(), pandasInput())
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Predict(context.Background(), pandasInput())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.recorded()) != 1 || !second.Cached || first.Cached || second.Exception != first.Exception {
		t.Errorf("requests %d, first %+v, second %+v", len(f.recorded()), first, second)
	}
}

// TestCachedVerdictIsACopy: a caller that adjusts a verdict's fix (to cell-absolute lines,
// say) must not change what the cache hands the next caller.
func TestCachedVerdictIsACopy(t *testing.T) {
	f := newFakeAPI(t, reply{content: recordedAnswer(t, "installs_keyerror.json")})
	c, _ := newTestClient(t, f, nil)
	first, err := c.Predict(context.Background(), pandasInput())
	if err != nil {
		t.Fatal(err)
	}
	if first.Fix == nil {
		t.Fatal("recorded answer has no fix")
	}
	want := *first.Fix
	first.Fix.StartLine += 10
	first.Fix.Replacement = "changed by the first caller"
	for i := 0; i < 2; i++ {
		v, err := c.Predict(context.Background(), pandasInput())
		if err != nil {
			t.Fatal(err)
		}
		if !v.Cached || v.Fix == nil || *v.Fix != want {
			t.Fatalf("cached verdict %d: fix %+v, want %+v", i, v.Fix, want)
		}
		v.Fix.Replacement = "changed by a later caller"
	}
}

func TestReasoningModelsGetNoTemperature(t *testing.T) {
	f := newFakeAPI(t, reply{content: recordedAnswer(t, "no_crash.json")})
	c, _ := newTestClient(t, f, func(c *Config) { c.Model = "gpt-5-mini" })
	if _, err := c.Predict(context.Background(), pandasInput()); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.recorded()[0].Raw["temperature"]; ok {
		t.Error("temperature sent to a reasoning model")
	}
}

func TestMaxInFlight(t *testing.T) {
	f := newFakeAPI(t)
	f.fallback = &reply{content: recordedAnswer(t, "no_crash.json")}
	c, _ := newTestClient(t, f, func(c *Config) { c.MaxInFlight = 2; c.Samples = 3; c.CacheSize = -1 })
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Predict(context.Background(), pandasInput()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := f.maxInflight.Load(); m > 2 {
		t.Errorf("%d requests in flight at once, limit 2", m)
	}
	if n := len(f.recorded()); n != 12 {
		t.Errorf("%d requests, want 12", n)
	}
}

func TestExplain(t *testing.T) {
	md := "**KeyError** on line 3: `df` has no column `'Age'`.\n\n```python\nm = df['age'].mean()\n```"
	f := newFakeAPI(t, reply{content: md})
	c, _ := newTestClient(t, f, nil)
	fd := finding.Finding{Source: finding.SourceRules, Code: "missing-column", Exception: "KeyError",
		Message: "column 'Age' is not in df", Range: finding.Range{Start: finding.Position{Line: 2}},
		Evidence: []string{"df columns ['age', 'fare']"}}
	in := pandasInput()
	in.Evidence = []finding.Finding{fd}
	got, err := c.Explain(context.Background(), in, fd)
	if err != nil || got != md {
		t.Fatalf("Explain = %q, %v", got, err)
	}
	r := f.recorded()[0]
	if r.Req.ResponseFormat != nil {
		t.Error("Explain asked for JSON")
	}
	user := r.Req.Messages[1].Content
	if !strings.Contains(user, "# Finding to explain (from premortem's rules check)") || !strings.Contains(user, "line 3: KeyError: column 'Age' is not in df") {
		t.Errorf("explain prompt:\n%s", user)
	}
	if strings.Contains(user, "# Evidence") {
		t.Error("the finding was repeated as evidence")
	}
}

func TestNewNeedsEndpointAndModel(t *testing.T) {
	if _, err := New(Config{Model: "m"}); err == nil {
		t.Error("New without a base URL succeeded")
	}
	if _, err := New(Config{BaseURL: "http://localhost:1/v1"}); err == nil {
		t.Error("New without a model succeeded")
	}
	if _, err := New(Config{BaseURL: "http://localhost:1/v1", Model: "m", JSONMode: "yaml"}); err == nil {
		t.Error("New with a bad JSON mode succeeded")
	}
}

func TestConfigActive(t *testing.T) {
	t.Setenv("PM_KEY_SET", "k")
	t.Setenv("PM_KEY_EMPTY", "")
	on, off := true, false
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, false},
		{Config{BaseURL: "http://x", APIKeyEnv: "PM_KEY_SET"}, true},
		{Config{BaseURL: "http://x", APIKeyEnv: "PM_KEY_EMPTY"}, false},
		{Config{APIKeyEnv: "PM_KEY_SET"}, false},
		{Config{BaseURL: "http://x", APIKeyEnv: "PM_KEY_SET", Enabled: &off}, false},
		{Config{BaseURL: "http://localhost:11434/v1", APIKeyEnv: "PM_KEY_EMPTY", Enabled: &on}, true},
	} {
		if got := tc.cfg.Active(); got != tc.want {
			t.Errorf("%+v.Active() = %v, want %v", tc.cfg, got, tc.want)
		}
	}
	if s := (Config{BaseURL: "http://x", APIKeyEnv: "PM_KEY_SET"}).String(); strings.Contains(s, "=k}") || !strings.Contains(s, "PM_KEY_SET") {
		t.Errorf("String() = %q", s)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"120"}, "Retry-After": {"3"}}, 120 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(9 * time.Second).Format(http.TimeFormat)}}, 9 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	} {
		if got := parseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(1)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.TryAcquire() {
		t.Fatal("TryAcquire succeeded on a full limiter")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on a full limiter with a cancelled context = %v", err)
	}
	l.Release()
	if !l.TryAcquire() || l.InFlight() != 1 {
		t.Fatal("slot not returned")
	}
}

func TestLRU(t *testing.T) {
	c := newLRU(2)
	c.put("a", 1)
	c.put("b", 2)
	c.get("a")
	c.put("c", 3) // evicts b, the least recently used
	if _, ok := c.get("b"); ok {
		t.Error("b not evicted")
	}
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Error("a lost")
	}
	if c.len() != 2 {
		t.Errorf("len %d", c.len())
	}
	var off *lru = newLRU(-1)
	off.put("x", 1)
	if _, ok := off.get("x"); ok {
		t.Error("disabled cache stored a value")
	}
}

// TestPredictToFindings goes from a recorded answer to the finding and fix the editor shows.
func TestPredictToFindings(t *testing.T) {
	f := newFakeAPI(t, reply{content: recordedAnswer(t, "nameerror_line3.json")})
	c, _ := newTestClient(t, f, nil)
	cell := "fig, axs = plt.subplots(6, 3, figsize=(7, 17))\nfor col, ax in zip(numvars, axs.ravel()):\n    plt.xlabel(col)"
	in := Input{Target: CellText{Index: 7, Text: cell}}
	v, err := c.Predict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	fs := v.Findings("cell-7", cell)
	if len(fs) != 1 {
		t.Fatalf("findings = %+v", fs)
	}
	got := fs[0]
	if got.Exception != "NameError" || got.Range.Start.Line != 2 || got.Range.Start.Character != 4 || got.Source != finding.SourceLLM {
		t.Errorf("finding = %+v", got)
	}
	if len(got.Fixes) != 1 || got.Fixes[0].Edits[0].NewText != "import matplotlib.pyplot as plt\nfig, axs = plt.subplots(6, 3, figsize=(7, 17))" ||
		got.Fixes[0].Edits[0].Range.End != (finding.Position{Line: 0, Character: 46}) {
		t.Errorf("fix = %+v", got.Fixes)
	}
}
