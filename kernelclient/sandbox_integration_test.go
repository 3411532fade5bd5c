package kernelclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// sandboxSetup is a kernel as a training notebook leaves it: libraries loaded, a log file,
// a logging handler, a writable memmap, anonymous shared memory, a torch shared tensor, a
// file open for reading, and seeded RNGs.
const sandboxSetup = `
import os, random, mmap, logging, numpy as np, pandas as pd, torch
import matplotlib
matplotlib.use('agg')
import matplotlib.pyplot as plt
random.seed(7); np.random.seed(7); torch.manual_seed(7)
df = pd.DataFrame({"Age": [22.0, None, 35.0], "Fare": [7.25, 71.3, 8.05]})
os.makedirs("data", exist_ok=True)
for name in ("keep.csv", "log.txt"):
    with open(os.path.join("data", name), "w") as f:
        f.write(name)
logf = open("train.log", "w")
logf.write("epoch 1\n"); logf.flush()
log = logging.getLogger("train")
log.addHandler(logging.FileHandler("app.log"))
log.setLevel(logging.INFO)
log.info("parent")
np.zeros(4096, dtype=np.uint8).tofile("data.bin")
mm = np.memmap("data.bin", dtype=np.uint8, mode="r+")
mm[0] = 7
shm = mmap.mmap(-1, 4096)
shm[:5] = b"hello"
shared_t = torch.zeros(1024).share_memory_()
reader = open("data/keep.csv")
X = np.random.RandomState(0).rand(90, 4); y = (X[:, 0] > .5).astype(int)
`

// sandboxCell is one probe and what it must come back as under each sandbox.
// libraryTwins are crash/clean twins for the writers whose C library opens paths (the
// fallback emulates them in 33_writers.py): a write, its read back, the crash (a KeyError in
// the crash twin, line 3) and a write after it, for the modules this Python has.
func libraryTwins() []sandboxCell {
	twins := []struct{ name, needs, code string }{
		{"sqlite", "sqlite3", "import sqlite3; df.to_sql('df', sqlite3.connect('k.db'), index=False)\n" +
			"back = pd.read_sql('select * from df', sqlite3.connect('k.db'))\nv = back['Survived']\n" +
			"back.to_sql('df2', sqlite3.connect('k.db'))"},
		{"to_hdf", "tables", "df.to_hdf('k.h5', 'df')\nback = pd.read_hdf('k.h5', 'df')\nv = back['Survived']\n" +
			"back.to_hdf('k.h5', 'b')"},
		{"to_excel", "openpyxl", "df.to_excel('k.xlsx', index=False)\nback = pd.read_excel('k.xlsx')\nv = back['Survived']\n" +
			"back.to_excel('k2.xlsx')"},
		{"h5py", "h5py", "import h5py; f = h5py.File('k.hdf5', 'w'); f['Age'] = df['Age'].values; f.close()\n" +
			"back = {k: v[()] for k, v in h5py.File('k.hdf5', 'r').items()}\nv = back['Survived']\n" +
			"h5py.File('k2.hdf5', 'w')['x'] = back['Age']"},
	}
	var out []sandboxCell
	for _, w := range twins {
		if !python.Has(w.needs) {
			continue
		}
		out = append(out, sandboxCell{name: w.name + "_crash", code: w.code, ns: facts.ShadowError, fb: facts.ShadowError,
			exception: "KeyError", line: 3},
			sandboxCell{name: w.name + "_clean", code: strings.ReplaceAll(w.code, "'Survived'", "'Age'"),
				ns: facts.ShadowOK, fb: facts.ShadowOK})
	}
	return out
}

type sandboxCell struct {
	name, code string
	ns, fb     string // expected status with the namespace sandbox / the fallback
	exception  string // for error outcomes (both sandboxes)
	line       int
	reason     string // substring of the namespace outcome's reason ("" = any)
	fbReason   string // substring of the fallback outcome's reason ("" = any)
}

