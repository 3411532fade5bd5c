"""Tests of the shadow child's sandbox (31_sandbox.py, 32_contain.py, 33_fallback.py): the
namespace sandbox and the fallback keep writes, processes and the network inside, and what
the kernel had open untouched. In-process IPython shell, real forks.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_sandbox.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import M, SETUP, SH, has, shadow, zombies  # noqa: E402  (the module as kernelclient embeds it)


def tree(*dirs):
    """path -> content hash (or "dir") of every file under dirs."""
    import hashlib

    out = {}
    for d in dirs:
        for root, subdirs, names in os.walk(d):
            out[root + "/"] = "dir"
            for n in names:
                p = os.path.join(root, n)
                try:
                    with open(p, "rb") as f:
                        out[p] = hashlib.sha256(f.read()).hexdigest()
                except OSError as e:
                    out[p] = "unreadable: %s" % e.errno
    return out


def top_entries(d):
    try:
        return sorted(os.listdir(d))
    except OSError:
        return []


class SandboxTest(unittest.TestCase):
    """The namespace sandbox and the fallback, against an in-process shell: writes,
    processes and the network stay inside; what the process had open stays untouched."""

    @classmethod
    def setUpClass(cls):
        SH.run_cell(SETUP, store_history=True).raise_error()
        cls.dir = tempfile.mkdtemp(prefix="premortem-sandbox-test-")
        # A private temporary directory: the machine's /tmp is shared with other processes.
        cls.tmp = tempfile.mkdtemp(prefix="premortem-sandbox-tmp-")
        cls.old_tempdir, tempfile.tempdir = tempfile.tempdir, cls.tmp
        cls.keep = os.path.join(cls.dir, "keep.txt")
        with open(cls.keep, "w") as f:
            f.write("keep")
        setup = r"""
