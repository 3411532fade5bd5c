"""Tests of the fallback sandbox's syscall allow-list (29_seccomp.py): native code in a
shadow run where namespaces are refused cannot reach the host. Each probe is a cell doing
raw syscalls through ctypes, as a user's C extension could; the test observes the host from
outside (the pty's bytes and termios, domainname, lo's addresses, mounts, a file's flags,
mode and xattrs, SysV IPC, keys, accounting) and checks the result names the refused call.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_fallback.py
(`go test ./kernelclient/inspector/` runs it too). Probes that would change the machine
are undone in tearDown should one get through (as on a build without the allow-list).
"""

import ctypes
import errno
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import M, SETUP, SH, shadow  # noqa: E402

LIBC = ctypes.CDLL(None, use_errno=True)
PROBE_KEY = 0x5052454D  # "PREM": the SysV IPC key the probes use
PROBE_ADDR = "127.77.0.1"

PRELUDE = "import ctypes, os, struct, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n" \
          "libc.syscall.restype = ctypes.c_long\n"

# name -> (cell, the call the refusal must name)
PROBES = {
    "tiocsti": ("fd = os.open(%(pty)r, os.O_RDONLY | os.O_NOCTTY)\nimport fcntl, termios\n"
                "for ch in b'id\\n':\n    fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))\n", "ioctl (ioctl request 0x5412)"),
    "termios": ("fd = os.open(%(pty)r, os.O_RDONLY | os.O_NOCTTY)\nimport termios\nattr = termios.tcgetattr(fd)\n"
                "attr[3] &= ~termios.ECHO\ntermios.tcsetattr(fd, termios.TCSANOW, attr)\n", "ioctl (ioctl request 0x5402)"),
    "domainname": ("name = b'premortem-probe'\nassert libc.setdomainname(name, len(name)) == 0, ctypes.get_errno()\n",
                   "setdomainname"),
    "hostname": ("name = os.uname().nodename.encode()\nassert libc.sethostname(name, len(name)) == 0\n", "sethostname"),
    "netlink_addr": ("s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n"
                     "ifa = struct.pack('BBBBI', socket.AF_INET, 32, 0, 0xfe, socket.if_nametoindex('lo'))\n"
                     "rta = struct.pack('HH4s', 8, 2, socket.inet_aton(%(addr)r))\n"
                     "msg = struct.pack('IHHII', 16 + len(ifa) + len(rta), 20, 0x1 | 0x4 | 0x400 | 0x200, 1, 0) + ifa + rta\n"
                     "s.sendto(msg, (0, 0))\n", "socket (socket family 16)"),
    "fsmount": ("fs = libc.syscall(430, b'tmpfs', 0)\nassert fs >= 0, ctypes.get_errno()\n"
                "assert libc.syscall(431, fs, 6, None, None, 0) == 0\nmnt = libc.syscall(432, fs, 0, 0)\n"
                "assert libc.syscall(429, mnt, b'', -100, %(dir)r.encode(), 4) == 0\n", "fsopen"),
    "mount": ("assert libc.mount(b'none', %(dir)r.encode(), b'tmpfs', 0, None) == 0, ctypes.get_errno()\n", "mount"),
    "setflags": ("import fcntl, array\nfd = os.open(%(file)r, os.O_RDONLY)\nfl = array.array('l', [0x40])\n"
                 "fcntl.ioctl(fd, 0x40086602, fl)\n", "ioctl (ioctl request 0x40086602)"),
    "fchmodat2": ("assert libc.syscall(452, -100, %(file)r.encode(), 0o777, 0) == 0, ctypes.get_errno()\n", "fchmodat2"),
    "chmod_native": ("assert libc.chmod(%(file)r.encode(), 0o777) == 0, ctypes.get_errno()\n", "chmod"),
    "setxattr": ("v = b'x'\nassert libc.setxattr(%(file)r.encode(), b'user.premortem', v, 1, 0) == 0, ctypes.get_errno()\n",
                 "setxattr"),
    "sysv_shm": ("assert libc.shmget(%(key)d, 4096, 0o1000 | 0o600) >= 0, ctypes.get_errno()\n", "shmget"),
    "sysv_msg": ("assert libc.msgget(%(key)d, 0o1000 | 0o600) >= 0, ctypes.get_errno()\n", "msgget"),
    "sysv_sem": ("assert libc.semget(%(key)d, 1, 0o1000 | 0o600) >= 0, ctypes.get_errno()\n", "semget"),
    "mq_open": ("assert libc.syscall(240, b'premortem-probe', 0o100 | 2, 0o600, None) >= 0, ctypes.get_errno()\n",
                "mq_open"),
    "add_key": ("assert libc.syscall(248, b'user', b'premortem-probe', b'x', 1, -4) >= 0, ctypes.get_errno()\n",
                "add_key"),
    "acct": ("assert libc.acct(%(acct)r.encode()) == 0, ctypes.get_errno()\n", "acct"),
    "native_write": ("assert libc.creat(%(new)r.encode(), 0o644) >= 0, ctypes.get_errno()\n",
                     "creat"),
    "native_open_write": ("assert libc.open(%(new)r.encode(), 0o101, 0o644) >= 0, ctypes.get_errno()\n",
                          "(open for writing outside the private view)"),
    "native_openat_trunc": ("assert libc.openat(-100, %(file)r.encode(), 0o1001) >= 0, ctypes.get_errno()\n",
                            "openat (open for writing outside the private view)"),
    "unshare": ("assert libc.unshare(0x10000000 | 0x40000000) == 0, ctypes.get_errno()\n", "unshare"),
    "clone_ns": ("assert libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0) >= 0, ctypes.get_errno()\n",
                 "clone (clone flags"),
}


