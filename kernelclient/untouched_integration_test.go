package kernelclient

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// untouched reads one of testdata/untouched's scripts (shared with judge's tests).
func untouched(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "untouched", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// untouchedDiff runs check.py in the kernel: what changed there since setup.py, "" if nothing.
func untouchedDiff(t testing.TB, ctx context.Context, k Kernel) string {
	t.Helper()
	return mustExecute(t, ctx, k, untouched(t, "check.py")).Stdout
}

// kernelFDs lists the kernel's open descriptors as "fd target" lines.
func kernelFDs(t testing.TB, ctx context.Context, k Kernel) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(mustExecute(t, ctx, k, untouched(t, "fds.py")).Stdout, "\n") {
		// IPython's history thread opens and closes its sqlite journal on its own schedule.
		if !strings.HasSuffix(line, "-journal") {
			out = append(out, line)
		}
	}
	return out
}

// stableFDs is kernelFDs once two listings in a row agree: a descriptor one of the kernel's
// own threads holds for a moment (under load, one listing caught one open and the next did
// not) is neither a leak nor a close of ours. Without agreement it returns the last listing.
func stableFDs(t testing.TB, ctx context.Context, k Kernel) []string {
	t.Helper()
	prev := kernelFDs(t, ctx, k)
	for range 10 {
		time.Sleep(100 * time.Millisecond)
		cur := kernelFDs(t, ctx, k)
		if slices.Equal(prev, cur) {
			return cur
		}
		t.Logf("descriptors changed between two listings with nothing of ours running: new %v, gone %v", added(prev, cur), added(cur, prev))
		prev = cur
	}
	return prev
}

// The cells the shadow runs below run: each reads every hooked object and RNG of
// setup.py; the crashing one then fails on a missing column.
const (
	untouchedCell = "n = len(ds) + ds.prop\na = np.asarray(ds)\ns = repr(ds) + str(list(ds)) + ds[0]\n" +
		"x = gen.random() + rr.random() + torch.rand(1, generator=tgen).item()\nm = getattr(ds, 'nope', 0)\nq = getattr(lazy, 'thing', 0)\n"
	untouchedCrash = untouchedCell + "y = df['age']\n"
)

// TestShadowParentUntouched: inspection and the parent side of shadow runs (crashing and
// clean, in both sandboxes) never call the user's __len__, properties, __getattr__,
// __repr__, __iter__, __array__ or __getitem__ in the kernel, never move a file handle the
// user holds, and leave every RNG the user holds as it was. The child is a fork: what it
// runs changes only its own copy.
func TestShadowParentUntouched(t *testing.T) {
	python.Require(t, "numpy", "pandas", "torch")
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 10*time.Minute)
	mustExecute(t, ctx, l, untouched(t, "setup.py"))
	if d := untouchedDiff(t, ctx, l); d != "" {
		t.Fatalf("the check itself changed the kernel: %s", d)
	}
	names := []string{"ds", "ds.prop", "ds.nope", "lazy", "lazy.thing", "fh", "gen", "tgen", "rr", "df", "df.age", "calls"}
	if _, err := l.Inspect(ctx, InspectRequest{Names: names, Budget: time.Second, Namespace: true}); err != nil {
		t.Fatal(err)
	}
	if d := untouchedDiff(t, ctx, l); d != "" {
		t.Errorf("inspection: %s", d)
	}
	for _, sb := range []string{SandboxAuto, SandboxForceFallback} {
		for _, c := range []struct {
			name, code string
			want       string
		}{{"clean", untouchedCell, facts.ShadowOK}, {"crash", untouchedCrash, facts.ShadowError}} {
			r := runShadow(t, ctx, l, c.code, ShadowOptions{Timeout: 60 * time.Second, Trace: true, Sandbox: sb})
			if r.Status != c.want {
				t.Errorf("%s shadow run (%s sandbox): status %s (%s %s %s), want %s", c.name, sb, r.Status, r.Exception, r.Message, r.Reason, c.want)
			}
			if d := untouchedDiff(t, ctx, l); d != "" {
				t.Errorf("%s shadow run (%s sandbox): %s", c.name, sb, d)
			}
		}
	}
	// The check can fail: the same reads in the kernel itself are all seen.
	mustExecute(t, ctx, l, untouchedCell)
	d := untouchedDiff(t, ctx, l)
	for _, want := range []string{"'len'", "'property'", "'getattr'", "'repr'", "'iter'", "'array'", "'getitem'", "'module_getattr'", "numpy Generator", "torch Generator", "random.Random", "file offset"} {
		if !strings.Contains(d, want) {
			t.Errorf("running the cell in the kernel: the check missed %s: %q", want, d)
		}
	}
}

// TestRepeatedRunsKeepKernelFDs: inspections and shadow runs (both sandboxes, crashing and
// clean) leave the kernel with exactly the descriptors it had, the first round included.
//
// The baseline is taken after the kernel has printed once: ipykernel's IOPubThread opens a
// thread-local event pipe (a zmq PUSH socket, whose mailbox is an anon_inode:[eventfd]) in
// the kernel's first execute that writes output, with or without premortem. Measured from a
// listing that itself prints, that socket shows up as "one more eventfd" on the next
// listing, whatever ran in between (issue 24's probe saw it).
func TestRepeatedRunsKeepKernelFDs(t *testing.T) {
	python.Require(t, "numpy", "pandas", "torch")
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 10*time.Minute)
	mustExecute(t, ctx, l, untouched(t, "setup.py"))
	round := func() {
		if _, err := l.Inspect(ctx, InspectRequest{Names: []string{"ds", "ds.prop", "lazy.thing", "df", "gen", "fh"}, Namespace: true}); err != nil {
			t.Fatal(err)
		}
		runShadow(t, ctx, l, untouchedCrash, ShadowOptions{Timeout: 60 * time.Second})
		runShadow(t, ctx, l, untouchedCell, ShadowOptions{Timeout: 60 * time.Second, Sandbox: SandboxForceFallback})
	}
	kernelFDs(t, ctx, l) // the kernel's own first output (see above)
	start := stableFDs(t, ctx, l)
	round()
	first := stableFDs(t, ctx, l)
	t.Logf("%d descriptors before any inspection, %d after the first round", len(start), len(first))
	if len(first) != len(start) || len(added(start, first)) > 0 {
		t.Errorf("first inspection and shadow runs: %d descriptors before, %d after; new: %v, gone: %v", len(start), len(first), added(start, first), added(first, start))
	}
	for range 3 {
		round()
	}
	if after := stableFDs(t, ctx, l); len(after) != len(start) || len(added(start, after)) > 0 {
		t.Errorf("%d descriptors before, %d after four rounds; new: %v, gone: %v", len(start), len(after), added(start, after), added(after, start))
	}
}

// added lists the lines of b that a lacks.
func added(a, b []string) []string {
	have := map[string]bool{}
	for _, s := range a {
		have[s] = true
	}
	var out []string
	for _, s := range b {
		if !have[s] {
			out = append(out, s)
		}
	}
	return out
}