var sandboxCells = []sandboxCell{
	{name: "write_read_back", code: "with open('data/out.txt', 'w') as f:\n    f.write('x')\nwith open('data/log.txt', 'a') as f:\n    f.write('more')\n" +
		"assert open('data/out.txt').read() == 'x' and open('data/log.txt').read() == 'log.txtmore'\nos.remove('data/keep.csv')\n" +
		"os.rename('data/log.txt', 'data/moved.txt')\nos.mkdir('data/sub')\nimport shutil\nshutil.rmtree('data')",
		ns: facts.ShadowOK, fb: facts.ShadowOK}, // the fallback: in its private view of files
	{name: "csv_keyerror", code: "df.to_csv('submission.csv', index=False)\nback = pd.read_csv('submission.csv')\nv = back['Survived']",
		ns: facts.ShadowError, fb: facts.ShadowError, exception: "KeyError", line: 3},
	{name: "scratch_full", code: "f = open('big.bin', 'wb')\nfor i in range(300):\n    f.write(b'x' * (1 << 20))",
		ns: facts.ShadowRefused, fb: facts.ShadowRefused, reason: "scratch space is full (256 MB",
		fbReason: "scratch space is full (256 MB"}, // a quarter of the 1 GB cap in both
	{name: "torch_save", code: "torch.save({'w': torch.zeros(3)}, 'ckpt.pt')\nck = torch.load('ckpt.pt')", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "savefig", code: "plt.plot([1, 2])\nplt.savefig('fig.png')", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "home_tmp_shm", code: "open(os.path.expanduser('~/.cache-x'), 'w').write('x')\nimport tempfile\n" +
		"tempfile.NamedTemporaryFile(delete=False).write(b'x')\nopen('/dev/shm/premortem-probe', 'w').write('x')",
		ns: facts.ShadowOK, fb: facts.ShadowRefused},
	{name: "bang", code: "!echo hi > f.txt\nx = 1", ns: facts.ShadowOK, fb: facts.ShadowRefused},
	{name: "fork", code: "pid = os.fork()\nif pid == 0:\n    open('forked.txt', 'w').write('x')\n    os._exit(0)\nos.waitpid(pid, 0)",
		ns: facts.ShadowOK, fb: facts.ShadowRefused},
	{name: "stray_process", code: "import subprocess\nsubprocess.Popen(['sleep', '31'])\nx = 1", ns: facts.ShadowOK, fb: facts.ShadowRefused},
	{name: "socket", code: "import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=20)",
		ns: facts.ShadowRefused, fb: facts.ShadowRefused, reason: "needs the network"},
	{name: "download", code: "import urllib.request\nurllib.request.urlopen('https://example.com/train.csv', timeout=20).read()",
		ns: facts.ShadowRefused, fb: facts.ShadowRefused, reason: "needs the network"},
	{name: "grid_n_jobs", code: "from sklearn.model_selection import GridSearchCV\nfrom sklearn.ensemble import RandomForestClassifier\n" +
		"gs = GridSearchCV(RandomForestClassifier(n_estimators=5), {'max_depth': [2, 3]}, n_jobs=-1, cv=3).fit(X, y)\npred = gs.predict(X[:, :3])",
		ns: facts.ShadowError, fb: facts.ShadowError, exception: "ValueError", line: 4},
	{name: "dataloader_workers", code: "from torch.utils.data import DataLoader, TensorDataset\n" +
		"dl = DataLoader(TensorDataset(torch.zeros(64, 8), torch.zeros(64)), batch_size=32, num_workers=2)\nlin = torch.nn.Linear(7, 2)\n" +
		"for xb, yb in dl:\n    out = lin(xb)", ns: facts.ShadowError, fb: facts.ShadowError, exception: "RuntimeError", line: 5},
	// issue 13: what the kernel had open before the fork
	{name: "logf", code: "logf.write('child\\n'); logf.flush()", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "logging", code: "log.info('child')", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "memmap_flush", code: "mm[:] = 9\nmm.flush()", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "memmap_noflush", code: "mm[1] = 5", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "anon_shared", code: "shm[:5] = b'CHILD'\nshared_t += 1", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "reader_offset", code: "reader.read()", ns: facts.ShadowOK, fb: facts.ShadowOK},
	{name: "affinity", code: "os.sched_setaffinity(os.getppid(), {0})", ns: facts.ShadowOK, fb: facts.ShadowRefused},
	{name: "priority", code: "os.setpriority(os.PRIO_PROCESS, os.getppid(), 10)", ns: facts.ShadowOK, fb: facts.ShadowRefused},
	// issue 14: the kernel's own history database and sockets
	{name: "history_db", code: "hm = get_ipython().history_manager\nhm.db.execute('DELETE FROM history')\nhm.db.commit()", ns: facts.ShadowOK, fb: ""},
	{name: "garbage_fds", code: "for fd in range(3, 256):\n    try:\n        os.write(fd, b'garbage garbage')\n    except OSError:\n        pass", ns: "", fb: ""},
}

