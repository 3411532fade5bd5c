package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
)

// runFlags are the flags check and fix share: which cells, which kernel, how the replay
// and the shadow runs are bounded and sandboxed. One definition, so the two commands cannot
// drift apart in names, defaults or checks.
type runFlags struct {
	cells             cellList
	kernel            string
	replayTimeout     time.Duration
	quiet             bool
	shadowTimeout     time.Duration
	shadowSandbox     string
	shadowFullTimeout time.Duration
	fastDevRun        int
	shadowTensors     string
}

// register defines the flags on fs; verb says what the command does to a --cell ("judge",
// "fix") and shadowRun what one shadow run is for it, in the flags' help.
func (f *runFlags) register(fs *flag.FlagSet, verb, shadowRun string) {
	fs.Var(&f.cells, "cell", "0-based index in the notebook's cells array of a cell to "+verb+" (repeatable; default: every code cell without an execution count)")
	fs.StringVar(&f.kernel, "kernel", "", "kernelspec name (default: the notebook's)")
	fs.DurationVar(&f.replayTimeout, "timeout", 10*time.Minute, "time limit for each replayed cell")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	// Longer than the editor's 3 s: nobody waits at the keyboard for a batch check, and a
	// cell cut short is an unknown verdict.
	fs.DurationVar(&f.shadowTimeout, "shadow-timeout", 30*time.Second, "time limit of "+shadowRun)
	fs.StringVar(&f.shadowSandbox, "shadow-sandbox", kernelclient.SandboxAuto, "shadow child's sandbox: auto (namespaces where allowed) or fallback (no namespaces: file writes emulated in a private, capped view; network, subprocesses and other system calls refused; parallelism sequential)")
	fs.DurationVar(&f.shadowFullTimeout, "shadow-full-timeout", judge.DefaultShadowFullTimeout, "time limit of the full shadow run of a cell with loops, which goes on after --shadow-timeout while the fast dev run answers (never less than --shadow-timeout)")
	fs.StringVar(&f.shadowTensors, "shadow-tensors", facts.TensorsAuto, "tensors in the shadow run: auto (meta, shape-only, where the kernel has initialised CUDA; real otherwise), meta (every tensor shape-only: no values, no arithmetic) or real")
	fs.IntVar(&f.fastDevRun, "fast-dev-run", judge.DefaultDevRunCap, "iterations each loop keeps in the fast dev run beside the full shadow run (0: no fast dev run)")
}

// apply checks the flags' values and sets them in opts; progress goes to stderr unless
// --quiet. The error names the flag and what it wants.
func (f *runFlags) apply(opts *judge.CheckOptions, stderr io.Writer) error {
	if f.shadowSandbox != kernelclient.SandboxAuto && f.shadowSandbox != kernelclient.SandboxForceFallback {
		return fmt.Errorf("--shadow-sandbox %q: want auto or fallback", f.shadowSandbox)
	}
	switch f.shadowTensors {
	case facts.TensorsAuto, facts.TensorsMeta, facts.TensorsReal:
	default:
		return fmt.Errorf("--shadow-tensors %q: want auto, meta or real", f.shadowTensors)
	}
	if f.fastDevRun < 0 {
		return fmt.Errorf("--fast-dev-run %d: want 0 (off) or the iterations each loop keeps", f.fastDevRun)
	}
	opts.KernelName = f.kernel
	opts.ReplayTimeout = f.replayTimeout
	if f.cells != nil {
		opts.Targets = f.cells
	}
	opts.ShadowTimeout = f.shadowTimeout
	opts.ShadowSandbox = f.shadowSandbox
	opts.ShadowFullTimeout = f.shadowFullTimeout
	opts.DevRunCap = f.fastDevRun
	opts.ShadowTensors = f.shadowTensors
	// A batch run may shadow-run training loops: the shadow timeout bounds them.
	opts.ShadowLongRuns = true
	if !f.quiet {
		opts.Progress = stderr
	}
	return nil
}

// cellList collects repeated --cell flags.
type cellList []int

func (c *cellList) String() string { return fmt.Sprint(*c) }

// Set adds the comma-separated cell indexes of one --cell flag.
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
