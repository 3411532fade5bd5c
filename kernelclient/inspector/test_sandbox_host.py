"""Tests of what the namespace sandbox (31_sandbox.py) shares with the host, each observing
the host from outside the shadow child: a SysV segment the kernel holds, the host's IPC
objects (/proc/sysvipc, POSIX message queues), the domainname, the cgroup hierarchies, a
pseudo-terminal's bytes and termios, /proc/keys, host shared memory, and the scratch
space's size. Each cell is a probe a hostile or unlucky cell could run; the child's own
view does not matter, only what is left outside.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_sandbox_host.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import ctypes
import errno
import os
import select
import sys
import termios
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import M, SETUP, SH, shadow  # noqa: E402  (the module as kernelclient embeds it)

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.shmat.restype = ctypes.c_void_p
LIBC.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
LIBC.shmdt.argtypes = [ctypes.c_void_p]
LIBC.syscall.restype = ctypes.c_long
IPC_CREAT, IPC_RMID = 0o1000, 0
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)


def _mq_lib():
    for name in (None, "librt.so.1"):
        try:
            lib = ctypes.CDLL(name, use_errno=True)
            lib.mq_open  # noqa: B018  (glibc >= 2.34 has it in libc)
            return lib
        except (OSError, AttributeError):
            continue
    return None


MQ = _mq_lib()


def sysvipc_keys(kind):
    """The keys (decimal) of the host's SysV objects of one kind, read from /proc/sysvipc
    (what `ipcs` shows)."""
    with open("/proc/sysvipc/" + kind) as f:
        rows = f.read().splitlines()[1:]
    return {int(r.split()[0]) for r in rows if r.split()}


def sysvipc_ids(kind, key):
    with open("/proc/sysvipc/" + kind) as f:
        rows = [r.split() for r in f.read().splitlines()[1:]]
    return [int(r[1]) for r in rows if r and int(r[0]) == key]


def cgroup_tree():
    """Every directory and file name under /sys/fs/cgroup two levels down."""
    out = set()
    for root, dirs, files in os.walk("/sys/fs/cgroup"):
        if root.count("/") > 5:
            dirs[:] = []
        out.add(root)
        out.update(os.path.join(root, n) for n in files)
    return out


class HostTest(unittest.TestCase):
    """Nothing the child could change is shared with the host."""

    @classmethod
    def setUpClass(cls):
        SH.run_cell(SETUP, store_history=True).raise_error()
        cls.probe = __import__("json").loads(repr(M.sandbox_probe()))
        # not "premortem-probe": kernelclient's sandbox test, which go test may run at the same
        # time, watches /dev/shm for that name and ignores this prefix
        cls.tag = "premortem-hosttest-%s" % uuid.uuid4().hex[:8]

    def setUp(self):
        if self.probe["sandbox"] != "namespaces":
            self.skipTest("no namespace sandbox here: %s" % self.probe["sandbox_reason"])

    def test_kernel_sysv_segment_untouched(self):
        """A target cell attaches the kernel's own SysV segment by its key and writes it."""
        key = 0x5EED0000 | (os.getpid() & 0xFFFF)
        sid = LIBC.shmget(key, 4096, IPC_CREAT | 0o600)
        self.assertGreaterEqual(sid, 0, os.strerror(ctypes.get_errno()))
        addr = LIBC.shmat(sid, None, 0)
        self.addCleanup(LIBC.shmctl, sid, IPC_RMID, None)
        self.addCleanup(LIBC.shmdt, addr)
        ctypes.memmove(addr, b"ORIGINAL", 8)
        SH.user_ns["probe_key"] = key
        cell = ("import ctypes\nlib = ctypes.CDLL(None)\nlib.shmat.restype = ctypes.c_void_p\n"
                "sid = lib.shmget(probe_key, 4096, 0)\nif sid >= 0:\n"
                "    a = lib.shmat(sid, None, 0)\n    if a not in (None, ctypes.c_void_p(-1).value):\n"
                "        ctypes.memmove(a, b'SHADOWED', 8)\nx = 1")
        r = shadow(cell)
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(ctypes.string_at(addr, 8), b"ORIGINAL")

    def test_ipc_objects_die_with_the_run(self):
        """SysV segments, semaphores, message queues and a POSIX mqueue the cell creates."""
        key = 0x5EED0000 | ((os.getpid() + 1) & 0xFFFF)
        name = "/" + self.tag
        before = {k: sysvipc_keys(k) for k in ("shm", "sem", "msg")}
        cell = ("import ctypes\nlib = ctypes.CDLL(None)\nK = %d\n"
                "lib.shmget(K, 4096, 0o1600)\nlib.semget(K, 1, 0o1600)\nlib.msgget(K, 0o1600)\n"
                "try:\n    rt = ctypes.CDLL(None); rt.mq_open\nexcept AttributeError:\n    rt = ctypes.CDLL('librt.so.1')\n"
                "rt.mq_open(%r.encode(), 0o102, 0o600, None)\nx = 1" % (key, name))
        r = shadow(cell)
        for kind, rm in (("shm", lambda i: LIBC.shmctl(i, IPC_RMID, None)), ("sem", lambda i: LIBC.semctl(i, 0, IPC_RMID)),
                         ("msg", lambda i: LIBC.msgctl(i, IPC_RMID, None))):
            for i in sysvipc_ids(kind, key):
                self.addCleanup(rm, i)  # a leak must not outlive the test
        self.assertEqual(r["status"], "ok", r)
        for kind in ("shm", "sem", "msg"):
            self.assertNotIn(key, sysvipc_keys(kind) - before[kind], kind)
        if MQ is not None:
            fd = MQ.mq_open(name.encode(), 0)
            if fd >= 0:
                os.close(fd)
                MQ.mq_unlink(name.encode())
            self.assertEqual((fd, ctypes.get_errno() if fd < 0 else 0), (-1, errno.ENOENT), "the POSIX mqueue outlived the run")

    def test_kernel_settings_untouched(self):
        """/proc/sys (the domainname, uid 0 may write it) and the cgroup hierarchies under
        /sys/fs/cgroup."""
        with open("/proc/sys/kernel/domainname") as f:
            domain = f.read()
        cgroups = cgroup_tree()
        tag = self.tag
        cell = ("import os, ctypes\ntry:\n    open('/proc/sys/kernel/domainname', 'w').write(%r)\nexcept OSError:\n    pass\n"
                "try:\n    ctypes.CDLL(None).setdomainname(b'%s-2', %d)\nexcept OSError:\n    pass\n"
                "for root, dirs, files in os.walk('/sys/fs/cgroup'):\n    dirs[:] = []\n"
                "    for d in [root] + [os.path.join(root, d) for d in os.listdir(root)]:\n"
                "        for f in (lambda: os.mkdir(os.path.join(d, %r)), lambda: open(os.path.join(d, %r), 'w').close()):\n"
                "            try:\n                f()\n            except OSError:\n                pass\nx = 1"
                % (tag, tag, len(tag) + 2, tag, tag + ".file"))
        r = shadow(cell, timeout=20)
        with open("/proc/sys/kernel/domainname") as f:
            after = f.read()
        if after != domain:
            with open("/proc/sys/kernel/domainname", "w") as f:
                f.write(domain)
        leaked = cgroup_tree() - cgroups
        for p in sorted(leaked, reverse=True):
            try:
                os.rmdir(p) if os.path.isdir(p) else os.remove(p)
            except OSError:
                pass
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(sorted(leaked), [], "cgroups or files were created on the host")
        self.assertEqual(after, domain)

    def test_terminal_untouched(self):
        """A pty the kernel holds open (read-write and read-only descriptors, and its
        /dev/pts path): no byte reaches it, its termios stay, nothing is pushed into its
        input, and /dev/tty is not the kernel's terminal."""
        master, slave = os.openpty()
        path = os.ttyname(slave)
        ro = os.open(path, os.O_RDONLY | os.O_NOCTTY)
        for fd in (master, slave, ro):
            self.addCleanup(os.close, fd)
        before = termios.tcgetattr(slave)
        SH.user_ns.update(tty_fd=slave, tty_ro=ro, tty_path=path)
        cell = ("import os, termios, fcntl\n"
                "def attempt(f):\n    try:\n        f()\n    except (OSError, termios.error):\n        pass\n"
                "def quiet(fd):\n    a = termios.tcgetattr(fd)\n    a[3] &= ~termios.ECHO\n    termios.tcsetattr(fd, termios.TCSANOW, a)\n"
                "for fd in (tty_fd, tty_ro):\n"
                "    attempt(lambda: os.write(fd, b'LEAK1'))\n    attempt(lambda: quiet(fd))\n"
                "    attempt(lambda: fcntl.ioctl(fd, termios.TIOCSTI, b'x'))\n"
                "def by_path(p):\n    fd = os.open(p, os.O_RDWR | os.O_NOCTTY)\n    os.write(fd, b'LEAK2')\n    quiet(fd)\n"
                "attempt(lambda: by_path(tty_path))\nattempt(lambda: by_path('/dev/tty'))\nx = 1")
        r = shadow(cell)
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(termios.tcgetattr(slave), before)
        for fd, what in ((master, "output"), (slave, "input")):
            os.set_blocking(fd, False)
            got = b""
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    got = os.read(fd, 4096)
                except OSError:
                    pass
            self.assertEqual(got, b"", "bytes reached the terminal's %s" % what)

    def test_keys_not_left_behind(self):
        """add_key into the session, user and user-session keyrings: refused, and no key in
        /proc/keys afterwards."""
        if _KEYCTL is None or not os.path.exists("/proc/keys"):
            self.skipTest("no keyrings here")
        add_key = _KEYCTL - 2
        cell = ("import ctypes\nlib = ctypes.CDLL(None)\nlib.syscall.restype = ctypes.c_long\n"
                "for ring in (-3, -4, -5):\n"
                "    lib.syscall(%d, b'user', b'%s', b'secret', ctypes.c_size_t(6), ctypes.c_long(ring))\nx = 1"
                % (add_key, self.tag))
        r = shadow(cell)
        with open("/proc/keys") as f:
            left = [line for line in f if self.tag in line]
        for line in left:
            LIBC.syscall(_KEYCTL, 21, int(line.split()[0], 16))  # KEYCTL_INVALIDATE a leak
        self.assertEqual(left, [])
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("keyring call", r["reason"])

    def test_host_shared_memory_untouched(self):
        """A POSIX shared-memory object of the kernel (/dev/shm), opened and written through
        a shared mapping by the cell."""
        p = "/dev/shm/" + self.tag
        with open(p, "wb") as f:
            f.write(b"ORIGINAL".ljust(4096, b"\0"))
        self.addCleanup(os.remove, p)
        cell = ("import mmap, os\nfd = os.open(%r, os.O_RDWR)\nm = mmap.mmap(fd, 4096)\nm[:8] = b'SHADOWED'\nm.flush()\n"
                "open(%r, 'w').write('x')" % (p, p + ".new"))
        r = shadow(cell)
        self.assertEqual(r["status"], "ok", r)
        with open(p, "rb") as f:
            self.assertEqual(f.read(8), b"ORIGINAL")
        self.assertFalse(os.path.exists(p + ".new"))

    def test_scratch_space_is_bounded(self):
        """Writes to /, the cwd and /tmp all come out of one tmpfs of a quarter of the memory
        cap (64 MB of 256 MB): a cell writing more is unknown, with the reason."""
        chunk = "b'\\0' * (1 << 20)"
        for where in ("/", os.getcwd(), "/tmp"):
            with self.subTest(where):
                cell = "with open(%r, 'wb') as f:\n    for _ in range(200):\n        f.write(%s)" % (
                    os.path.join(where, self.tag + ".big"), chunk)
                r = shadow(cell, timeout=20, max_memory=256 << 20)
                self.assertEqual(r["status"], "refused", r)
                self.assertIn("scratch space is full (64 MB", r["reason"])
                self.assertFalse(os.path.exists(os.path.join(where, self.tag + ".big")))