// outsideState is what a shadow run must not change outside the child.
type outsideState struct {
	Files    map[string]string
	Shm      []string
	Maps     []string
	Status   map[string]string
	Limits   string
	Stat     string
	FDs      map[string]string
	History  string
	Stderr   string
	Children map[int]string
}

// kernelOutside reads the kernel process's state from /proc and the files around it.
func kernelOutside(t *testing.T, l *Launched, pid int, dirs ...string) outsideState {
	t.Helper()
	s := outsideState{Files: map[string]string{}, Status: map[string]string{}, FDs: map[string]string{}}
	for _, d := range dirs {
		for k, v := range treeDigest(t, d) {
			s.Files[filepath.Join(d, k)] = v
		}
	}
	ents, _ := os.ReadDir("/dev/shm")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "premortem-hosttest-") {
			// the inspector package's host test, which go test may run beside this one,
			// makes these outside any shadow run
			continue
		}
		s.Shm = append(s.Shm, e.Name())
	}
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(proc, "maps")); err == nil {
		// Shared mappings and the files mapped: heap and anonymous private mappings move
		// with every request the kernel answers.
		seen := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 5 && len(f[1]) == 4 && f[1][3] == 's' {
				s.Maps = append(s.Maps, line)
			} else if len(f) >= 6 && strings.HasPrefix(f[5], "/") && !seen[f[5]] {
				seen[f[5]] = true
				s.Maps = append(s.Maps, f[5])
			}
		}
		sort.Strings(s.Maps)
	}
	if b, err := os.ReadFile(filepath.Join(proc, "status")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range []string{"Cpus_allowed_list", "Uid", "Gid", "NSpid", "Seccomp", "NoNewPrivs"} {
				if strings.HasPrefix(line, k+":") {
					s.Status[k] = line
				}
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(proc, "limits"))
	s.Limits = string(b)
	if b, err := os.ReadFile(filepath.Join(proc, "stat")); err == nil {
		f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
		s.Stat = "priority " + f[15] + " nice " + f[16] // fields 18 and 19 of stat
	}
	fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
	for _, e := range fds {
		target, _ := os.Readlink(filepath.Join(proc, "fd", e.Name()))
		pos := ""
		if b, err := os.ReadFile(filepath.Join(proc, "fdinfo", e.Name())); err == nil {
			pos = strings.SplitN(string(b), "\n", 2)[0] // "pos: N": the kernel's file offsets
		}
		s.FDs[e.Name()] = target + " " + pos
	}
	s.Stderr = l.Stderr()
	s.Children = childrenOf(pid)
	return s
}

// fileHash is the sha256 of a file's bytes ("" when missing).
func fileHash(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// stableHash waits until a file stops changing (IPython's history thread writes late).
func stableHash(t *testing.T, p string) string {
	t.Helper()
	prev := fileHash(p)
	for i := 0; i < 50; i++ {
		time.Sleep(200 * time.Millisecond)
		h := fileHash(p)
		if h == prev && h != "" {
			return h
		}
		prev = h
	}
	t.Fatalf("%s never settled", p)
	return ""
}

// countingShadow runs a shadow run and collects it, counting the silent requests made.
func countingShadow(t *testing.T, ctx context.Context, l *Launched, code string, opts ShadowOptions, calls *int) *facts.ShadowResult {
	t.Helper()
	r, err := l.Shadow(ctx, code, opts)
	*calls++
	if err != nil {
		t.Fatalf("shadow %.60q: %v", code, err)
	}
	for r.Status == facts.ShadowRunning {
		time.Sleep(10 * time.Millisecond)
		if r, err = l.ShadowResult(ctx, r.Token); err != nil {
			t.Fatalf("shadow result: %v", err)
		}
		*calls++
	}
	return r
}

func iopubCount(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.iopubN
}

// strayProcesses lists `sleep 31` processes (a probe starts one; it must die with the run).
func strayProcesses() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == "sleep\x0031\x00" {
			pid, _ := strconv.Atoi(e.Name())
			out = append(out, pid)
		}
	}
	return out
}