import os, mmap, logging
sb_dir = %r
logf = open(os.path.join(sb_dir, 'train.log'), 'w')
logf.write('epoch 1\n'); logf.flush()
sb_log = logging.getLogger('premortem-sandbox-test')
sb_log.addHandler(logging.FileHandler(os.path.join(sb_dir, 'app.log')))
sb_log.setLevel(logging.INFO)
sb_log.info('parent')
np.zeros(4096, dtype=np.uint8).tofile(os.path.join(sb_dir, 'data.bin'))
mm = np.memmap(os.path.join(sb_dir, 'data.bin'), dtype=np.uint8, mode='r+')
mm[0] = 7
shm = mmap.mmap(-1, 4096)
shm[:5] = b'hello'
reader = open(os.path.join(sb_dir, 'keep.txt'))
""" % cls.dir
        SH.run_cell(setup, store_history=True).raise_error()
        cls.probe = json.loads(repr(M.sandbox_probe()))

    @classmethod
    def tearDownClass(cls):
        tempfile.tempdir = cls.old_tempdir

    def setUp(self):
        if self.probe["sandbox"] != "namespaces" and "namespaces" in self._testMethodName:
            self.skipTest("no namespace sandbox here: %s" % self.probe["sandbox_reason"])

    def outside(self):
        home = os.path.expanduser("~")
        return {"tree": tree(self.dir), "shm": top_entries("/dev/shm"), "tmp": tree(self.tmp),
                "home": top_entries(home), "mm": bytes(SH.user_ns["mm"][:8]), "shm_map": SH.user_ns["shm"][:8],
                "logf_pos": SH.user_ns["logf"].tell(), "reader_pos": os.lseek(SH.user_ns["reader"].fileno(), 0, 1),
                "affinity": sorted(os.sched_getaffinity(0)), "nice": os.getpriority(os.PRIO_PROCESS, 0)}

    def test_probe_cached_and_forced(self):
        self.assertIn(self.probe["sandbox"], ("namespaces", "fallback"))
        self.assertTrue(self.probe["sandbox_reason"])
        self.assertEqual(json.loads(repr(M.sandbox_probe())), self.probe)
        forced = json.loads(repr(M.sandbox_probe("fallback")))
        self.assertEqual(forced["sandbox"], "fallback")
        self.assertIn("asked for", forced["sandbox_reason"])

    def test_fallback_when_namespaces_refused(self):
        """unshare refused (EPERM, as with AppArmor's restriction or in a container): the run
        falls back, says why, and its write lands in the private view, not on disk."""
        import errno

        orig = M._ns_setup

        def refused(box, max_tmp):
            raise OSError(errno.EPERM, "Operation not permitted")

        M._ns_setup = refused
        try:
            r = shadow("open(%r, 'w').write('x')" % os.path.join(self.dir, "new.txt"))
            ok = shadow("x = 1 + 1")
        finally:
            M._ns_setup = orig
        self.assertEqual((r["status"], r["sandbox"]), ("ok", "fallback"), r)  # in the private view
        self.assertIn("unprivileged user namespaces are not allowed here (unshare: Operation not permitted)", r["sandbox_reason"])
        self.assertIn("file writes emulated in a private view; network and subprocesses refused", r["sandbox_reason"])
        self.assertEqual((ok["status"], ok["sandbox"]), ("ok", "fallback"), ok)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "new.txt")))

    def test_namespaces_contain_writes_processes(self):
        d, k = self.dir, self.keep
        home = os.path.expanduser("~")
        cells = {
            "write_read": "p = %r\nopen(p, 'w').write('x')\nassert open(p).read() == 'x'" % os.path.join(d, "new.txt"),
            "append": "with open(%r, 'a') as f:\n    f.write('more')\nassert open(%r).read() == 'keepmore'" % (k, k),
            "delete": "import os\nos.remove(%r)\nassert not os.path.exists(%r)" % (k, k),
            "rename_mkdir": "import os\nos.mkdir(%r)\nos.rename(%r, %r)" % (os.path.join(d, "sub"), k, os.path.join(d, "sub", "k")),
            "rmtree": "import shutil\nshutil.rmtree(%r)" % d,
            "csv_roundtrip": "df.to_csv(%r, index=False)\nback = pd.read_csv(%r)\nassert list(back.columns) == list(df.columns)"
                             % (os.path.join(d, "df.csv"), os.path.join(d, "df.csv")),
            "np_save": "np.save(%r, arr)\nassert np.load(%r).shape == arr.shape" % (os.path.join(d, "a.npy"), os.path.join(d, "a.npy")),
            "shm_home_tmp": "open('/dev/shm/premortem-x', 'w').write('x')\nopen(%r, 'w').write('x')\nimport tempfile\n"
                            "tempfile.NamedTemporaryFile(delete=False).write(b'x')" % os.path.join(home, ".premortem-x"),
            "subprocess": "import subprocess\nsubprocess.run(['touch', %r], check=True)\nassert os.path.exists(%r)"
                          % (os.path.join(d, "sub.txt"), os.path.join(d, "sub.txt")),
            "system": "import os\nassert os.system('echo hi > %s') == 0" % os.path.join(d, "sys.txt"),
            "bang": "!echo hi > %s\nx = 1" % os.path.join(d, "bang.txt"),
            "fork": "import os\npid = os.fork()\nif pid == 0:\n    open(%r, 'w').write('x')\n    os._exit(0)\nos.waitpid(pid, 0)"
                    % os.path.join(d, "forked.txt"),
            "native_creat": "import ctypes\nassert ctypes.CDLL(None).creat(%r.encode(), 0o644) >= 0" % os.path.join(d, "native.txt"),
            "inherited": "logf.write('child\\n'); logf.flush()\nsb_log.info('child')\nmm[:] = 9\nmm.flush()\nshm[:5] = b'CHILD'\n"
                         "reader.read()",
            "other_processes": "import os\nos.sched_setaffinity(os.getppid(), {0})\nos.setpriority(os.PRIO_PROCESS, os.getppid(), 10)\n"
                               "os.setpriority(os.PRIO_PROCESS, 0, 15)",
            "sleeper": "import subprocess\nsubprocess.Popen(['sleep', '30'])\nx = 1",
        }
        if has("torch"):
            cells["torch_save"] = "import torch\ntorch.save(torch.zeros(2), %r)\nt = torch.load(%r)" % (
                os.path.join(d, "t.pt"), os.path.join(d, "t.pt"))
        before = self.outside()
        for name, code in cells.items():
            with self.subTest(name):
                r = shadow(code, timeout=20)
                self.assertEqual(r["status"], "ok", r)
                self.assertEqual(r["sandbox"], "namespaces")
                self.assertEqual(self.outside(), before)
        self.assertEqual(zombies(), [])
        self.assertEqual(sleepers(), [])

    def test_namespaces_network_is_unknown(self):
        for code in ("import socket\nsocket.create_connection(('192.0.2.1', 80), timeout=20)",
                     "import urllib.request\nurllib.request.urlopen('http://example.com/data.csv', timeout=20)",
                     "import socket\nsocket.getaddrinfo('example.com', 443)",
                     "df2 = pd.read_csv('https://example.com/data.csv')"):
            with self.subTest(code):
                r = shadow(code, timeout=20)
                self.assertEqual(r["status"], "refused", r)
                self.assertIn("needs the network", r["reason"])

    def test_inherited_contained_both(self):
        cells = {
            "logf": "logf.write('child\\n'); logf.flush()",
            "logging": "sb_log.info('child')",
            "memmap": "mm[:] = 9\nmm.flush()",
            "memmap_noflush": "mm[1] = 5",
            "anon_shared": "shm[:5] = b'CHILD'",
            "reader": "reader.read()\nreader.seek(0)",
        }
        for sandbox in ("auto", "fallback"):
            before = self.outside()
            for name, code in cells.items():
                with self.subTest(sandbox=sandbox, cell=name):
                    r = shadow(code, sandbox=sandbox)
                    self.assertEqual(r["status"], "ok", r)
                    self.assertEqual(self.outside(), before)

    def test_fallback_refuses_other_processes(self):
        before = self.outside()
        for code in ("import os\nos.sched_setaffinity(os.getppid(), {0})",
                     "import os\nos.setpriority(os.PRIO_PROCESS, os.getppid(), 10)",
                     "import ctypes, os\nctypes.CDLL(None).setpriority(0, os.getppid(), 10)",
                     "import os, signal\nos.kill(os.getppid(), signal.SIGCONT)"):
            with self.subTest(code):
                r = shadow(code, sandbox="fallback")
                self.assertEqual(r["status"], "refused", r)
                self.assertEqual(self.outside(), before)

    def test_parallel_workers_both(self):
        if not has("sklearn") or not has("torch"):
            self.skipTest("needs sklearn and torch")
        grid = ("from sklearn.model_selection import GridSearchCV\nfrom sklearn.ensemble import RandomForestClassifier\n"
                "X = np.random.RandomState(0).rand(60, 4)\ny = (X[:, 0] > .5).astype(int)\n"
                "gs = GridSearchCV(RandomForestClassifier(n_estimators=5), {'max_depth': [2, 3]}, n_jobs=-1, cv=3).fit(X, y)\n"
                "pred = gs.predict(X[:, :3])")
        loader = ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                  "dl = DataLoader(TensorDataset(torch.zeros(64, 8), torch.zeros(64)), batch_size=32, num_workers=2)\n"
                  "lin = torch.nn.Linear(7, 2)\nfor xb, yb in dl:\n    out = lin(xb)")
        for sandbox in ("auto", "fallback"):
            with self.subTest(sandbox=sandbox, cell="grid"):
                r = shadow(grid, timeout=60, sandbox=sandbox)
                self.assertEqual((r["status"], r.get("exception"), r.get("line")), ("error", "ValueError", 6), r)
            with self.subTest(sandbox=sandbox, cell="loader"):
                r = shadow(loader, timeout=60, sandbox=sandbox)
                self.assertEqual((r["status"], r.get("exception"), r.get("line")), ("error", "RuntimeError", 6), r)
        self.assertEqual(zombies(), [])


def sleepers():
    """`sleep 30` processes left by a shadow run (they must die with its namespace)."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if f.read() == b"sleep\x0030\x00":
                        out.append(int(pid))
            except OSError:
                pass
    return out


class DieWithTest(unittest.TestCase):
    """_die_with: a child whose parent died between fork and the death signal's arming is
    an orphan nothing kills; it must end at once, however it checks its parent (by pid, or
    by a pipe only the parent holds, for pid 1 of a new PID namespace)."""

    def orphan_survives(self, by_pipe):
        import select
        import time

        r, w = os.pipe()
        mid = os.fork()
        if mid == 0:  # P: forks Q and dies before Q arms its death signal
            try:
                os.close(r)
                alive_r, alive_w = os.pipe()
                me = os.getpid()
                if os.fork() == 0:
                    os.close(alive_w)
                    while os.getppid() == me:  # P is gone
                        time.sleep(0.005)
                    if by_pipe:
                        M._die_with(alive_fd=alive_r)
                    else:
                        M._die_with(parent_pid=me)
                    os.write(w, b"survived")
                    os._exit(0)
            finally:
                os._exit(0)
        os.close(w)
        os.waitpid(mid, 0)
        out = b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select([r], [], [], 0.5)
            if ready:
                b = os.read(r, 64)
                if not b:
                    break
                out += b
        os.close(r)
        return out

    def test_orphan_by_pid(self):
        self.assertEqual(self.orphan_survives(False), b"")

    def test_orphan_by_pipe(self):
        self.assertEqual(self.orphan_survives(True), b"")

    def test_parent_alive(self):
        r, w = os.pipe()
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                M._die_with(parent_pid=me)
                os.write(w, b"alive")
            finally:
                os._exit(0)
        os.close(w)
        out = os.read(r, 64)
        os.close(r)
        os.waitpid(pid, 0)
        self.assertEqual(out, b"alive")


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=2)
