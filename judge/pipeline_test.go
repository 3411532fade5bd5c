package judge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// answerKernel is an idle kernel whose inspection finds the names and whose shadow runs end
// at once with a scripted result.
type answerKernel struct {
	kernelclient.Kernel // only the calls below are used

	shadow *facts.ShadowResult
	mu     sync.Mutex
	calls  []string
}

func (k *answerKernel) note(call string) {
	k.mu.Lock()
	k.calls = append(k.calls, call)
	k.mu.Unlock()
}

func (k *answerKernel) State() kernelclient.State { return kernelclient.StateIdle }
func (k *answerKernel) RunningOthers() bool       { return false }
func (k *answerKernel) SandboxProbe(context.Context, string) (*facts.SandboxInfo, error) {
	return &facts.SandboxInfo{Sandbox: facts.SandboxNamespaces}, nil
}
func (k *answerKernel) Inspect(_ context.Context, req kernelclient.InspectRequest) (*facts.Inspection, error) {
	k.note("inspect")
	return &facts.Inspection{ExecutionCount: 1, Namespace: []string{"x"}, Values: map[string]facts.Value{"x": {Exists: true, Type: "int"}}}, nil
}
func (k *answerKernel) Shadow(context.Context, string, kernelclient.ShadowOptions) (*facts.ShadowResult, error) {
	k.note("shadow")
	r := *k.shadow
	return &r, nil
}

// fakeLLM is an OpenAI-compatible endpoint that predicts no crash and counts its prompts.
func fakeLLM(t *testing.T) (*llm.Client, *atomic.Int32) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		answer := `{"reasoning":"fine","crash":false,"confidence":0.3,"line":0,"exception":"","category":"other","explanation":"ok","fix":null}`
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(srv.Close)
	on := true
	t.Setenv("PM_PIPELINE_TEST_KEY", "k")
	c, err := llm.New(llm.Config{Enabled: &on, BaseURL: srv.URL + "/v1", Model: "fake", APIKeyEnv: "PM_PIPELINE_TEST_KEY", Timeout: 10 * time.Second, CacheSize: -1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c, &asked
}

// TestPipelineLLMRule: the one rule for when the LLM is asked, the same for the editor and
// the command line: never when a shadow run already answered (it crashed, or it finished
// with no loop shortened), otherwise yes (a shortened clean run, a timeout, no shadow run,
// shadow runs off). The layers publish cheapest first.
func TestPipelineLLMRule(t *testing.T) {
	shortened := &facts.DevRun{Shortened: true, Loops: []facts.DevLoop{{Line: 1, Kind: "for", Entries: 1, Ran: 3}}}
	for _, tc := range []struct {
		name   string
		shadow *facts.ShadowResult
		mode   string
		asked  int32
		layers string
	}{
		{"crash", &facts.ShadowResult{Status: facts.ShadowError, Exception: "ZeroDivisionError", Message: "division by zero", Line: 1}, ShadowSafe, 0, "rules shadow verify"},
		{"clean", &facts.ShadowResult{Status: facts.ShadowOK}, ShadowSafe, 0, "rules shadow"},
		{"shortened clean", &facts.ShadowResult{Status: facts.ShadowOK, DevRun: shortened}, ShadowSafe, 1, "rules shadow llm"},
		{"timeout", &facts.ShadowResult{Status: facts.ShadowTimeout, Reason: "the shadow run timed out"}, ShadowSafe, 1, "rules shadow llm"},
		{"shadow off", nil, ShadowOff, 1, "rules llm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := &notebook.Notebook{URI: "mem.ipynb", Cells: []*notebook.Cell{
				{ID: "a", Kind: notebook.Code, Text: "x = 0", ExecutionOrder: 1},
				{ID: "b", Kind: notebook.Code, Text: "y = 1 / x"},
			}}
			client, asked := fakeLLM(t)
			k := &answerKernel{shadow: tc.shadow}
			o := DefaultOptions()
			o.Shadow = tc.mode
			j := &Judge{Kernel: k, LLM: client, Options: o}
			var mu sync.Mutex
			var layers []string
			publish := func(a Answer) {
				mu.Lock()
				defer mu.Unlock()
				if n := len(layers); a.Layer != LayerStatic && (n == 0 || layers[n-1] != string(a.Layer)) {
					layers = append(layers, string(a.Layer))
				}
			}
			v, err := j.Run(context.Background(), Pass{Notebook: nb, Rules: []string{"b"}, Focus: "b", Publish: publish})
			if err != nil {
				t.Fatal(err)
			}
			if got := asked.Load(); got != tc.asked {
				t.Errorf("the LLM was asked %d times, want %d", got, tc.asked)
			}
			if got := strings.Join(layers, " "); got != tc.layers {
				t.Errorf("answers from %q, want %q", got, tc.layers)
			}
			if tc.name == "crash" && v.Verdict != VerdictCrash {
				t.Errorf("verdict %s after a shadow crash", v.Verdict)
			}
		})
	}
}