def ipc_state():
    out = {}
    for kind in ("shm", "msg", "sem"):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                out[kind] = [line.split()[:2] for line in f.readlines()[1:]]
        except OSError as e:
            out[kind] = "unreadable: %s" % e.errno
    return out


def keys():
    try:
        with open("/proc/keys") as f:
            # other processes' session keyrings come and go: the probe's key is what counts
            return sorted(line.split()[0] for line in f if "premortem" in line)
    except OSError as e:
        return "unreadable: %s" % e.errno


def lo_addrs():
    try:
        return subprocess.run(["ip", "-o", "addr", "show", "dev", "lo"], capture_output=True, text=True).stdout
    except OSError:
        return "no ip command"


def file_flags(path):
    import array
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        buf = array.array("l", [0])
        try:
            fcntl.ioctl(fd, 0x80086601, buf)  # FS_IOC_GETFLAGS
        except OSError as e:
            return "flags unsupported: %s" % e.errno
        return buf[0]
    finally:
        os.close(fd)


class FallbackAllowListTest(unittest.TestCase):
    """Native syscalls from a fallback shadow run: refused, named, and invisible outside."""

    @classmethod
    def setUpClass(cls):
        SH.run_cell(SETUP, store_history=True).raise_error()
        cls.dir = tempfile.mkdtemp(prefix="premortem-fallback-test-")
        cls.tmp = tempfile.mkdtemp(prefix="premortem-fallback-tmp-")
        cls.old_tempdir, tempfile.tempdir = tempfile.tempdir, cls.tmp
        cls.file = os.path.join(cls.dir, "target.txt")
        with open(cls.file, "w") as f:
            f.write("keep")
        os.chmod(cls.file, 0o640)
        cls.mnt = os.path.join(cls.dir, "mnt")
        os.mkdir(cls.mnt)
        cls.acct = os.path.join(cls.dir, "acct")
        open(cls.acct, "w").close()
        cls.master, cls.slave = os.openpty()  # the "user's terminal": the kernel holds the slave
        os.set_blocking(cls.master, False)
        SH.user_ns["fb_slave_fd"] = cls.slave

    @classmethod
    def tearDownClass(cls):
        tempfile.tempdir = cls.old_tempdir
        os.close(cls.master)
        os.close(cls.slave)

    def params(self):
        return {"pty": os.ttyname(self.slave), "dir": self.mnt, "file": self.file, "key": PROBE_KEY,
                "addr": PROBE_ADDR, "acct": self.acct, "new": os.path.join(self.dir, "native.txt")}

    def host(self):
        import termios

        try:
            pty_bytes = os.read(self.master, 4096)
        except BlockingIOError:
            pty_bytes = b""
        st = os.stat(self.file)
        with open("/proc/self/mountinfo") as f:
            mounts = sorted(line.split()[4] for line in f)
        with open("/proc/sys/kernel/domainname") as f:
            domain = f.read()
        with open("/proc/sys/kernel/hostname") as f:
            hostname = f.read()
        return {"pty_bytes": pty_bytes, "termios": termios.tcgetattr(self.slave), "domainname": domain,
                "hostname": hostname, "lo": lo_addrs(), "mounts": mounts, "mode": oct(st.st_mode),
                "xattrs": os.listxattr(self.file), "flags": file_flags(self.file), "ipc": ipc_state(),
                "mqueue": sorted(os.listdir("/dev/mqueue")) if os.path.isdir("/dev/mqueue") else [],
                "keys": keys(), "acct_size": os.path.getsize(self.acct), "files": sorted(os.listdir(self.dir))}

    def tearDown(self):
        undo(self)

    def test_probes_refused_and_invisible(self):
        p = self.params()
        for sandbox in ("fallback", "refused"):
            for name, (cell, call) in PROBES.items():
                with self.subTest(sandbox=sandbox, probe=name):
                    before = self.host()
                    r = run(PRELUDE + cell % p, sandbox)
                    after = self.host()
                    undo(self)
                    self.assertEqual(after, before)
                    self.assertEqual((r["status"], r["sandbox"]), ("refused", "fallback"), r)
                    self.assertIn(call, r["refused"], r)
                    self.assertIn("native code", r["refused"])

    def test_common_cells_run(self):
        """What the allow-list lets through: a Python cell's memory, threads, time, reads."""
        cells = {
            "pandas": "d = pd.DataFrame({'a': range(100)})\ns = d.groupby(d.a % 3).sum()\nassert len(s) == 3",
            "numpy": "x = np.linalg.svd(np.random.rand(50, 50))[1]\nimport time\ntime.sleep(0.01)",
            "threads": "import threading\nts = [threading.Thread(target=sum, args=([1, 2],)) for _ in range(4)]\n"
                       "[t.start() for t in ts]\n[t.join() for t in ts]",
            "isatty_getpwuid": "import sys, pwd, os\nsys.stdout.isatty()\npwd.getpwuid(os.getuid())",
            "read_file": "assert open(%r).read() == 'keep'" % self.file,
            "signal_self": "import signal, os\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n"
                           "os.kill(os.getpid(), signal.SIGUSR1)",
        }
        if has("torch"):
            cells["torch"] = "import torch\nt = torch.nn.Linear(4, 2)(torch.zeros(3, 4))\nassert t.shape == (3, 2)"
        if has("sklearn"):
            cells["sklearn"] = "from sklearn.linear_model import LogisticRegression\n" \
                               "m = LogisticRegression().fit(np.random.rand(20, 2), [0, 1] * 10)"
        for name, code in cells.items():
            with self.subTest(name):
                r = run(code, "fallback")
                self.assertEqual(r["status"], "ok", r)
                self.assertEqual(r["sandbox"], "fallback")

    def test_probe_says_what_is_emulated(self):
        """The probe tells judge's safe mode that the fallback takes file writes privately."""
        p = json.loads(repr(M.sandbox_probe("fallback")))
        self.assertEqual((p["sandbox"], p.get("emulated")), ("fallback", ["files"]), p)
        self.assertIn("fallback: file writes emulated in a private view; network and subprocesses refused",
                      p["sandbox_reason"])

    def test_unknown_architecture_refuses(self):
        saved = dict(M._SECCOMP_ARCH)
        M._SECCOMP_ARCH.clear()
        try:
            r = run("x = 1", "fallback")
        finally:
            M._SECCOMP_ARCH.update(saved)
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("knows no syscall table", r["reason"])


