package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/llm"
)

func init() {
	register("check", "judge a notebook's cells before they run (exit 1 when a crash is predicted)", runCheck)
}

// cellList collects repeated --cell flags.
type cellList []int

func (c *cellList) String() string { return fmt.Sprint(*c) }

func (c *cellList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("--cell wants a 0-based cell index, got %q", part)
		}
		*c = append(*c, n)
	}
	return nil
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cells cellList
	fs.Var(&cells, "cell", "0-based index in the notebook's cells array of a cell to judge (repeatable; default: every code cell without an execution count)")
	format := fs.String("format", "text", "output format: text, json or sarif")
	noShadow := fs.Bool("no-shadow", false, "do not run cells in a forked copy of the kernel")
	shadowMode := fs.String("shadow", judge.ShadowSafe, "shadow mode: off, safe (skip cells with side effects) or always")
	// Longer than the editor's 3 s: nobody waits at the keyboard for a batch check, and a
	// cell cut short is an unknown verdict.
	shadowTimeout := fs.Duration("shadow-timeout", 30*time.Second, "time limit of one shadow run")
	shadowSandbox := fs.String("shadow-sandbox", kernelclient.SandboxAuto, "shadow child's sandbox: auto (namespaces where allowed) or fallback (refuse writes, sockets and processes)")
	shadowFullTimeout := fs.Duration("shadow-full-timeout", judge.DefaultShadowFullTimeout, "time limit of the full shadow run of a cell with loops, which goes on after --shadow-timeout while the fast dev run answers (never less than --shadow-timeout)")
	fastDevRun := fs.Int("fast-dev-run", judge.DefaultDevRunCap, "iterations each loop keeps in the fast dev run beside the full shadow run (0: no fast dev run)")
	noKernel := fs.Bool("static", false, "static checks only: start no kernel")
	kernelName := fs.String("kernel", "", "kernelspec name (default: the notebook's)")
	replayTimeout := fs.Duration("timeout", 10*time.Minute, "time limit for each replayed cell")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	sequential := fs.Bool("sequential", false, "judge the target cells as a top-to-bottom run meets them: each one not predicted to crash then runs for real (side effects included) before the next is judged; for notebooks saved with cleared outputs")
	var lf llmFlags
	lf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem check NOTEBOOK.ipynb [--cell N]... [--format text|json|sarif] [--no-shadow] [--llm]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Starts a kernel in the notebook's folder, replays the cells that carry an execution count in")
		fmt.Fprintln(stderr, "execution-count order, then says which target cells will crash, where, why and how to fix them.")
		fmt.Fprintln(stderr, "Exit status: 0 no crash predicted, 1 a crash predicted, 2 usage or environment error (no")
		fmt.Fprintln(stderr, "verdict: the kernel could not start, died or stopped answering), 128+N stopped by signal N.")
		fmt.Fprintln(stderr, "Text output names cells from 1 in page order, as messages do; --cell and the JSON's")
		fmt.Fprintln(stderr, "\"index\" count from 0 in the notebook's cells array.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	path := pos[0]
	if *format != "text" && *format != "json" && *format != "sarif" {
		fmt.Fprintf(stderr, "premortem check: --format %q: want text, json or sarif\n", *format)
		return 2
	}
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "premortem check: %v\n", err)
		return 2
	}
	opts := judge.CheckOptions{
		Options:       judge.DefaultOptions(),
		KernelName:    *kernelName,
		ReplayTimeout: *replayTimeout,
		NoKernel:      *noKernel,
		Sequential:    *sequential,
	}
	if cells != nil {
		opts.Targets = cells
	}
	opts.Shadow = *shadowMode
	if *noShadow {
		opts.Shadow = judge.ShadowOff
	}
	if opts.Shadow != judge.ShadowOff && opts.Shadow != judge.ShadowSafe && opts.Shadow != judge.ShadowAlways {
		fmt.Fprintf(stderr, "premortem check: --shadow %q: want off, safe or always\n", opts.Shadow)
		return 2
	}
	opts.ShadowTimeout = *shadowTimeout
	if *shadowSandbox != kernelclient.SandboxAuto && *shadowSandbox != kernelclient.SandboxForceFallback {
		fmt.Fprintf(stderr, "premortem check: --shadow-sandbox %q: want auto or fallback\n", *shadowSandbox)
		return 2
	}
	opts.ShadowSandbox = *shadowSandbox
	opts.ShadowFullTimeout = *shadowFullTimeout
	if *fastDevRun < 0 {
		fmt.Fprintf(stderr, "premortem check: --fast-dev-run %d: want 0 (off) or the iterations each loop keeps\n", *fastDevRun)
		return 2
	}
	opts.DevRunCap = *fastDevRun
	// A batch check may shadow-run training loops: the shadow timeout bounds them.
	opts.ShadowLongRuns = true
	if !*quiet {
		opts.Progress = stderr
	}
	if lf.enabled {
		client, err := lf.client()
		if err != nil {
			fmt.Fprintf(stderr, "premortem check: --llm: %v\n", err)
			return 2
		}
		opts.LLM = client
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	defer stopOnSignals(cancel, stdout, stderr)()
	rep, err := judge.CheckNotebook(ctx, path, opts)
	if sig, ok := context.Cause(ctx).(*stoppedBy); ok {
		// CheckNotebook has killed its kernel by now; whatever it returned is cut short.
		fmt.Fprintf(stderr, "premortem check: %s: stopped, and so is the kernel it started; no verdict\n", sig)
		return sig.exitCode()
	}
	if err != nil {
		// Usage and environment errors alike: no verdict, so exit 2 (never 0 or 1).
		fmt.Fprintf(stderr, "premortem check: %v\n", err)
		return 2
	}
	switch *format {
	case "json":
		err = writeJSON(stdout, rep)
	case "sarif":
		err = writeSARIF(stdout, rep)
	default:
		err = writeText(stdout, rep)
	}
	if errors.Is(err, syscall.EPIPE) {
		// The reader went away (`| head`): as a program killed by SIGPIPE would.
		return (&stoppedBy{syscall.SIGPIPE}).exitCode()
	}
	if err != nil {
		fmt.Fprintf(stderr, "premortem check: write report: %v\n", err)
		return 2
	}
	for _, c := range rep.Cells {
		if c.Verdict == judge.VerdictCrash {
			return 1
		}
	}
	return 0
}

