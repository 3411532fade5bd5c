package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
)

// craneSystemPrompt is CRANE-LLM's system prompt as far as it is known: the verbatim core
// quoted in the research notes plus its JSON contract. Only used to compare prompt sizes.
const craneSystemPrompt = `You are an automated crash detector for ML notebooks. Given: a set of [Executed Cells] that have already run successfully, a [Target Cell] that may or may not crash when executed, and additional [Current relevant runtime information] such as variable values or types that are relevent to the [Target Cell], Your task is to reason step by step whether executing the [Target Cell] will crash.
Output exactly one JSON object: {"reasoning": string, "detection": boolean}. "reasoning" should be concise, 1-2 sentences. If you are not CERTAIN the cell will crash, you MUST output "detection": false.`

// promptSize is the size of the prompts for one instance, in tokens.
type promptSize struct {
	Case, Version string
	// Ours: premortem's prompt in the code setting (sliced cells, no facts): system+user and
	// user alone. OursAll: the same format with every executed cell (no slicing).
	Ours, OursUser, OursAll int
	// Crane: CRANE-LLM's exact prompt body without runtime information (all executed
	// cells) and with it; System adds the system prompt.
	Crane, CraneRT int
	// Cells sent by us / executed.
	CellsSent, CellsAll int
}

// measurePromptSizes compares, per instance, premortem's sliced code prompt with
// CRANE-LLM's prompt bodies in dir (crane_prompts/{code,code_runinfo}/<id>_<reproduced|fixed>.txt).
func measurePromptSizes(cases []*evalCase, craneDir string) ([]promptSize, error) {
	var out []promptSize
	for _, c := range cases {
		for _, ver := range []string{versionBuggy, versionFixed} {
			in := c.Versions[ver].input()
			p := llm.BuildPrompt(in, llm.Config{})
			all := in
			all.Dependencies = nil
			pa := llm.BuildPrompt(all, llm.Config{})
			name := c.ID + "_reproduced.txt"
			if ver == versionFixed {
				name = c.ID + "_fixed.txt"
			}
			code, err := os.ReadFile(filepath.Join(craneDir, "code", name))
			if err != nil {
				return nil, fmt.Errorf("CRANE-LLM prompt of %s %s: %w", c.ID, ver, err)
			}
			rt, err := os.ReadFile(filepath.Join(craneDir, "code_runinfo", name))
			if err != nil {
				return nil, fmt.Errorf("CRANE-LLM runtime prompt of %s %s: %w", c.ID, ver, err)
			}
			out = append(out, promptSize{
				Case: c.ID, Version: ver,
				Ours: p.Tokens, OursUser: llm.CountTokens(p.User), OursAll: pa.Tokens,
				Crane: llm.CountTokens(string(code)), CraneRT: llm.CountTokens(string(rt)),
				CellsSent: len(p.Cells), CellsAll: len(in.Executed),
			})
		}
	}
	return out, nil
}