def tree(d):
    """path -> content hash (or "dir") and mode of everything under d."""
    import hashlib

    out = {}
    for root, subdirs, names in os.walk(d):
        out[root + "/"] = ("dir", os.stat(root).st_mode)
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[p] = (hashlib.sha256(f.read()).hexdigest(), os.stat(p).st_mode)
    return out


class FallbackViewTest(unittest.TestCase):
    """The fallback's private view: a cell's writes happen, read back, list, and vanish."""

    @classmethod
    def setUpClass(cls):
        SH.run_cell(SETUP, store_history=True).raise_error()
        cls.dir = tempfile.mkdtemp(prefix="premortem-view-test-")
        cls.tmp = tempfile.mkdtemp(prefix="premortem-view-tmp-")
        cls.old_tempdir, tempfile.tempdir = tempfile.tempdir, cls.tmp
        with open(os.path.join(cls.dir, "keep.txt"), "w") as f:
            f.write("keep")
        os.mkdir(os.path.join(cls.dir, "old"))
        with open(os.path.join(cls.dir, "old", "a.txt"), "w") as f:
            f.write("a")

    @classmethod
    def tearDownClass(cls):
        tempfile.tempdir = cls.old_tempdir

    def outside(self):
        return {"dir": tree(self.dir), "tmp": tree(self.tmp), "count": SH.execution_count}

    def test_writes_read_back_and_vanish(self):
        d = self.dir
        j = lambda *p: os.path.join(d, *p)  # noqa: E731
        cells = {
            "write_read": "import os\np = %r\nopen(p, 'w').write('x')\nassert open(p).read() == 'x'\n"
                          "assert os.path.isfile(p) and os.path.getsize(p) == 1" % j("new.txt"),
            "append": "with open(%r, 'a') as f:\n    f.write('more')\nassert open(%r).read() == 'keepmore'"
                      % (j("keep.txt"), j("keep.txt")),
            "delete": "import os\nos.remove(%r)\nassert not os.path.exists(%r)\nassert 'keep.txt' not in os.listdir(%r)"
                      % (j("keep.txt"), j("keep.txt"), d),
            "rename_mkdir": "import os\nos.mkdir(%r)\nos.rename(%r, %r)\nassert os.listdir(%r) == ['k']\n"
                            "assert not os.path.exists(%r)" % (j("sub"), j("keep.txt"), j("sub", "k"), j("sub"), j("keep.txt")),
            "rename_dir": "import os\nos.rename(%r, %r)\nassert open(%r).read() == 'a'\nassert not os.path.isdir(%r)"
                          % (j("old"), j("new"), j("new", "a.txt"), j("old")),
            "rmtree_recreate": "import shutil, os\nshutil.rmtree(%r)\nassert not os.path.exists(%r)\nos.makedirs(%r)\n"
                               "assert os.listdir(%r) == []" % (d, d, j("old"), j("old")),
            "listing": "import os\nopen(%r, 'w').write('y')\nassert sorted(os.listdir(%r)) == ['keep.txt', 'n2.txt', 'old']"
                       % (j("n2.txt"), d),
            "walk_glob": "import os, glob\nopen(%r, 'w').write('z')\nfs = [f for _, _, fl in os.walk(%r) for f in fl]\n"
                         "assert sorted(fs) == ['a.txt', 'keep.txt', 'w.txt'], fs\n"
                         "assert sorted(glob.glob(%r)) == [%r, %r]" % (j("w.txt"), d, j("*.txt"), j("keep.txt"), j("w.txt")),
            "pathlib": "from pathlib import Path\np = Path(%r) / 'q' / 'r.txt'\np.parent.mkdir(parents=True)\n"
                       "p.write_text('hi')\nassert p.read_text() == 'hi'\n"
                       "assert [x.name for x in Path(%r).glob('q/*.txt')] == ['r.txt']\np.unlink()\nassert not p.exists()"
                       % (d, d),
            "shutil": "import shutil, os\nshutil.copy(%r, %r)\nshutil.copytree(%r, %r)\nshutil.move(%r, %r)\n"
                      "assert open(%r).read() == 'keep' and os.listdir(%r) == ['a.txt']"
                      % (j("keep.txt"), j("c.txt"), j("old"), j("old2"), j("c.txt"), j("old2", "c.txt"),
                         j("old2", "c.txt"), j("old")),
            "tempfile": "import tempfile\nwith tempfile.NamedTemporaryFile('w', dir=%r) as f:\n    f.write('x')\n"
                        "d2 = tempfile.mkdtemp(dir=%r)" % (d, d),
            "chmod_truncate": "import os\nos.chmod(%r, 0o600)\nos.truncate(%r, 2)\nassert open(%r).read() == 'ke'\n"
                              "assert os.stat(%r).st_mode & 0o777 == 0o600" % ((j("keep.txt"),) * 4),
            "missing_dir_raises": "try:\n    open(%r, 'w')\nexcept FileNotFoundError:\n    pass\nelse:\n    raise AssertionError"
                                  % j("nodir", "x.txt"),
            # A path through a file, as the disk answers it: ENOTDIR, not ENOENT, whether the
            # file is the cell's own or a real one, for reads, writes and listings.
            "file_as_dir_raises": "import os\nopen(%r, 'w').write('f')\n"
                                  "for p, mode in ((%r, 'r'), (%r, 'w'), (%r, 'r'), (%r, 'w')):\n"
                                  "    try:\n        open(p, mode)\n    except NotADirectoryError:\n        pass\n"
                                  "    else:\n        raise AssertionError(p)\n"
                                  "try:\n    os.listdir(%r)\nexcept NotADirectoryError:\n    pass\nelse:\n    raise AssertionError"
                                  % (j("own"), j("own", "x.txt"), j("own", "x.txt"), j("keep.txt", "x"), j("keep.txt", "y", "z"),
                                     j("own")),
            "csv": "df.to_csv(%r, index=False)\nback = pd.read_csv(%r)\nassert list(back.columns) == list(df.columns)"
                   % (j("df.csv"), j("df.csv")),
            "json_pickle": "import json, pickle\njson.dump({'a': 1}, open(%r, 'w'))\npickle.dump([1], open(%r, 'wb'))\n"
                           "assert json.load(open(%r)) == {'a': 1} and pickle.load(open(%r, 'rb')) == [1]"
                           % (j("j.json"), j("p.pkl"), j("j.json"), j("p.pkl")),
            "numpy": "np.save(%r, arr)\nassert np.load(%r).shape == arr.shape\nnp.savez(%r, a=arr)\n"
                     "assert np.load(%r)['a'].shape == arr.shape\narr.tofile(%r)\nassert np.fromfile(%r).size == arr.size"
                     % (j("a.npy"), j("a.npy"), j("a.npz"), j("a.npz"), j("a.bin"), j("a.bin")),
        }
        if has("matplotlib"):
            cells["savefig"] = ("import os, matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
                                "plt.plot([1, 2])\nplt.savefig(%r)\nassert os.path.getsize(%r) > 0" % (j("f.png"), j("f.png")))
        if has("torch"):
            cells["torch"] = "import torch\ntorch.save(torch.zeros(2), %r)\nassert torch.load(%r).shape == (2,)" % (
                j("t.pt"), j("t.pt"))
        if has("joblib"):
            cells["joblib"] = "import joblib\njoblib.dump(arr, %r)\nassert joblib.load(%r).shape == arr.shape" % (
                j("a.joblib"), j("a.joblib"))
        cells.update(library_cells(j))
        if has("PIL"):
            cells["PIL"] = "from PIL import Image\nImage.new('RGB', (4, 4)).save(%r)\nassert Image.open(%r).size == (4, 4)" % (
                j("i.png"), j("i.png"))
        before = self.outside()
        for sandbox in ("fallback", "refused"):
            for name, code in cells.items():
                with self.subTest(sandbox=sandbox, cell=name):
                    r = run(code, sandbox)
                    self.assertEqual((r["status"], r["sandbox"]), ("ok", "fallback"), r)
                    self.assertEqual(self.outside(), before)

    def test_crash_twins(self):
        """Writes before and after the crash: the crash is found where it is, the clean twin
        is ok, and neither leaves anything."""
        p = os.path.join(self.dir, "sub.csv")
        crash = ("sub = df[['Age']].copy()\nsub.to_csv(%r, index=False)\nback = pd.read_csv(%r)\n"
                 "back['score'].mean()\nback.to_csv(%r)" % (p, p, p + ".2"))
        clean = crash.replace("back['score']", "back['Age']")
        cols = SH.user_ns["df"].columns
        self.assertIn("Age", cols)
        self.assertNotIn("score", cols)
        before = self.outside()
        for sandbox in ("fallback", "refused"):
            with self.subTest(sandbox=sandbox):
                r = run(crash, sandbox)
                self.assertEqual((r["status"], r.get("exception"), r.get("line")), ("error", "KeyError", 4), r)
                ok = run(clean, sandbox)
                self.assertEqual(ok["status"], "ok", ok)
                self.assertEqual(self.outside(), before)

    def test_library_crash_twins(self):
        """Each writer whose C library opens paths itself (sqlite3 and to_sql, to_hdf/HDFStore,
        to_excel, h5py, cv2): writes before and after the crash, read back; the verdicts are the
        namespace sandbox's, and nothing appears outside."""
        d = self.dir
        j = lambda *p: os.path.join(d, *p)  # noqa: E731
        before = self.outside()
        for name, (crash, clean) in library_twins(j).items():
            line = next(i for i, t in enumerate(crash.splitlines(), 1) if "['score']" in t)
            want = None
            for sandbox in ("auto", "fallback", "refused"):
                with self.subTest(writer=name, sandbox=sandbox):
                    r, ok = run(crash, sandbox), run(clean, sandbox)
                    got = (r["status"], r.get("exception"), r.get("line"), ok["status"])
                    self.assertEqual(got[:3], ("error", "KeyError", line), r)
                    self.assertEqual(ok["status"], "ok", ok)
                    if sandbox != "auto":
                        self.assertEqual(r["sandbox"], "fallback", r)
                    self.assertEqual(got, want or got)
                    want = got
                    self.assertEqual(self.outside(), before)

    def test_scratch_cap(self):
        """Past the scratch tree's cap (a quarter of the memory cap here) a cell is unknown,
        "scratch space is full", however it writes and even when it catches the error; the
        child killed in the middle of a write leaves no tree in the temporary directory."""
        p = os.path.join(self.dir, "big.bin")
        mb = "b'x' * (1 << 20)"
        cells = {
            "one_file": "f = open(%r, 'wb')\nfor i in range(400):\n    f.write(%s)\n" % (p, mb),
            "many_files": "for i in range(400):\n    open(%r + str(i), 'wb').write(%s)\n" % (p, mb),
            "caught": "try:\n    f = open(%r, 'wb')\n    for i in range(400):\n        f.write(%s)\nexcept OSError:\n"
                      "    pass\n" % (p, mb),
            "numpy_native": "np.zeros(1 << 24).tofile(%r)\n" % p,
            "copy_up": "import shutil\nopen(%r, 'wb').write(%s * 60)\nfor i in range(4):\n"
                       "    shutil.copy(%r, %r + str(i))\n" % (p, mb, p, p),
        }
        before = self.outside()
        for name, code in cells.items():
            with self.subTest(cell=name):
                r = shadow(code, sandbox="fallback", timeout=60, max_memory=256 << 20)
                self.assertEqual(r["status"], "refused", r)
                self.assertIn("scratch space is full (64 MB", r["reason"])
                self.assertEqual(self.outside(), before)
        ok = shadow("open(%r, 'wb').write(%s * 8)" % (p, mb), sandbox="fallback", timeout=60, max_memory=256 << 20)
        self.assertEqual(ok["status"], "ok", ok)
        for how in ("timeout", "sigkill"):
            with self.subTest(killed=how):
                code = "f = open(%r, 'wb')\nwhile True:\n    f.write(b'x' * 4096)\n    f.truncate(0)\n    f.seek(0)\n" % p
                if how == "sigkill":
                    code = "import os, signal\nopen(%r, 'wb').write(b'x' * 100000)\nos.kill(os.getpid(), signal.SIGKILL)\n" % p
                r = shadow(code, sandbox="fallback", timeout=2)
                self.assertIn(r["status"], ("timeout", "died"), r)
                self.assertEqual(self.outside(), before)
                self.assertEqual(scratch_trees(), [])

    def test_stale_tree_of_a_dead_kernel_removed(self):
        """A kernel killed while its child ran leaves its tree; the next kernel's first cleanup
        removes it (only trees of kernels that are gone)."""
        proc = subprocess.Popen(["true"])
        proc.wait()
        stale = os.path.join(tempfile.gettempdir(), "premortem-shadow-%d-1" % proc.pid)
        live = os.path.join(tempfile.gettempdir(), "premortem-shadow-%d-1" % os.getppid())
        for t in (stale, live):
            os.makedirs(os.path.join(t, "view"), exist_ok=True)
        try:
            M._swept[0] = None
            M._sandbox_cleanup(12345678)
            self.assertFalse(os.path.exists(stale))
            self.assertTrue(os.path.exists(live))
        finally:
            import shutil

            shutil.rmtree(stale, ignore_errors=True)
            shutil.rmtree(live, ignore_errors=True)

    def test_first_import_writers(self):
        """A writer module imported for the first time in the child is patched once loaded:
        a stand-in "torch" whose save, like the real one's native writer, takes no path."""
        fake = tempfile.mkdtemp(prefix="premortem-fake-torch-")
        os.mkdir(os.path.join(fake, "torch"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write("def save(obj, f):\n    if isinstance(f, str):\n        raise TypeError('a native writer')\n"
                    "    f.write(obj)\n")
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "torch" or k.startswith("torch.")}
        sys.path.insert(0, fake)
        try:
            p = os.path.join(self.dir, "f.pt")
            r = run("import torch\ntorch.save(b'x', %r)\nassert open(%r, 'rb').read() == b'x'" % (p, p), "fallback")
        finally:
            sys.path.remove(fake)
            sys.modules.pop("torch", None)
            sys.modules.update(saved)
        self.assertEqual(r["status"], "ok", r)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "f.pt")))

    def test_native_write_below_the_view_refused(self):
        """A C library opening a path itself is not in the view: refused, named, no file."""
        before = self.outside()
        r = run("import ctypes\nlibc = ctypes.CDLL(None)\nf = libc.fopen(%r.encode(), b'w')\nassert f"
                % os.path.join(self.dir, "c.txt"), "fallback")
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("open for writing outside the private view", r["refused"])
        self.assertEqual(self.outside(), before)


