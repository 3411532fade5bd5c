package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/premortem/premortem/internal/report"
	"github.com/premortem/premortem/judge"
)

func init() {
	register("check", "judge a notebook's cells before they run (exit 1 when a crash is predicted)", runCheck)
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf runFlags
	rf.register(fs, "judge", "one shadow run")
	format := fs.String("format", "text", "output format: text, json or sarif")
	noShadow := fs.Bool("no-shadow", false, "do not run cells in a forked copy of the kernel")
	shadowMode := fs.String("shadow", judge.ShadowSafe, "shadow mode: off, safe (skip cells with side effects) or always")
	noKernel := fs.Bool("static", false, "static checks only: start no kernel")
	sequential := fs.Bool("sequential", false, "judge the target cells as a top-to-bottom run meets them, for notebooks saved with cleared outputs: each one the rules do not predict to crash runs for real (side effects included); one that raises is taken back (a new kernel replays what ran before it) and judged in full against the state before it, and from there on each cell is judged in full before it runs")
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
	if !slices.Contains(report.Formats, *format) {
		fmt.Fprintf(stderr, "premortem check: --format %q: want text, json or sarif\n", *format)
		return 2
	}
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "premortem check: %v\n", err)
		return 2
	}
	opts := judge.CheckOptions{
		Options:    judge.DefaultOptions(),
		NoKernel:   *noKernel,
		Sequential: *sequential,
	}
	opts.Shadow = *shadowMode
	if *noShadow {
		opts.Shadow = judge.ShadowOff
	}
	if opts.Shadow != judge.ShadowOff && opts.Shadow != judge.ShadowSafe && opts.Shadow != judge.ShadowAlways {
		fmt.Fprintf(stderr, "premortem check: --shadow %q: want off, safe or always\n", opts.Shadow)
		return 2
	}
	if err := rf.apply(&opts, stderr); err != nil {
		fmt.Fprintf(stderr, "premortem check: %v\n", err)
		return 2
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
	err = report.Write(stdout, rep, *format, version)
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
