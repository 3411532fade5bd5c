package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// llmLayer holds the LLM layer's client, rebuilt when the settings change: a pass gives it
// to judge's pipeline (which asks the LLM about the focus cell after the cheaper layers
// spoke), and the explain command asks it directly.
type llmLayer struct {
	s *Server

	mu     sync.Mutex
	cfg    judge.LLMConfig
	client *judge.LLMClient
	// reported remembers the last configuration problem logged, so it is logged once.
	reported string
}

func newLLMLayer(s *Server) *llmLayer { return &llmLayer{s: s} }

// llmConfig maps the premortem.llm.* settings to the client configuration.
func llmConfig(st Settings) judge.LLMConfig {
	l := st.LLM
	return judge.LLMConfig{
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
func (l *llmLayer) clientFor(st Settings) (*judge.LLMClient, error) {
	cfg := llmConfig(st)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil && sameConfig(l.cfg, cfg) {
		return l.client, nil
	}
	c, err := judge.NewLLM(cfg)
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

func sameConfig(a, b judge.LLMConfig) bool {
	ea, eb := a.Enabled != nil && *a.Enabled, b.Enabled != nil && *b.Enabled
	a.Enabled, b.Enabled = nil, nil
	return ea == eb && a == b
}

// explain returns Markdown about the findings: the LLM's longer diagnosis of the first
// one when an endpoint is configured, followed by every finding with its evidence and
// fixes.
func (l *llmLayer) explain(ctx context.Context, d *document, snap *notebook.Notebook, res *analysis.Result, c *notebook.Cell, fs []finding.Finding) (any, error) {
	local := findingsMarkdown(fs)
	st := l.s.currentSettings()
	if !l.active(st) {
		return local + "\n*Configure an LLM endpoint (premortem.llm.baseURL and premortem.llm.model) for a longer explanation.*\n", nil
	}
	client, err := l.clientFor(st)
	if err != nil {
		return local, nil
	}
	insp := d.sess.Inspection(c)
	done := l.s.beginProgress(ctx, "premortem: asking the LLM to explain")
	md, err := judge.Explain(ctx, client, snap, res, c.ID, insp, fs)
	done("", true)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		l.s.logf(protocol.MessageTypeWarning, "LLM explanation failed: %v", err)
		return local + fmt.Sprintf("\n*The LLM could not explain: %v*\n", err), nil
	}
	return strings.TrimSpace(md) + "\n\n---\n\n" + local, nil
}