def library_cells(j):
    """Write-and-read-back cells for the writers whose C library opens paths (33_writers.py)."""
    cells = {
        "sqlite": "import sqlite3, os\nc = sqlite3.connect(%r)\nc.execute('create table t(a)')\n"
                  "c.execute('insert into t values (5)')\nc.commit()\nc.close()\n"
                  "assert sqlite3.connect(%r).execute('select a from t').fetchall() == [(5,)]\n"
                  "assert os.path.getsize(%r) > 0" % (j("n.db"), j("n.db"), j("n.db")),
        "sqlite_autocommit": "import sqlite3\nc = sqlite3.connect(%r)\nc.execute('create table t(a)')\n"
                             "assert sqlite3.connect(%r).execute('select count(*) from t').fetchone() == (0,)"
                             % (j("ac.db"), j("ac.db")),
        "to_sql": "import sqlite3\nwith sqlite3.connect(%r) as c:\n    df.to_sql('df', c, index=False)\n"
                  "assert len(pd.read_sql('select * from df', sqlite3.connect(%r))) == len(df)" % (j("s.db"), j("s.db")),
        "to_excel": "df.to_excel(%r, index=False)\nassert len(pd.read_excel(%r)) == len(df)" % (j("x.xlsx"), j("x.xlsx")),
    }
    if has("tables"):
        cells["to_hdf"] = "df.to_hdf(%r, 'df')\nassert len(pd.read_hdf(%r, 'df')) == len(df)\n" \
                          "with pd.HDFStore(%r) as st:\n    st.put('b', df)\n    assert sorted(st.keys()) == ['/b', '/df']" \
                          % (j("h.h5"), j("h.h5"), j("h.h5"))
    if has("h5py"):
        cells["h5py"] = "import h5py\nwith h5py.File(%r, 'w') as f:\n    f['a'] = arr\n" \
                        "with h5py.File(%r, 'r') as f:\n    assert f['a'].shape == arr.shape" % (j("a.h5"), j("a.h5"))
    if has("cv2"):
        cells["cv2"] = "import cv2\nassert cv2.imwrite(%r, np.zeros((4, 5, 3), np.uint8))\n" \
                       "assert cv2.imread(%r).shape == (4, 5, 3)" % (j("i.png"), j("i.png"))
    return cells


