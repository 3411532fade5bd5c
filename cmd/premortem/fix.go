package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/premortem/premortem/internal/report"
	"github.com/premortem/premortem/judge"
)

func init() {
	register("fix", "apply the top verified fix of each cell predicted to crash", runFix)
}

func runFix(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf runFlags
	rf.register(fs, "fix", "one shadow run (each candidate fix is one)")
	inPlace := fs.Bool("in-place", false, "write the fixed notebook over NOTEBOOK.ipynb")
	out := fs.String("o", "", "write the fixed notebook to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: premortem fix NOTEBOOK.ipynb [--cell N]... [--in-place | -o OUT.ipynb]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Checks the notebook as `premortem check` does, then applies to each cell predicted to crash")
		fmt.Fprintln(stderr, "the best fix that was verified in a copy of the kernel (the edited cell ran to its end), and")
		fmt.Fprintln(stderr, "prints what it changed. Without --in-place or -o nothing is written. Exit status: 0 every")
		fmt.Fprintln(stderr, "predicted crash got a verified fix (or none was predicted), 1 some crash has none, 2 usage or")
		fmt.Fprintln(stderr, "environment error.")
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
	if len(pos) != 1 || (*inPlace && *out != "") {
		fs.Usage()
		return 2
	}
	path := pos[0]
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "premortem fix: %v\n", err)
		return 2
	}
	opts := judge.CheckOptions{Options: judge.DefaultOptions()}
	if err := rf.apply(&opts, stderr); err != nil {
		fmt.Fprintf(stderr, "premortem fix: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := judge.CheckNotebook(ctx, path, opts)
	if err != nil {
		fmt.Fprintf(stderr, "premortem fix: %v\n", err)
		return 2
	}
	applied, unfixed := rep.ApplyVerified()
	writeFixSummary(stdout, rep, applied, unfixed)
	dest := *out
	if *inPlace {
		dest = path
	}
	if dest != "" && len(applied) > 0 {
		data, err := rep.Source.MarshalIpynb()
		if err == nil {
			err = writeFileAtomic(dest, data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "premortem fix: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdout, "wrote %s\n", dest)
	} else if len(applied) > 0 {
		fmt.Fprintln(stdout, "nothing written: pass --in-place or -o OUT.ipynb to write the fixed notebook")
	}
	if len(unfixed) > 0 {
		return 1
	}
	return 0
}

func writeFixSummary(w io.Writer, rep *judge.Report, applied []judge.AppliedFix, unfixed []int) {
	crashes := 0
	for _, v := range rep.Cells {
		if v.Verdict == judge.VerdictCrash {
			crashes++
		}
	}
	fmt.Fprintf(w, "%s: %s judged, %d will crash, %d fixed with a verified fix\n", rep.Notebook, report.Count(len(rep.Cells), "cell"), crashes, len(applied))
	for _, a := range applied {
		fmt.Fprintf(w, "\ncell %d (index %d): %s\n  fix: %s\n", a.Cell+1, a.Cell, a.Finding.Message, a.Fix.Title)
		for _, i := range a.Edited {
			if i != a.Cell {
				fmt.Fprintf(w, "  edited cell %d (index %d): run it again, and the cells after it, before cell %d\n", i+1, i, a.Cell+1)
			}
		}
		for _, e := range a.Fix.Edits {
			idx := report.EditCell(rep, a.Cell, e)
			fmt.Fprintf(w, "  cell %d, line %d: %q\n", idx+1, e.Range.Start.Line+1, e.NewText)
		}
	}
	for _, i := range unfixed {
		fmt.Fprintf(w, "\ncell %d (index %d): will crash; no verified fix\n", i+1, i)
	}
}

// writeFileAtomic writes data to path through a temporary file in the same folder, so an
// interrupted write never leaves half a notebook.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".premortem-fix-*.ipynb")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
