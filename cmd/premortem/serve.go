package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/premortem/premortem/lsp"
)

func init() {
	register("serve", "run the language server on stdin/stdout (LSP 3.17 with notebooks)", runServe)
}

// runServe runs the language server on stdio until the client sends exit. --stdio is
// accepted because vscode-languageclient appends it.
// serveGCPercent is the server's GOGC unless the environment sets one.
const serveGCPercent = 50

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("stdio", true, "talk LSP over stdin/stdout (the only transport; accepted for vscode-languageclient)")
	logPath := fs.String("log", "", "append the server's trace to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem serve [--stdio] [--log FILE]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs the premortem language server on stdin/stdout. Editors start it; see editors/vscode.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "premortem serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var logw io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "premortem serve: cannot open the log file: %v\n", err)
			return 2
		}
		defer f.Close()
		logw = f
	}
	if os.Getenv("GOGC") == "" {
		// The server's heap is mostly the open notebooks' facts, long-lived: collecting at
		// half the live heap's growth rather than all of it keeps the peak RSS a large
		// notebook costs at 1.5× what it holds instead of 2×, for a little more GC work
		// while a notebook is opened.
		debug.SetGCPercent(serveGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return lsp.Serve(ctx, stdio{in: os.Stdin, out: stdout}, lsp.Options{Log: logw, Version: version})
}

// stdio joins stdin and stdout into the connection's ReadWriteCloser.
type stdio struct {
	in  io.ReadCloser
	out io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s stdio) Close() error                { return s.in.Close() }