def library_twins(j):
    """name -> (crash, clean): a write, its read back, the line that crashes (a KeyError in the
    crash twin) and a write after it."""
    p = lambda ext: j("twin." + ext)  # noqa: E731
    twins = {
        "sqlite": ("import sqlite3\ndf.to_sql('df', sqlite3.connect(%r), index=False)\n"
                   "back = pd.read_sql('select * from df', sqlite3.connect(%r))\nback['score'].mean()\n"
                   "back.to_sql('df2', sqlite3.connect(%r))" % (p("db"), p("db"), p("db"))),
        "to_excel": ("df.to_excel(%r, index=False)\nback = pd.read_excel(%r)\nback['score'].mean()\n"
                     "back.to_excel(%r)" % (p("xlsx"), p("xlsx"), p("2.xlsx"))),
    }
    if has("tables"):
        twins["to_hdf"] = ("df.to_hdf(%r, 'df')\nback = pd.read_hdf(%r, 'df')\nback['score'].mean()\n"
                           "back.to_hdf(%r, 'b')" % (p("h5"), p("h5"), p("h5")))
    if has("h5py"):
        twins["h5py"] = ("import h5py; f = h5py.File(%r, 'w'); f['Age'] = df['Age'].values; f.close()\n"
                         "back = {k: v[()] for k, v in h5py.File(%r, 'r').items()}\nback['score']\n"
                         "h5py.File(%r, 'w')['x'] = arr" % (p("hdf5"), p("hdf5"), p("2.hdf5")))
    if has("cv2"):
        twins["cv2"] = ("import cv2\ncv2.imwrite(%r, np.zeros((4, 5, 3), np.uint8))\nback = {'Age': cv2.imread(%r)}\n"
                        "back['score']\ncv2.imwrite(%r, back['Age'])" % (p("png"), p("png"), p("2.png")))
    return {k: (c, c.replace("['score']", "['Age']")) for k, c in twins.items()}