// parseInterleaved parses flags wherever they stand among the positional arguments
// (`check nb.ipynb --format json`), which Go's flag package alone stops at, and returns the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// llmFlags are the LLM endpoint flags shared by check and eval.
type llmFlags struct {
	enabled                bool
	baseURL, model, keyEnv string
	samples                int
	sendValues             bool
	timeout                time.Duration
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "llm", false, "ask the configured LLM endpoint too (sends code and runtime facts to it)")
	fs.StringVar(&f.baseURL, "llm-base-url", os.Getenv("PREMORTEM_LLM_BASE_URL"), "OpenAI-compatible base URL (env PREMORTEM_LLM_BASE_URL)")
	fs.StringVar(&f.model, "llm-model", os.Getenv("PREMORTEM_LLM_MODEL"), "model name (env PREMORTEM_LLM_MODEL)")
	fs.StringVar(&f.keyEnv, "llm-api-key-env", "OPENAI_API_KEY", "name of the environment variable holding the API key")
	fs.IntVar(&f.samples, "llm-samples", 1, "answers per cell, majority vote")
	fs.BoolVar(&f.sendValues, "llm-send-values", false, "send sample values and value ranges to the LLM")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "time limit of one LLM request")
}

func (f *llmFlags) config() llm.Config {
	on := true
	return llm.Config{Enabled: &on, BaseURL: f.baseURL, Model: f.model, APIKeyEnv: f.keyEnv,
		Samples: f.samples, SendValues: f.sendValues, Timeout: f.timeout}
}

func (f *llmFlags) client() (*llm.Client, error) {
	if f.baseURL == "" || f.model == "" {
		return nil, errors.New("set --llm-base-url and --llm-model (or PREMORTEM_LLM_BASE_URL and PREMORTEM_LLM_MODEL)")
	}
	return llm.New(f.config())
}
