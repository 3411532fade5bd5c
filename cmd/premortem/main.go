// Command premortem tells a Jupyter notebook user that a cell will crash before it runs.
//
// Subcommands: serve (the language server on stdio), check (judge a notebook's cells from the
// command line), inspect and kernels (look at live kernels), eval (measure on JunoBench-format
// cases) and version. Each subcommand lives in its own file and registers itself in commands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand. run returns the process exit code: 0 ok, 1 crash predicted (for
// check), 2 usage or environment error, 128+N stopped by signal N (check).
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled by the init functions of the subcommand files.
var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	commands[name] = command{summary: summary, run: run}
}

func init() {
	register("version", "print the version", func(args []string, stdout, stderr io.Writer) int {
		fmt.Fprintf(stdout, "premortem %s\n", version)
		return 0
	})
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "premortem: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: premortem <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "premortem predicts which notebook cells will crash before they run.")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'premortem <command> -h' for a command's flags.")
}
