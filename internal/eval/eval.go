// Package eval measures premortem on JunoBench-format cases: it judges the buggy and the
// fixed target of every case in each setting (static, code, runtime, all), scores the
// outcomes against the recorded crash (detection and diagnosis), and writes the metrics
// beside CRANE-LLM's published outcomes, with prompt sizes. `premortem eval` parses its
// flags into Options and calls Run; everything else lives here.
package eval

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
)

// Settings are the settings Run knows, in the order they are reported.
var Settings = allSettings

// Options is what one evaluation is asked to do. Paths left "" default to the file or folder
// of that name beside the cases folder, as JunoBench lays them out.
type Options struct {
	// Cases is the folder of cases <id>/{buggy,fixed}.json.
	Cases string
	// Desc is the case descriptions CSV (default desc.csv).
	Desc string
	// Data holds the synthetic data generators <id>/make_data.py (default data).
	Data string
	// Replay is replay.py, which builds runnable notebooks (default replay.py).
	Replay string
	// CranePrompts holds CRANE-LLM's prompt bodies (default crane_prompts).
	CranePrompts string
	// Settings to run, each one of Settings.
	Settings []string
	// IDs restricts the run to these case ids (none: every case).
	IDs []string
	// CSV and Instances, when set, also receive the metrics and every instance's outcome
	// as CSV.
	CSV, Instances string
	// PromptSize only compares prompt sizes with CRANE-LLM's (code setting, offline);
	// PromptSizeRuntime does so with runtime facts, running the cases with synthetic data
	// in a kernel with a loopback stub as LLM.
	PromptSize, PromptSizeRuntime bool
	// DumpPrompts, with PromptSizeRuntime, is a folder each prompt is written to.
	DumpPrompts string
	// Work is the folder for built notebooks and data ("": a temporary folder, removed
	// after).
	Work string
	// Python runs replay.py.
	Python string
	// CaseTimeout bounds judging one instance.
	CaseTimeout time.Duration
	// Shadow is the shadow mode of the all setting: judge.ShadowSafe or judge.ShadowAlways.
	Shadow string
	// NewClient connects to the LLM endpoint; nil runs offline. It is called only once the
	// cases and settings are known to be good.
	NewClient func() (*llm.Client, error)
	// Model names the LLM in the report's title.
	Model string
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
}

// Run runs the evaluation opts describes and writes its report to stdout. An error means
// the evaluation could not run or its report could not be written in full.
func Run(ctx context.Context, opts Options, stdout io.Writer) error {
	parent := filepath.Dir(filepath.Clean(opts.Cases))
	orDefault := func(v *string, name string) {
		if *v == "" {
			*v = filepath.Join(parent, name)
		}
	}
	orDefault(&opts.Desc, "desc.csv")
	orDefault(&opts.Data, "data")
	orDefault(&opts.Replay, "replay.py")
	orDefault(&opts.CranePrompts, "crane_prompts")
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}

	cases, err := loadCases(opts.Cases, opts.Desc, opts.Data, opts.IDs)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return fmt.Errorf("no cases in %s", opts.Cases)
	}

	if opts.PromptSize {
		sizes, err := measurePromptSizes(cases, opts.CranePrompts)
		if err != nil {
			return err
		}
		writePromptSizes(stdout, sizes)
		return nil
	}

	h := &harness{replay: abs(opts.Replay), cases: abs(opts.Cases), data: abs(opts.Data), desc: abs(opts.Desc),
		python: opts.Python, timeout: opts.CaseTimeout, shadow: opts.Shadow, dump: opts.DumpPrompts, log: opts.Log}

	if opts.PromptSizeRuntime {
		cleanup, err := h.workIn(opts.Work)
		if err != nil {
			return err
		}
		defer cleanup()
		sizes, verdicts, err := measureRuntimePromptSizes(ctx, h, cases, opts.CranePrompts)
		if err != nil {
			return err
		}
		writeRuntimePromptSizes(stdout, sizes)
		var run []*evalCase
		for _, c := range cases {
			if c.DataGen != "" {
				run = append(run, c)
			}
		}
		systems := append([]system{{Name: "premortem runtime (static+rules, no LLM)", Scored: verdicts}}, craneSystems(run)...)
		writeMarkdown(stdout, fmt.Sprintf("Verdicts of those runs: %d cases with synthetic data", len(run)), systems)
		return nil
	}

	for _, s := range opts.Settings {
		ok := false
		for _, a := range allSettings {
			ok = ok || a == s
		}
		if !ok {
			return fmt.Errorf("unknown setting %q (want %s)", s, strings.Join(allSettings, ", "))
		}
	}
	if opts.Shadow != judge.ShadowSafe && opts.Shadow != judge.ShadowAlways {
		return fmt.Errorf("--shadow %q: want safe or always", opts.Shadow)
	}
	model := "offline (no LLM endpoint)"
	if opts.NewClient != nil {
		c, err := opts.NewClient()
		if err != nil {
			return err
		}
		c.SetPromptObserver(h.observe)
		h.client = c
		model = opts.Model
	}
	cleanup, err := h.workIn(opts.Work)
	if err != nil {
		return err
	}
	defer cleanup()

	systems, err := evaluate(ctx, h, cases, opts.Settings)
	if err != nil {
		return err
	}
	systems = append(systems, craneSystems(cases)...)
	title := fmt.Sprintf("premortem eval: %d cases, %d instances, LLM %s, tokenizer %s", len(cases), 2*len(cases), model, llm.TokenizerName)
	writeMarkdown(stdout, title, systems)
	if opts.CSV != "" {
		if err := writeFile(opts.CSV, func(w io.Writer) error { return writeCSV(w, systems) }); err != nil {
			return err
		}
	}
	if opts.Instances != "" {
		if err := writeFile(opts.Instances, func(w io.Writer) error { return writeInstances(w, systems) }); err != nil {
			return err
		}
	}
	return nil
}

// workIn sets the harness's work folder: dir when given (kept), else a temporary folder
// that the returned cleanup removes.
func (h *harness) workIn(dir string) (cleanup func(), err error) {
	if dir != "" {
		h.work = abs(dir)
		return func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "premortem-eval-")
	if err != nil {
		return nil, fmt.Errorf("make a work folder: %w (set --work to a folder you can write to)", err)
	}
	h.work = tmp
	return func() { os.RemoveAll(tmp) }, nil
}

// evaluate runs every setting on every case version and scores the outcomes.
func evaluate(ctx context.Context, h *harness, cases []*evalCase, settings []string) ([]system, error) {
	var out []system
	for _, s := range settings {
		run := h.runnerFor(s)
		sys := system{Name: "premortem " + s}
		for _, c := range cases {
			for _, v := range []string{versionBuggy, versionFixed} {
				start := time.Now()
				o, err := run(ctx, c, v)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					o = outcome{Case: c.ID, Version: v, Unknown: true, Note: err.Error()}
				}
				sc := score(c, o)
				h.log("%-8s %-16s %-5s crash=%-5v %s line %d [%s] %s %s", s, c.ID, v, o.Crash, o.Exception, o.Line, o.Source,
					time.Since(start).Round(time.Millisecond), o.Note)
				sys.Scored = append(sys.Scored, sc)
			}
		}
		out = append(out, sys)
	}
	return out, nil
}

// abs makes path absolute: replay.py runs its generators from other folders.
func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%w (name a file in a folder you can write to)", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Close reports a failed flush (disk full): the report would be cut short.
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
