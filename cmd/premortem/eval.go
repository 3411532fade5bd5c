package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
)

func init() {
	register("eval", "measure premortem on JunoBench-format cases (accuracy, F1, diagnosis, prompt tokens)", runEval)
}

func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	casesDir := fs.String("cases", filepath.Join("testdata", "junobench", "cases"), "folder of cases <id>/{buggy,fixed}.json")
	desc := fs.String("desc", "", "case descriptions CSV (default: desc.csv beside the cases folder)")
	dataDir := fs.String("data", "", "synthetic data generators <id>/make_data.py (default: data beside the cases folder)")
	replayPy := fs.String("replay", "", "replay.py that builds runnable notebooks (default: beside the cases folder)")
	craneDir := fs.String("crane-prompts", "", "CRANE-LLM prompt bodies for --prompt-size (default: crane_prompts beside the cases folder)")
	settings := fs.String("setting", strings.Join(allSettings, ","), "comma-separated settings: static, code, runtime, all")
	ids := fs.String("ids", "", "comma-separated case ids (default: every case)")
	csvPath := fs.String("csv", "", "also write the metrics as CSV to this file")
	instPath := fs.String("instances", "", "also write every instance's outcome as CSV to this file")
	promptSize := fs.Bool("prompt-size", false, "only compare prompt sizes with CRANE-LLM's prompts (code setting, offline)")
	promptSizeRT := fs.Bool("prompt-size-runtime", false, "only compare prompt sizes with runtime facts: runs the cases with synthetic data in a kernel, with a loopback stub as LLM")
	workDir := fs.String("work", "", "folder for built notebooks and data (default: a temporary folder, removed after)")
	python := fs.String("python", "/usr/bin/python3", "Python that runs replay.py")
	timeout := fs.Duration("case-timeout", 5*time.Minute, "time limit for judging one instance")
	shadow := fs.String("shadow", judge.ShadowSafe, "shadow mode of the all setting: safe or always")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	dump := fs.String("dump-prompts", "", "with --prompt-size-runtime, write each prompt to this folder")
	var lf llmFlags
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem eval [--cases DIR] [--setting static,code,runtime,all] [--csv FILE] [--prompt-size]")
		fmt.Fprintln(stderr, "                      [--llm-base-url URL --llm-model NAME [--llm-api-key-env VAR]]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Judges the buggy and fixed target of every case in each setting and prints detection accuracy,")
		fmt.Fprintln(stderr, "precision, recall, F1 and detection+diagnosis (recorded exception on the recorded line), per")
		fmt.Fprintln(stderr, "library and root cause, with prompt tokens, beside CRANE-LLM's published outcomes. Without an")
		fmt.Fprintln(stderr, "endpoint only the offline layers run. Cases with synthetic data run in a real kernel.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	parent := filepath.Dir(filepath.Clean(*casesDir))
	orDefault := func(v *string, name string) {
		if *v == "" {
			*v = filepath.Join(parent, name)
		}
	}
	orDefault(desc, "desc.csv")
	orDefault(dataDir, "data")
	orDefault(replayPy, "replay.py")
	orDefault(craneDir, "crane_prompts")

	var idList []string
	for _, id := range strings.Split(*ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			idList = append(idList, id)
		}
	}
	cases, err := loadCases(*casesDir, *desc, *dataDir, idList)
	if err != nil {
		fmt.Fprintf(stderr, "premortem eval: %v\n", err)
		return 2
	}
	if len(cases) == 0 {
		fmt.Fprintf(stderr, "premortem eval: no cases in %s\n", *casesDir)
		return 2
	}

	if *promptSize {
		sizes, err := measurePromptSizes(cases, *craneDir)
		if err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
		writePromptSizes(stdout, sizes)
		return 0
	}

	if *promptSizeRT {
		h := &harness{replay: abs(*replayPy), cases: abs(*casesDir), data: abs(*dataDir), desc: abs(*desc), python: *python, timeout: *timeout,
			log: func(format string, a ...any) {
				if !*quiet {
					fmt.Fprintf(stderr, format+"\n", a...)
				}
			}}
		tmp, err := os.MkdirTemp("", "premortem-eval-")
		if err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
		defer os.RemoveAll(tmp)
		h.work = tmp
		h.dump = *dump
		if *workDir != "" {
			h.work = abs(*workDir)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		sizes, verdicts, err := measureRuntimePromptSizes(ctx, h, cases, *craneDir)
		if err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
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
		return 0
	}

	var wanted []string
	for _, s := range strings.Split(*settings, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		ok := false
		for _, a := range allSettings {
			ok = ok || a == s
		}
		if !ok {
			fmt.Fprintf(stderr, "premortem eval: unknown setting %q (want %s)\n", s, strings.Join(allSettings, ", "))
			return 2
		}
		wanted = append(wanted, s)
	}
	if *shadow != judge.ShadowSafe && *shadow != judge.ShadowAlways {
		fmt.Fprintf(stderr, "premortem eval: --shadow %q: want safe or always\n", *shadow)
		return 2
	}

	h := &harness{replay: abs(*replayPy), cases: abs(*casesDir), data: abs(*dataDir), desc: abs(*desc), python: *python, timeout: *timeout, shadow: *shadow,
		log: func(format string, a ...any) {
			if !*quiet {
				fmt.Fprintf(stderr, format+"\n", a...)
			}
		}}
	model := "offline (no LLM endpoint)"
	if lf.baseURL != "" || lf.model != "" {
		c, err := lf.client()
		if err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
		c.SetLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		c.SetPromptObserver(h.observe)
		h.client = c
		model = lf.model
	}
	if *workDir == "" {
		tmp, err := os.MkdirTemp("", "premortem-eval-")
		if err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
		defer os.RemoveAll(tmp)
		h.work = tmp
	} else {
		h.work = abs(*workDir)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	systems, err := evaluate(ctx, h, cases, wanted)
	if err != nil {
		fmt.Fprintf(stderr, "premortem eval: %v\n", err)
		return 2
	}
	systems = append(systems, craneSystems(cases)...)
	title := fmt.Sprintf("premortem eval: %d cases, %d instances, LLM %s, tokenizer %s", len(cases), 2*len(cases), model, llm.TokenizerName)
	writeMarkdown(stdout, title, systems)
	if *csvPath != "" {
		if err := writeFile(*csvPath, func(w io.Writer) error { return writeCSV(w, systems) }); err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
	}
	if *instPath != "" {
		if err := writeFile(*instPath, func(w io.Writer) error { return writeInstances(w, systems) }); err != nil {
			fmt.Fprintf(stderr, "premortem eval: %v\n", err)
			return 2
		}
	}
	return 0
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
