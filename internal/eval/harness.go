package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
	"github.com/premortem/premortem/notebook"
)

// Settings of `premortem eval`.
const (
	// settingStatic is the static layer alone (tree-sitter, no kernel, no LLM).
	settingStatic = "static"
	// settingCode is the LLM on code alone, sliced executed cells and the target, no
	// runtime facts (CRANE-LLM's -RT). Offline it predicts nothing (unknown).
	settingCode = "code"
	// settingRuntime adds runtime facts: the case runs in a real kernel and the static
	// layer, the runtime rules and the LLM (given the facts, CRANE-LLM's +RT) judge the
	// target; no shadow run. Cases without synthetic data fall back to settingCode.
	settingRuntime = "runtime"
	// settingAll is every layer: static, rules, shadow run, LLM. Cases without synthetic
	// data get the static layer and the LLM on code.
	settingAll = "all"
)

var allSettings = []string{settingStatic, settingCode, settingRuntime, settingAll}

// runner judges one version of a case in one setting. The harness only sees this type, so
// another way of running cases (a remote judge, recorded verdicts) plugs in here.
type runner func(ctx context.Context, c *evalCase, version string) (outcome, error)

// notebookJudge runs `premortem check`'s pipeline on a notebook file; a variable so tests
// can stand in for the kernel.
var notebookJudge = judge.CheckNotebook

// harness holds what the runners share.
type harness struct {
	client  *llm.Client // nil offline
	work    string      // where notebooks are built
	replay  string      // replay.py
	cases   string      // cases dir (for replay.py)
	data    string      // data dir (for replay.py)
	desc    string
	python  string
	timeout time.Duration
	shadow  string
	dump    string // folder to write runtime prompts to ("" = none)
	log     func(format string, args ...any)

	mu     sync.Mutex
	built  map[string]string // case id -> folder with {buggy,fixed}.ipynb and data
	tokens int               // prompt tokens of the last Predict (observer)
}

func (h *harness) runnerFor(setting string) runner {
	switch setting {
	case settingStatic:
		return h.runStatic
	case settingCode:
		return h.runCode
	case settingRuntime:
		return func(ctx context.Context, c *evalCase, v string) (outcome, error) {
			if c.DataGen == "" {
				o, err := h.runCode(ctx, c, v)
				o.Note = strings.TrimSpace("no synthetic data: LLM on code. " + o.Note)
				return o, err
			}
			return h.runKernel(ctx, c, v, judge.Options{Rules: true, Shadow: judge.ShadowOff})
		}
	case settingAll:
		return func(ctx context.Context, c *evalCase, v string) (outcome, error) {
			if c.DataGen == "" {
				return h.runNotebook(ctx, c, v, h.plainNotebook, judge.CheckOptions{NoKernel: true, LLM: h.client}, false)
			}
			opts := judge.DefaultOptions()
			opts.Shadow = h.shadow
			return h.runKernel(ctx, c, v, opts)
		}
	}
	return nil
}

// runCode asks the LLM about the code alone; offline it only builds the prompt, to count
// its tokens, and predicts nothing.
func (h *harness) runCode(ctx context.Context, c *evalCase, version string) (outcome, error) {
	o := outcome{Case: c.ID, Version: version}
	in := c.Versions[version].input()
	if h.client == nil {
		o.Unknown = true
		o.Note = "no LLM endpoint"
		o.PromptTokens = llm.BuildPrompt(in, llm.Config{}).Tokens
		return o, nil
	}
	v, err := h.client.Predict(ctx, in)
	if v != nil {
		o.PromptTokens = v.PromptTokens
	}
	if err != nil && (v == nil || ctx.Err() != nil) {
		return o, err
	}
	if v.Unknown {
		o.Unknown = true
		o.Note = v.Reason
		return o, nil
	}
	o.Source = "llm"
	o.Crash = v.Crash
	o.Exception = v.Exception
	o.Line = v.Line
	return o, nil
}