// TestSandboxSafety: issues 11, 13 and 14's safety probes against a real kernel, with the
// namespace sandbox and with the forced fallback. The kernel has its own HOME, TMPDIR and
// IPYTHONDIR (so a real history.sqlite). After every probe: files and their hashes in the
// notebook folder, HOME and TMPDIR, /dev/shm entries, the kernel's shared mappings and mapped
// files, affinity, priority, rlimits, open descriptors and their offsets, history.sqlite byte
// for byte, the kernel's stderr and IOPub (exactly two status messages per request), no child
// or stray process; at the end, namespace, In/Out, execution count and RNG states.
func TestSandboxSafety(t *testing.T) {
	python.Require(t, "torch")
	python.Require(t, "sklearn")
	python.Require(t, "matplotlib")
	dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	ipy := filepath.Join(home, ".ipython")
	l := launch(t, LaunchOptions{Cwd: dir, Env: []string{"HOME=" + home, "TMPDIR=" + tmp, "IPYTHONDIR=" + ipy}})
	ctx := ctxT(t, 10*time.Minute)
	mustExecute(t, ctx, l, sandboxSetup)
	who, err := l.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(ipy, "profile_default", "history.sqlite")
	probe, err := l.SandboxProbe(ctx, SandboxAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sandbox probe: %s: %s", probe.Sandbox, probe.Reason)
	forced, err := l.SandboxProbe(ctx, SandboxForceFallback)
	if err != nil || forced.Sandbox != facts.SandboxFallback {
		t.Fatalf("forced probe: %+v %v", forced, err)
	}
	modes := []string{SandboxForceFallback}
	if probe.Sandbox == facts.SandboxNamespaces {
		modes = append(modes, SandboxAuto)
	} else {
		t.Logf("no namespace sandbox on this machine (%s): only the fallback is tested", probe.Reason)
	}
	before := probeState(t, ctx, l)
	histBefore := stableHash(t, hist)
	outBefore := kernelOutside(t, l, who.PID, dir, home, tmp)
	for _, mode := range modes {
		for _, c := range append(append([]sandboxCell(nil), sandboxCells...), libraryTwins()...) {
			want := c.ns
			if mode == SandboxForceFallback {
				want = c.fb
			}
			calls := 0
			n0 := iopubCount(l.Client)
			r := countingShadow(t, ctx, l, c.code, ShadowOptions{Timeout: 60 * time.Second, Trace: true, MaxMemory: 1 << 30, Sandbox: mode}, &calls)
			name := mode + "/" + c.name
			wantKind := facts.SandboxNamespaces
			if mode == SandboxForceFallback {
				wantKind = facts.SandboxFallback
			}
			switch {
			case want != "" && r.Status != want:
				t.Errorf("%s: status %q (exception %q line %d, reason %q, refused %q, message %q), want %q", name, r.Status, r.Exception, r.Line, r.Reason, r.Refused, r.Message, want)
			case want == facts.ShadowError && (r.Exception != c.exception || r.Line != c.line):
				t.Errorf("%s: %s at line %d (%s), want %s at line %d", name, r.Exception, r.Line, r.Message, c.exception, c.line)
			case mode == SandboxAuto && c.reason != "" && !strings.Contains(r.Reason, c.reason):
				t.Errorf("%s: reason %q, want it to say %q", name, r.Reason, c.reason)
			case mode == SandboxForceFallback && c.fbReason != "" && !strings.Contains(r.Reason, c.fbReason):
				t.Errorf("%s: reason %q, want it to say %q", name, r.Reason, c.fbReason)
			case r.Status == facts.ShadowError && want != facts.ShadowError:
				t.Errorf("%s: a crash where none is: %s %s", name, r.Exception, r.Message)
			case r.Status != facts.ShadowDied && r.Sandbox != wantKind:
				t.Errorf("%s: sandbox %q (%s), want %q", name, r.Sandbox, r.SandboxReason, wantKind)
			}
			if got := iopubCount(l.Client) - n0; got != 2*calls {
				t.Errorf("%s: %d IOPub messages for %d silent requests, want %d (busy and idle each)", name, got, calls, 2*calls)
			}
			// Children are reaped a moment after the result is stored.
			deadline := time.Now().Add(5 * time.Second)
			for len(childrenOf(who.PID)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			after := kernelOutside(t, l, who.PID, dir, home, tmp)
			if !reflect.DeepEqual(after, outBefore) {
				t.Errorf("%s changed the kernel's outside:\n%s", name, outsideDiff(outBefore, after))
				outBefore = after
			}
			if h := fileHash(hist); h != histBefore {
				t.Errorf("%s: history.sqlite changed", name)
				histBefore = h
			}
			if p := strayProcesses(); len(p) != 0 {
				t.Errorf("%s: stray processes left: %v", name, p)
			}
			t.Logf("%-28s %-8s %-12s line %d  %.0f ms  %s%s", name, r.Status, r.Exception, r.Line, r.ElapsedMS, r.Refused, r.Reason)
		}
	}
	sameState(t, "sandboxed shadow runs", before, probeState(t, ctx, l))
}

// outsideDiff names the fields of two states that differ.
func outsideDiff(a, b outsideState) string {
	var out []string
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < av.NumField(); i++ {
		if !reflect.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: %v\n   -> %v", av.Type().Field(i).Name, av.Field(i).Interface(), bv.Field(i).Interface()))
		}
	}
	return strings.Join(out, "\n")
}

// TestSandboxFirstImport: a first `import matplotlib.pyplot` with an empty HOME (no
// matplotlib config or font cache yet) then a plot of series of different lengths is the
// ValueError it is, with both sandboxes, and HOME stays empty.
func TestSandboxFirstImport(t *testing.T) {
	python.Require(t, "matplotlib")
	dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	l := launch(t, LaunchOptions{Cwd: dir, Env: []string{"HOME=" + home, "TMPDIR=" + tmp, "MPLCONFIGDIR=", "XDG_CACHE_HOME=", "XDG_CONFIG_HOME="}})
	ctx := ctxT(t, 5*time.Minute)
	mustExecute(t, ctx, l, "import numpy as np\nx = np.arange(3)")
	probe, err := l.SandboxProbe(ctx, SandboxAuto)
	if err != nil {
		t.Fatal(err)
	}
	modes := []string{SandboxForceFallback}
	if probe.Sandbox == facts.SandboxNamespaces {
		modes = append(modes, SandboxAuto)
	}
	files := treeDigest(t, home)
	tmpFiles := treeDigest(t, tmp)
	for _, mode := range modes {
		r := runShadow(t, ctx, l, "import matplotlib.pyplot as plt\nplt.plot(x, [1, 2])", ShadowOptions{Timeout: 60 * time.Second, Sandbox: mode})
		if r.Status != facts.ShadowError || r.Exception != "ValueError" || r.Line != 2 {
			t.Errorf("%s: got %s %s line %d (%s%s), want ValueError at line 2", mode, r.Status, r.Exception, r.Line, r.Reason, r.Message)
		}
		t.Logf("%s: %s %s line %d in %.0f ms", mode, r.Status, r.Exception, r.Line, r.ElapsedMS)
	}
	if got := treeDigest(t, home); fmt.Sprint(got) != fmt.Sprint(files) {
		t.Errorf("HOME changed: %v -> %v", files, got)
	}
	if got := treeDigest(t, tmp); fmt.Sprint(got) != fmt.Sprint(tmpFiles) {
		t.Errorf("TMPDIR changed (the fallback's scratch directory must be removed): %v -> %v", tmpFiles, got)
	}
}