class BigCellTest(unittest.TestCase):
    """A 16,000-line cell that starts with a blank line: the kernel's side of the shadow run
    (transform, line map; compile goes to the child) is linear, and lines still map right."""

    def test_big_cell_lines(self):
        body = "".join("x%d = %d\n" % (i, i) for i in range(16000))
        cases = {"raise": (body + "raise ValueError(x3)\n", "ValueError"),
                 "syntax": (body + "y = (\nz = x5\n", "SyntaxError")}
        for name, (cell, exc) in cases.items():
            with self.subTest(name):
                lmap = M._line_map("\n" + cell, M._transform(SH, "\n" + cell))
                self.assertEqual((lmap[1], lmap[16001]), (2, 16002))
                r = shadow("\n" + cell, timeout=20)
                self.assertEqual((r["status"], r.get("exception"), r.get("line")), ("error", exc, 16002), r)

    def test_linear_map_matches_difflib_on_small_cells(self):
        import difflib

        for code in ("\nx = 1\n%time y = 2\nprint(x)", "%matplotlib inline\n\n!ls\nx = 1\ny = x?", "\n\n  \nx = 1"):
            t = SH.transform_cell(code)
            a, b = code.split("\n"), t.rstrip("\n").split("\n")
            while a and not a[-1].strip():
                a.pop()
            m = {}
            for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
                for j in range(j1, j2):
                    m[j + 1] = min(i1 + (j - j1), max(i1, i2 - 1)) + 1
            self.assertEqual(M._line_map(code, t), m if len(a) != len(b) else None, code)
            ops = M._line_map_linear(a, b)
            self.assertEqual(len(ops), len(b))


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=2)