// runStatic runs the static layer on a notebook built from the case JSON.
func (h *harness) runStatic(ctx context.Context, c *evalCase, version string) (outcome, error) {
	return h.runNotebook(ctx, c, version, h.plainNotebook, judge.CheckOptions{NoKernel: true}, false)
}

// runKernel builds the case's notebook beside its synthetic data and judges it in a kernel.
func (h *harness) runKernel(ctx context.Context, c *evalCase, version string, opts judge.Options) (outcome, error) {
	return h.runNotebook(ctx, c, version, h.replayNotebook, judge.CheckOptions{Options: opts, LLM: h.client, ReplayTimeout: h.timeout}, true)
}

// runNotebook judges the target of the notebook that build returns.
func (h *harness) runNotebook(ctx context.Context, c *evalCase, version string, build func(*evalCase, string) (string, error),
	opts judge.CheckOptions, kernel bool) (outcome, error) {
	o := outcome{Case: c.ID, Version: version, Kernel: kernel}
	path, err := build(c, version)
	if err != nil {
		return o, err
	}
	h.mu.Lock()
	h.tokens = 0
	h.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	rep, err := notebookJudge(rctx, path, opts)
	if err != nil {
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		o.Unknown = true
		o.Note = "check failed: " + err.Error()
		return o, nil
	}
	h.mu.Lock()
	o.PromptTokens = h.tokens
	h.mu.Unlock()
	if rep.ReplayError != nil {
		o.Note = rep.ReplayError.Error()
	}
	if len(rep.Cells) == 0 {
		o.Unknown = true
		o.Note = strings.TrimSpace(o.Note + " no target cell judged")
		return o, nil
	}
	v := rep.Cells[len(rep.Cells)-1]
	switch v.Verdict {
	case judge.VerdictCrash:
		o.Crash = true
		if len(v.Findings) > 0 {
			f := v.Findings[0]
			o.Exception = f.Exception
			o.Line = f.Range.Start.Line + 1
			o.Source = string(f.Source)
		}
	case judge.VerdictUnknown:
		o.Unknown = true
	}
	return o, nil
}

// plainNotebook writes the case version as a notebook (executed cells with their run
// counts, the target without one) in the harness's work folder, for judging without a
// kernel.
func (h *harness) plainNotebook(c *evalCase, version string) (string, error) {
	dir := filepath.Join(h.work, "static", c.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, version+".ipynb")
	if fileExists(path) {
		return path, nil
	}
	v := c.Versions[version]
	nb := notebook.NewPython(path)
	for i, e := range v.Executed {
		nb.AddCode(e.Code, i+1)
	}
	nb.AddCode(v.Target.Code, 0)
	b, err := nb.MarshalIpynb()
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

// replayNotebook builds the case's notebooks beside freshly generated synthetic data with
// `replay.py build` (once per case) and returns the version's path.
func (h *harness) replayNotebook(c *evalCase, version string) (string, error) {
	h.mu.Lock()
	dir, ok := h.built[c.ID]
	h.mu.Unlock()
	if !ok {
		out := filepath.Join(h.work, "kernel")
		cmd := exec.Command(h.python, h.replay, "build", out, c.ID)
		cmd.Env = append(os.Environ(), "JUNOBENCH_CASES="+h.cases, "JUNOBENCH_DATA="+h.data, "JUNOBENCH_DESC="+h.desc)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("replay.py build %s: %v: %s", c.ID, err, strings.TrimSpace(string(b)))
		}
		dir = filepath.Join(out, c.ID)
		h.mu.Lock()
		if h.built == nil {
			h.built = map[string]string{}
		}
		h.built[c.ID] = dir
		h.mu.Unlock()
	}
	path := filepath.Join(dir, version+".ipynb")
	if !fileExists(path) {
		return "", errors.New("replay.py build wrote no " + path)
	}
	return path, nil
}

// observe records the prompt tokens of the client's predictions.
func (h *harness) observe(p llm.Prompt) {
	h.mu.Lock()
	h.tokens = p.Tokens
	h.mu.Unlock()
}