def scratch_trees():
    """The fallback's scratch trees of this process's children still in the temporary dir."""
    pre = "premortem-shadow-%d-" % os.getpid()
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(pre)]


def run(code, sandbox):
    """A shadow run in the fallback: asked for, or because unshare is refused (EPERM); "auto"
    is the namespace sandbox where the machine allows it."""
    if sandbox == "fallback":
        return shadow(code, sandbox="fallback", timeout=30)
    if sandbox == "auto":
        return shadow(code, timeout=30)
    orig = M._ns_setup

    def refused(box, max_tmp):
        raise OSError(errno.EPERM, "Operation not permitted")

    M._ns_setup = refused
    try:
        return shadow(code, timeout=30)
    finally:
        M._ns_setup = orig


def undo(t):
    """Put back what a probe changed should it have got through (a build without the
    allow-list): the test must fail, the machine must not stay changed."""
    with open("/proc/sys/kernel/domainname") as f:
        if f.read().strip() == "premortem-probe":
            LIBC.setdomainname(b"(none)", 6)
    subprocess.run(["ip", "addr", "del", PROBE_ADDR + "/32", "dev", "lo"], capture_output=True)
    LIBC.umount2(t.mnt.encode(), 2)
    LIBC.acct(None)
    for flag in ("-M", "-Q", "-S"):
        subprocess.run(["ipcrm", flag, str(PROBE_KEY)], capture_output=True)
    LIBC.mq_unlink(b"/premortem-probe")
    LIBC.syscall.restype = ctypes.c_long
    key = LIBC.syscall(250, 10, -4, b"user", b"premortem-probe", 0)  # KEYCTL_SEARCH the user keyring
    if key > 0:
        LIBC.syscall(250, 9, key, -4)  # KEYCTL_UNLINK
    try:
        os.chmod(t.file, 0o640)
        os.removexattr(t.file, "user.premortem")
    except OSError:
        pass
    try:
        os.remove(os.path.join(t.dir, "native.txt"))
    except OSError:
        pass


def has(mod):
    try:
        __import__(mod)
        return True
    except Exception:
        return False


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=2)