// writePromptSizes prints the comparison as Markdown.
func writePromptSizes(w io.Writer, sizes []promptSize) {
	craneSys := llm.CountTokens(craneSystemPrompt)
	col := func(f func(promptSize) int) []int {
		xs := make([]int, len(sizes))
		for i, s := range sizes {
			xs[i] = f(s)
		}
		return xs
	}
	sum := func(xs []int) int {
		t := 0
		for _, x := range xs {
			t += x
		}
		return t
	}
	ours := col(func(s promptSize) int { return s.Ours })
	oursUser := col(func(s promptSize) int { return s.OursUser })
	oursAll := col(func(s promptSize) int { return s.OursAll })
	crane := col(func(s promptSize) int { return s.Crane })
	craneFull := col(func(s promptSize) int { return s.Crane + craneSys })
	craneRT := col(func(s promptSize) int { return s.CraneRT })
	craneRTFull := col(func(s promptSize) int { return s.CraneRT + craneSys })
	sent := col(func(s promptSize) int { return s.CellsSent })
	all := col(func(s promptSize) int { return s.CellsAll })

	fmt.Fprintf(w, "## Prompt size: premortem's sliced prompt vs CRANE-LLM's (%d instances of %d cases)\n\n", len(sizes), len(sizes)/2)
	fmt.Fprintf(w, "Tokenizer: %s. CRANE-LLM bodies are its exact prompts (crane_prompts/); its system prompt is reconstructed from the published core (%d tokens).\n\n", llm.TokenizerName, craneSys)
	fmt.Fprintln(w, "| prompt | mean | median | total | vs CRANE code (total) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	row := func(name string, xs []int, base []int) {
		m, med := meanMedian(xs)
		ratio := "–"
		if base != nil {
			ratio = fmt.Sprintf("%.1f%%", 100*float64(sum(xs))/float64(sum(base)))
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %d | %s |\n", name, m, med, sum(xs), ratio)
	}
	row("premortem user message (sliced cells + numbered target)", oursUser, crane)
	row("CRANE-LLM body, code only (all executed cells)", crane, crane)
	row("premortem system + user", ours, craneFull)
	row("CRANE-LLM system + body, code only", craneFull, craneFull)
	row("premortem format, all executed cells (no slicing), system + user", oursAll, craneFull)
	row("CRANE-LLM body with runtime information", craneRT, crane)
	row("CRANE-LLM system + body with runtime information", craneRTFull, craneFull)
	fmt.Fprintln(w)
	var ratios []float64
	under := 0
	for i := range sizes {
		r := float64(oursUser[i]) / float64(max(crane[i], 1))
		ratios = append(ratios, r)
		if r <= 0.5 {
			under++
		}
	}
	meanRatio := 0.0
	for _, r := range ratios {
		meanRatio += r
	}
	meanRatio /= float64(max(len(ratios), 1))
	ms, mm := meanMedian(sent)
	as, am := meanMedian(all)
	fmt.Fprintf(w, "Per instance, premortem's user message is on average %.1f%% of CRANE-LLM's code-only body; %d of %d instances are at or under 50%%.\n", 100*meanRatio, under, len(sizes))
	fmt.Fprintf(w, "Executed cells sent: mean %.1f (median %.0f) of %.1f (median %.0f).\n", ms, mm, as, am)
	fmt.Fprintf(w, "Against CRANE-LLM's runtime prompts (the setting premortem's facts replace), the sliced user message is %.1f%% of the total.\n\n",
		100*float64(sum(oursUser))/float64(max(sum(craneRT), 1)))
	var worst []string
	for i, s := range sizes {
		if ratios[i] > 0.8 {
			worst = append(worst, fmt.Sprintf("%s/%s %d/%d", s.Case, s.Version, oursUser[i], crane[i]))
		}
	}
	if len(worst) > 0 {
		fmt.Fprintf(w, "Instances above 80%% (little to slice): %s\n\n", strings.Join(worst, ", "))
	}
}

// stubAnswer is what the loopback stub endpoint answers: no crash, so the LLM adds no
// finding and the judged verdicts are the offline layers' own.
const stubAnswer = `{"reasoning":"stub","crash":false,"confidence":0,"line":0,"exception":"","category":"other","explanation":"","fix":null}`

// startStubLLM serves an OpenAI-compatible chat endpoint on the loopback interface that
// always answers stubAnswer. It lets the harness build the real runtime prompts (with the
// kernel's facts) without any model.
func startStubLLM() (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "stub", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": stubAnswer}}}})
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// runtimePromptSize is one instance's runtime prompt against CRANE-LLM's.
type runtimePromptSize struct {
	Case, Version             string
	Ours, OursUser            int // system+user, user alone
	CraneCode, CraneRT        int // bodies
	FactsNames, CellsSent     int
	CellsAll, CellsSummarised int
	NoPrompt                  bool // the judge built no LLM prompt (replay failed...)
}

// measureRuntimePromptSizes runs the cases that have synthetic data in a real kernel (rules
// on, no shadow run) with the stub endpoint as LLM, and records the prompts premortem sends
// with runtime facts, beside CRANE-LLM's prompts for the same instances.
// The verdicts of those runs are the runtime setting's offline layers (static and rules:
// the stub adds no finding); they are returned scored.
func measureRuntimePromptSizes(ctx context.Context, h *harness, cases []*evalCase, craneDir string) ([]runtimePromptSize, []scored, error) {
	url, stop, err := startStubLLM()
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	on := true
	client, err := llm.New(llm.Config{Enabled: &on, BaseURL: url, Model: "stub", APIKeyEnv: "PREMORTEM_STUB_NO_KEY", JSONMode: llm.JSONModeOff})
	if err != nil {
		return nil, nil, err
	}
	client.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var last *llm.Prompt
	var mu sync.Mutex
	client.SetPromptObserver(func(p llm.Prompt) {
		mu.Lock()
		last = &p
		mu.Unlock()
	})
	h.client = client
	defer func() { h.client = nil }()
	var out []runtimePromptSize
	var verdicts []scored
	for _, c := range cases {
		if c.DataGen == "" {
			continue
		}
		for _, ver := range []string{versionBuggy, versionFixed} {
			mu.Lock()
			last = nil
			mu.Unlock()
			o, err := h.runKernel(ctx, c, ver, judge.Options{Rules: true, Shadow: judge.ShadowOff})
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", c.ID, ver, err)
			}
			verdicts = append(verdicts, score(c, o))
			name := c.ID + "_reproduced.txt"
			if ver == versionFixed {
				name = c.ID + "_fixed.txt"
			}
			code, err := os.ReadFile(filepath.Join(craneDir, "code", name))
			if err != nil {
				return nil, nil, err
			}
			rt, err := os.ReadFile(filepath.Join(craneDir, "code_runinfo", name))
			if err != nil {
				return nil, nil, err
			}
			s := runtimePromptSize{Case: c.ID, Version: ver, CraneCode: llm.CountTokens(string(code)), CraneRT: llm.CountTokens(string(rt)),
				CellsAll: len(c.Versions[ver].Executed)}
			mu.Lock()
			p := last
			mu.Unlock()
			if p == nil {
				s.NoPrompt = true
				h.log("%s %s: no LLM prompt (%s)", c.ID, ver, o.Note)
			} else {
				s.Ours, s.OursUser = p.Tokens, llm.CountTokens(p.User)
				if h.dump != "" {
					// The user asked for the prompts: a dump that silently writes nothing would
					// pass for an empty run.
					if err := dumpPrompt(h.dump, c.ID+"_"+ver+".txt", p.System+"\n\n"+p.User); err != nil {
						return nil, nil, err
					}
				}
				s.CellsSent, s.CellsSummarised = len(p.Cells), p.SummarisedCells
				s.FactsNames = strings.Count(p.User, "\n  type: ") + strings.Count(p.User, "NOT DEFINED")
				h.log("%s %s: %d tokens (user %d) vs CRANE +RT body %d; cells %d of %d, %d summarised by facts", c.ID, ver, s.Ours, s.OursUser, s.CraneRT, s.CellsSent, s.CellsAll, s.CellsSummarised)
			}
			out = append(out, s)
		}
	}
	return out, verdicts, nil
}

// writeRuntimePromptSizes prints the runtime comparison as Markdown.
func writeRuntimePromptSizes(w io.Writer, sizes []runtimePromptSize) {
	craneSys := llm.CountTokens(craneSystemPrompt)
	var ours, oursUser, crt, crtFull, ccode []int
	var sent, all, summ []int
	missing := 0
	for _, s := range sizes {
		if s.NoPrompt {
			missing++
			continue
		}
		ours = append(ours, s.Ours)
		oursUser = append(oursUser, s.OursUser)
		crt = append(crt, s.CraneRT)
		crtFull = append(crtFull, s.CraneRT+craneSys)
		ccode = append(ccode, s.CraneCode)
		sent = append(sent, s.CellsSent)
		all = append(all, s.CellsAll)
		summ = append(summ, s.CellsSummarised)
	}
	total := func(xs []int) int {
		t := 0
		for _, x := range xs {
			t += x
		}
		return t
	}
	fmt.Fprintf(w, "## Prompt size with runtime facts: premortem vs CRANE-LLM +RT (%d instances run in a kernel", len(ours))
	if missing > 0 {
		fmt.Fprintf(w, "; %d without a prompt", missing)
	}
	fmt.Fprintf(w, ")\n\nTokenizer: %s.\n\n", llm.TokenizerName)
	fmt.Fprintln(w, "| prompt | mean | median | total | vs CRANE-LLM +RT (total) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	row := func(name string, xs, base []int) {
		m, med := meanMedian(xs)
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %d | %.1f%% |\n", name, m, med, total(xs), 100*float64(total(xs))/float64(max(total(base), 1)))
	}
	row("premortem user message (sliced cells, facts, numbered target)", oursUser, crt)
	row("CRANE-LLM +RT body (all cells + runtime information)", crt, crt)
	row("premortem system + user", ours, crtFull)
	row("CRANE-LLM +RT system + body", crtFull, crtFull)
	row("CRANE-LLM -RT body (all cells, no runtime information)", ccode, crt)
	fmt.Fprintln(w)
	under := 0
	for i := range oursUser {
		if 2*oursUser[i] <= crt[i] {
			under++
		}
	}
	ms, _ := meanMedian(sent)
	ma, _ := meanMedian(all)
	mu, _ := meanMedian(summ)
	fmt.Fprintf(w, "%d of %d instances are at or under 50%% of CRANE-LLM's +RT body. Executed cells sent: mean %.1f of %.1f (%.1f summarised by facts).\n\n", under, len(oursUser), ms, ma, mu)
}

// dumpPrompt writes one prompt into the --dump-prompts folder, creating it.
func dumpPrompt(dir, name, text string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--dump-prompts: %w (name a folder you can write to)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		return fmt.Errorf("--dump-prompts: %w (name a folder you can write to)", err)
	}
	return nil
}
