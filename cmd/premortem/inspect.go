package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/premortem/premortem/kernelclient"
)

func init() {
	register("inspect", "print the runtime facts of names in a live kernel as JSON", runInspect)
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connFile := fs.String("connection-file", "", "kernel connection file (kernel-*.json)")
	notebook := fs.String("notebook", "", "find the kernel serving this notebook instead of --connection-file")
	server := fs.String("server", "", "Jupyter Server URL (with --kernel-id and --token) instead of --connection-file")
	token := fs.String("token", "", "Jupyter Server token")
	kernelID := fs.String("kernel-id", "", "kernel id on the Jupyter Server")
	noValues := fs.Bool("no-values", false, "withhold value facts (samples, min/max, reprs)")
	namespace := fs.Bool("namespace", false, "also list the user's global names")
	budget := fs.Duration("budget", 50*time.Millisecond, "time the inspector may spend in the kernel")
	timeout := fs.Duration("timeout", 10*time.Second, "overall deadline (waits this long for a busy kernel)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem inspect (--connection-file F | --notebook NB | --server URL --kernel-id ID) [--no-values] NAME...")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Prints the runtime facts of names and attribute chains (df, df.Age, model.predict)")
		fmt.Fprintln(stderr, "without changing the kernel's state, history or execution count.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	names := fs.Args()
	if len(names) == 0 && !*namespace {
		fmt.Fprintln(stderr, "premortem inspect: name at least one NAME (or pass --namespace)")
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	k, err := openKernel(ctx, *connFile, *notebook, *server, *token, *kernelID)
	if err != nil {
		fmt.Fprintf(stderr, "premortem inspect: %v\n", err)
		return 2
	}
	defer k.Close()
	ins, err := k.Inspect(ctx, kernelclient.InspectRequest{Names: names, Budget: *budget, NoValues: *noValues, Namespace: *namespace})
	if err != nil {
		if errors.Is(err, kernelclient.ErrBusy) {
			fmt.Fprintf(stderr, "premortem inspect: %v (premortem never queues behind a running cell: try again when it finishes, or raise --timeout)\n", err)
		} else {
			fmt.Fprintf(stderr, "premortem inspect: %v\n", err)
		}
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ins); err != nil {
		fmt.Fprintf(stderr, "premortem inspect: %v\n", err)
		return 2
	}
	return 0
}

// openKernel connects to the kernel named by exactly one of the three ways.
func openKernel(ctx context.Context, connFile, notebook, server, token, kernelID string) (*kernelclient.Client, error) {
	n := 0
	for _, s := range []string{connFile, notebook, server} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("pass exactly one of --connection-file, --notebook or --server")
	}
	switch {
	case connFile != "":
		return kernelclient.ConnectFile(ctx, connFile)
	case server != "":
		if kernelID == "" {
			return nil, errors.New("--server needs --kernel-id")
		}
		return kernelclient.ConnectServer(ctx, server, token, kernelID)
	}
	found, err := kernelclient.Discover(ctx)
	if err != nil {
		return nil, err
	}
	d, err := kernelclient.MatchNotebook(found, notebook)
	if err != nil {
		return nil, err
	}
	return kernelclient.ConnectDiscovered(ctx, *d)
}
