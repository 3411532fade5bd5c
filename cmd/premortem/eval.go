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

	"github.com/premortem/premortem/internal/eval"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/llm"
)

func init() {
	register("eval", "measure premortem on JunoBench-format cases (accuracy, F1, diagnosis, prompt tokens)", runEval)
}

// runEval parses `premortem eval`'s flags and runs package eval.
func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o eval.Options
	fs.StringVar(&o.Cases, "cases", filepath.Join("testdata", "junobench", "cases"), "folder of cases <id>/{buggy,fixed}.json")
	fs.StringVar(&o.Desc, "desc", "", "case descriptions CSV (default: desc.csv beside the cases folder)")
	fs.StringVar(&o.Data, "data", "", "synthetic data generators <id>/make_data.py (default: data beside the cases folder)")
	fs.StringVar(&o.Replay, "replay", "", "replay.py that builds runnable notebooks (default: beside the cases folder)")
	fs.StringVar(&o.CranePrompts, "crane-prompts", "", "CRANE-LLM prompt bodies for --prompt-size (default: crane_prompts beside the cases folder)")
	settings := fs.String("setting", strings.Join(eval.Settings, ","), "comma-separated settings: static, code, runtime, all")
	ids := fs.String("ids", "", "comma-separated case ids (default: every case)")
	fs.StringVar(&o.CSV, "csv", "", "also write the metrics as CSV to this file")
	fs.StringVar(&o.Instances, "instances", "", "also write every instance's outcome as CSV to this file")
	fs.BoolVar(&o.PromptSize, "prompt-size", false, "only compare prompt sizes with CRANE-LLM's prompts (code setting, offline)")
	fs.BoolVar(&o.PromptSizeRuntime, "prompt-size-runtime", false, "only compare prompt sizes with runtime facts: runs the cases with synthetic data in a kernel, with a loopback stub as LLM")
	fs.StringVar(&o.Work, "work", "", "folder for built notebooks and data (default: a temporary folder, removed after)")
	fs.StringVar(&o.Python, "python", "/usr/bin/python3", "Python that runs replay.py")
	fs.DurationVar(&o.CaseTimeout, "case-timeout", 5*time.Minute, "time limit for judging one instance")
	fs.StringVar(&o.Shadow, "shadow", judge.ShadowSafe, "shadow mode of the all setting: safe or always")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fs.StringVar(&o.DumpPrompts, "dump-prompts", "", "with --prompt-size-runtime, write each prompt to this folder")
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
	o.IDs = commaList(*ids)
	o.Settings = commaList(*settings)
	if !*quiet {
		o.Log = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	if lf.baseURL != "" || lf.model != "" {
		o.Model = lf.model
		o.NewClient = func() (*llm.Client, error) {
			c, err := lf.client()
			if err != nil {
				return nil, err
			}
			c.SetLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
			return c, nil
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := eval.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "premortem eval: %v\n", err)
		return 2
	}
	return 0
}

// commaList splits a comma-separated flag value, dropping blanks.
func commaList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
