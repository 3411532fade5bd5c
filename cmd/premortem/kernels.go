package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/premortem/premortem/kernelclient"
)

func init() {
	register("kernels", "list the running Jupyter kernels on this machine and their notebooks", runKernels)
}

func runKernels(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernels", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "also list dead or unusable connection files, with the reason")
	timeout := fs.Duration("timeout", 3*time.Second, "time allowed per kernel probe")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem kernels [--json] [--all] [--timeout 3s]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Scans every Jupyter runtime directory (including VS Code's) for kernel connection")
		fmt.Fprintln(stderr, "files and notebook servers, probes each kernel and shows the notebook it serves.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout*4+5*time.Second)
	defer cancel()
	found, err := kernelclient.DiscoverWith(ctx, kernelclient.DiscoverOptions{IncludeSkipped: *all, ProbeTimeout: *timeout})
	if err != nil {
		fmt.Fprintf(stderr, "premortem kernels: %v\n", err)
		return 2
	}
	if *asJSON {
		if found == nil {
			found = []kernelclient.Discovered{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(found); err != nil {
			fmt.Fprintf(stderr, "premortem kernels: %v\n", err)
			return 2
		}
		return 0
	}
	if len(found) == 0 {
		fmt.Fprintln(stdout, "no running kernels found (looked in:", kernelclient.RuntimeDirs(), ")")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tNOTEBOOK\tCONNECTION\tNOTE")
	for _, d := range found {
		nb := d.Notebook
		if nb == "" {
			nb = "-"
		}
		conn := d.ConnectionFile
		if conn == "" && d.Server != nil {
			conn = d.Server.URL + "api/kernels/" + d.KernelID
		}
		note := d.NotebookFrom
		if d.Skipped != "" {
			note = "skipped: " + d.Skipped
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.State, nb, conn, note)
	}
	tw.Flush()
	return 0
}
