package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// llmLayer runs the LLM layer: a prediction for the focus cell of a pass, after the cheaper
// layers spoke and the user paused typing, and the explain command. The client is rebuilt
// when the settings change.
type llmLayer struct {
	s *Server

	mu     sync.Mutex
	cfg    llm.Config
	client *llm.Client
	// reported remembers the last configuration problem logged, so it is logged once.
	reported string

	progressSeq atomic.Int64
}

func newLLMLayer(s *Server) *llmLayer { return &llmLayer{s: s} }

// llmConfig maps the premortem.llm.* settings to the client configuration.
func llmConfig(st Settings) llm.Config {
	l := st.LLM
	return llm.Config{
		Enabled:         l.Enabled,
		BaseURL:         l.BaseURL,
		Model:           l.Model,
		APIKeyEnv:       l.APIKeyEnv,
		Timeout:         l.Timeout.D(),
		MaxPromptTokens: l.MaxPromptTokens,
		Samples:         l.Samples,
		Temperature:     float32(l.Temperature),
		SendValues:      l.SendValues,
	}
}

// active reports whether the settings turn the layer on.
func (l *llmLayer) active(st Settings) bool {
	cfg := llmConfig(st)
	return cfg.Active() && cfg.Model != ""
}

// clientFor returns the client for the settings, building it when they changed.
func (l *llmLayer) clientFor(st Settings) (*llm.Client, error) {
	cfg := llmConfig(st)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil && sameConfig(l.cfg, cfg) {
		return l.client, nil
	}
	c, err := llm.New(cfg)
	if err != nil {
		if msg := err.Error(); msg != l.reported {
			l.reported = msg
			l.s.logf(protocol.MessageTypeWarning, "LLM layer off: %v", err)
		}
		return nil, err
	}
	l.cfg, l.client, l.reported = cfg, c, ""
	return c, nil
}

func sameConfig(a, b llm.Config) bool {
	ea, eb := a.Enabled != nil && *a.Enabled, b.Enabled != nil && *b.Enabled
	a.Enabled, b.Enabled = nil, nil
	return ea == eb && a == b
}

// predict asks the LLM about the focus cell unless a cheaper layer already settled it (a
// shadow run that crashed or finished) or the answer for this text and kernel state is
// cached. It reports $/progress while waiting.
func (l *llmLayer) predict(ctx context.Context, p *pass, a *attachment, res *analysis.Result, c *notebook.Cell) {
	client, err := l.clientFor(p.settings)
	if err != nil {
		return
	}
	count := 0
	if a != nil {
		count = a.executionCount()
	}
	var insp *facts.Inspection
	var evidence []analysis.Finding
	if cl := p.d.layersFor(c); cl != nil {
		if cl.shadow != nil && (cl.shadow.Status == facts.ShadowError || judge.CleanShadow(cl.shadow)) {
			return // the real run in the forked kernel already answered (a shortened clean run did not)
		}
		if cl.llmDone && cl.llmRun >= count && !p.force {
			return
		}
		insp = cl.inspection
		evidence = append(append(evidence, cl.rules...), cl.shadowFind...)
	}
	if res != nil {
		evidence = append(append([]analysis.Finding(nil), res.Findings[c.ID]...), evidence...)
	}
	done := l.beginProgress(ctx, "premortem: asking the LLM about the cell")
	in := judge.LLMInput(p.snap, res, c.ID, insp, evidence)
	v, err := client.Predict(ctx, in)
	done()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		l.s.logf(protocol.MessageTypeWarning, "LLM prediction failed: %v", err)
	}
	if v == nil {
		return
	}
	if v.Unknown {
		l.s.tracef("LLM verdict unknown for %s: %s", c.ID, v.Reason)
	}
	fs := v.Findings(c.ID, c.Text)
	p.d.updateLayers(c, func(cl *cellLayers) {
		cl.llm, cl.llmDone, cl.llmRun = fs, true, count
	})
	l.s.publish(ctx, p.d, p.gen)
}

// beginProgress shows a work-done progress while the LLM works, when the client supports
// it; the returned function ends it.
func (l *llmLayer) beginProgress(ctx context.Context, title string) func() {
	l.s.mu.Lock()
	supported := l.s.client.workDoneProgress
	l.s.mu.Unlock()
	if !supported || l.s.conn == nil {
		return func() {}
	}
	token := fmt.Sprintf("premortem-llm-%d", l.progressSeq.Add(1))
	if _, err := l.s.conn.Call(ctx, "window/workDoneProgress/create", WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		l.s.tracef("workDoneProgress/create: %v", err)
		return func() {}
	}
	l.s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "begin", Title: title}})
	return func() {
		l.s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "end"}})
	}
}

// explain returns Markdown about the findings: the LLM's longer diagnosis of the first
// one when an endpoint is configured, followed by every finding with its evidence and
// fixes.
func (l *llmLayer) explain(ctx context.Context, d *document, snap *notebook.Notebook, res *analysis.Result, c *notebook.Cell, fs []analysis.Finding) (any, error) {
	local := findingsMarkdown(fs)
	st := l.s.currentSettings()
	if !l.active(st) {
		return local + "\n*Configure an LLM endpoint (premortem.llm.baseURL and premortem.llm.model) for a longer explanation.*\n", nil
	}
	client, err := l.clientFor(st)
	if err != nil {
		return local, nil
	}
	var insp *facts.Inspection
	if cl := d.layersFor(c); cl != nil {
		insp = cl.inspection
	}
	done := l.beginProgress(ctx, "premortem: asking the LLM to explain")
	md, err := client.Explain(ctx, judge.LLMInput(snap, res, c.ID, insp, fs), fs[0])
	done()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		l.s.logf(protocol.MessageTypeWarning, "LLM explanation failed: %v", err)
		return local + fmt.Sprintf("\n*The LLM could not explain: %v*\n", err), nil
	}
	return strings.TrimSpace(md) + "\n\n---\n\n" + local, nil
}
