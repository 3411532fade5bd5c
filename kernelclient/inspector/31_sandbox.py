# ---------------------------------------------------------------------------------------------
# Shadow runs: the child's sandbox
#
# Two sandboxes, chosen per run by the `sandbox` option of shadow() ("auto" or "fallback"):
#
# namespaces  The forked child C enters new user, mount, network and PID namespaces
#             (unshare(2): C is single-threaded, fork copies only the calling thread). Every
#             writable mount of /proc/self/mountinfo is mirrored into a new root as an overlay
#             whose upper layer is a throwaway tmpfs; read-only mounts, /dev, /sys and file
#             mounts are bind-mounted; C pivots into that root. C then forks the cell's
#             process G, pid 1 of the new PID namespace, which mounts a fresh /proc and runs
#             the cell. When G ends, the kernel kills every process in the namespace (joblib
#             workers, DataLoader workers, `!cmd` children), and the overlays' upper layers
#             vanish with the mount namespace. The network namespace is empty (loopback up):
#             a download fails at once with ENETUNREACH/EAI_AGAIN and is reported as "the cell
#             needs the network", never as a crash. C only relays G's exit status; the parent's
#             reaper kills C's process group, G included, and G's death ends the namespace.
# fallback    Where unshare fails (EPERM: unprivileged user namespaces restricted, as with
#             Ubuntu's AppArmor setting or in containers; EINVAL/ENOSYS; not Linux) or was
#             asked for: file writes go to a private, capped copy-on-write view in a scratch
#             directory (33_view, 33_writers; _Scratch and _Quota in 33_fallback); the audit
#             hook (42_guards), patched native writers (41_native) and the seccomp allow-list
#             (29_seccomp, installed by 45_child) refuse sockets, processes and every write
#             that does not go through the view. To still judge common cells, parallelism runs
#             sequentially (joblib n_jobs=1, DataLoader num_workers=0).
#
# In both, what the kernel had open before the fork is contained (_contain, 32_contain): file
# descriptors open for writing point to private copies or to a sink, read descriptors get
# their own file offset, and writable MAP_SHARED mappings become private copies.

import errno as _errno

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_SCRATCH_FD = 987  # the fallback's scratch directory (the seccomp filter allows writes through it)
_SMALL_FILE = 64 << 20  # inherited writable files up to this size are copied into memory
_SHM_COPY_LIMIT = 1 << 30  # shared anonymous memory copied privately, in all

# Filesystems bind-mounted into the new root as they are (no overlay): pseudo filesystems
# and devices (an overlay mounted in a user namespace is nodev: /dev/null would stop working).
_BIND_FS = frozenset(["proc", "sysfs", "cgroup", "cgroup2", "devpts", "devtmpfs", "mqueue", "securityfs",
                      "debugfs", "tracefs", "bpf", "pstore", "configfs", "fusectl", "binfmt_misc", "hugetlbfs",
                      "autofs", "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs", "fuse.gvfsd-fuse"])

# Mounted as new instances in place of the kernel's (the kernel's would be writable).
_FRESH_FS = {"devpts": ("newinstance,ptmxmode=0666,mode=620", _MS_NOSUID | _MS_NOEXEC),
             "mqueue": (None, _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)}

_DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
              ("stderr", "/proc/self/fd/2"), ("ptmx", "pts/ptmx"))

_NET_ERRNOS = frozenset([_errno.ENETUNREACH, _errno.ECONNREFUSED, _errno.EHOSTUNREACH, _errno.EADDRNOTAVAIL,
                         _errno.ENETDOWN, _errno.ECONNRESET, _errno.ETIMEDOUT])


class _Box(object):
    """Which sandbox the child runs in, and what it learned while setting it up."""

    __slots__ = ("kind", "reason", "ro_mounts", "sealed", "scratch", "phases", "scratch_bytes")

    def __init__(self, kind, reason):
        self.kind = kind
        self.reason = reason
        self.ro_mounts = []  # mounts the sandbox could not overlay (bind-mounted read-only)
        self.sealed = {}  # fd -> path of large inherited files the cell may read but not write
        self.scratch = None
        self.phases = {}
        self.scratch_bytes = 0  # the cap on what the cell may write: the namespace sandbox's tmpfs (taken from
        # the memory cap) or the fallback's tree on disk (_Quota)


_NS_REASON = ("the shadow child runs in new user, mount, network and PID namespaces: its writes land in a "
              "throwaway overlay, it has no network, and every process it starts dies with it")
_FALLBACK_TAIL = ("; fallback: file writes emulated in a private view; network and subprocesses refused; "
                  "parallelism runs sequentially")


def _libc():
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)
    lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    lib.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.unshare.argtypes = [ctypes.c_int]
    return lib


def _oserr(what):
    import ctypes

    e = ctypes.get_errno()
    return OSError(e, "%s: %s" % (what, os.strerror(e)))


def _mount(lib, src, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else (s if isinstance(s, bytes) else s.encode())  # noqa: E731
    if lib.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise _oserr("mount %s on %s" % (fstype or src, target))


def _unescape(s):
    """mountinfo escapes space, tab, newline and backslash as \\ooo."""
    if "\\" not in s:
        return s
    import re

    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def _mounts():
    """(mountpoint, fstype, read_only) of the visible mounts, parents first, the top one of a
    stack of mounts on one mountpoint only."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            a = left.split()
            b = right.split()
            if len(a) < 6 or not b:
                continue
            mp = _unescape(a[4])
            out.append((mp, b[0], "ro" in a[5].split(",")))
    seen = {}
    for i, m in enumerate(out):
        seen[m[0]] = i  # a later mount on the same point covers the earlier one
    return [m for i, m in enumerate(out) if seen[m[0]] == i]


def _write(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _pivot(lib, new_root, put_old):
    import ctypes

    nr = {"x86_64": 155, "aarch64": 41, "arm64": 41}.get(os.uname().machine)
    if nr is None:
        return False
    lib.syscall.restype = ctypes.c_long
    return lib.syscall(ctypes.c_long(nr), ctypes.c_char_p(new_root.encode()), ctypes.c_char_p(put_old.encode())) == 0


def _lo_up():
    """Bring up loopback in the new network namespace (servers a cell starts on localhost)."""
    import fcntl
    import socket
    import struct

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s.fileno(), 0x8913, ifr))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))  # SIOCSIFFLAGS IFF_UP
    finally:
        s.close()


def _ns_setup(box, max_tmp):
    """In C: enter the namespaces and pivot into the overlay root. Raises OSError where the
    machine does not allow it (the namespaces are C's alone: nothing outside has changed)."""
    if not sys.platform.startswith("linux"):
        raise OSError(_errno.ENOSYS, "namespaces are Linux-only")
    t = time.perf_counter()
    lib = _libc()
    uid, gid = os.getuid(), os.getgid()
    cwd = os.getcwd()
    # IPC: SysV segments, semaphores, message queues and POSIX mqueues of the kernel's
    # namespace stay out of reach, and those the cell creates die with it. UTS: a
    # sethostname/setdomainname stays inside.
    if lib.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        raise _oserr("unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", "%d %d 1" % (uid, uid))
    _write("/proc/self/gid_map", "%d %d 1" % (gid, gid))
    box.phases["unshare"] = time.perf_counter() - t
    t = time.perf_counter()
    _mount(lib, None, "/", None, _MS_REC | _MS_PRIVATE)
    plan = _plan_root(_mounts())
    stage = "/tmp"
    try:
        _mount(lib, "premortem", stage, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=755,size=%d" % max_tmp)
        try:
            _build_root(box, lib, stage, plan, cwd)
        except BaseException:
            lib.umount2(stage.encode(), _MNT_DETACH)  # the child falls back with the kernel's view
            raise
    finally:
        for op in plan:
            if op[2] is not None:
                os.close(op[2])
    box.phases["overlay"] = time.perf_counter() - t


def _plan_root(mounts):
    """The new root as a list of (op, path, fd, info), parents first. The staging tmpfs will
    cover /tmp, so every source is held as an O_PATH descriptor opened now.

    An overlay (or a non-recursive bind) of a directory below which the kernel's namespace
    has other mounts is refused in a user namespace ("locked" child mounts: it would reveal
    what they cover). So the root is a tmpfs, and each tree is overlaid where it holds no
    mountpoint: "/" itself is walked down to the entries that hold none (bin, etc, home,
    usr, ...), mounts with submounts are walked the same way, pseudo filesystems are
    bind-mounted recursively with the writable mounts below them (/dev/shm) overlaid on top.
    """
    info = {mp: (fstype, ro) for mp, fstype, ro in mounts}
    points = sorted(info)
    plan = []

    def has_below(p):
        pre = p.rstrip("/") + "/"
        return any(m.startswith(pre) for m in points)

    def src(p):
        return os.open(p, os.O_PATH | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))

    def walk(d):
        try:
            names = os.listdir(d)
        except OSError:
            return
        for name in names:
            p = os.path.join(d, name)
            if p in info:
                mount_at(p)
                continue
            try:
                st = os.lstat(p)
            except OSError:
                continue
            import stat as _st

            if _st.S_ISLNK(st.st_mode):
                plan.append(("symlink", p, None, os.readlink(p)))
            elif _st.S_ISDIR(st.st_mode):
                if has_below(p):
                    plan.append(("mkdir", p, None, st.st_mode & 0o7777))
                    walk(p)
                else:
                    plan.append(("overlay", p, src(p), None))
            elif _st.S_ISREG(st.st_mode):
                plan.append(("file", p, src(p), st.st_size))

    covered = []

    def mount_at(p):
        fstype, ro = info[p]
        if p == "/dev" and fstype in ("devtmpfs", "tmpfs"):
            # A minimal /dev, as containers have: the kernel's disks and other devices stay
            # out of reach (a device node is writable through a read-only mount).
            plan.append(("mkdir", p, None, os.stat(p).st_mode & 0o7777))
            for name in _DEV_NODES:
                if os.path.exists("/dev/" + name):
                    plan.append(("dev", "/dev/" + name, src("/dev/" + name), None))
            for name, to in _DEV_LINKS:
                plan.append(("symlink", "/dev/" + name, None, to))
            pre = "/dev/"
            for m in points:
                if m.startswith(pre):
                    mount_at(m)  # pts, shm (overlaid), mqueue, hugepages
            return
        if fstype in _FRESH_FS and os.path.isdir(p):
            # The kernel's terminals and message queues are not reachable: a new, empty
            # instance (ptys a cell opens are its own; mq_open uses the new IPC namespace).
            plan.append(("fresh", p, None, fstype))
            return
        for c in covered:
            if p.startswith(c.rstrip("/") + "/"):
                if not ro and fstype not in _BIND_FS and os.path.isdir(p) and not has_below(p):
                    plan.append(("overlay", p, src(p), None))  # /dev/shm over the bind of /dev
                return
        if not os.path.isdir(p):
            plan.append(("bind", p, src(p), "file"))
        elif fstype in _BIND_FS or ro:
            plan.append(("rbind", p, src(p), (fstype, ro)))
            covered.append(p)
            pre = p.rstrip("/") + "/"
            for m in points:
                if m.startswith(pre):
                    mount_at(m)  # the writable ones below (/dev/shm) get an overlay on top
        elif has_below(p):
            plan.append(("mkdir", p, None, os.stat(p).st_mode & 0o7777))
            walk(p)
        else:
            plan.append(("overlay", p, src(p), None))

    if "/" in info and info["/"][1] and not has_below("/"):
        plan.append(("rbind", "/", src("/"), info["/"]))
    else:
        walk("/")
    return plan


def _build_root(box, lib, stage, plan, cwd):
    root = stage + "/root"
    os.mkdir(root, 0o755)
    os.chmod(root, 0o755)
    # One tmpfs holds every writable layer (the root's own entries and each overlay's upper
    # layer), so its size= bounds all a cell can write; the bind makes the root a mount
    # point for pivot_root.
    _mount(lib, root, root, None, _MS_BIND)
    os.mkdir(stage + "/up")
    n = 0
    for op, p, fd, extra in plan:
        target = root + p
        s = "/proc/self/fd/%d" % fd if fd is not None else None
        if op == "symlink":
            os.symlink(extra, target)
        elif op == "mkdir":
            if not os.path.isdir(target):
                os.mkdir(target)
            os.chmod(target, extra)
        elif op == "overlay":
            if not os.path.isdir(target):
                os.mkdir(target)
            up, work = "%s/up/%d" % (stage, n), "%s/up/w%d" % (stage, n)
            n += 1
            os.mkdir(up)
            os.mkdir(work)
            opts = "lowerdir=%s,upperdir=%s,workdir=%s" % (s, up, work)
            try:
                # userxattr: in a user namespace trusted.* xattrs are not settable, and without
                # them removing a directory that holds whiteouts fails with EIO
                _mount(lib, "overlay", target, "overlay", 0, opts + ",userxattr")
            except OSError:
                try:
                    _mount(lib, "overlay", target, "overlay", 0, opts)
                except OSError:
                    _mount(lib, s, target, None, _MS_BIND | _MS_REC)
                    _ro(lib, target)
                    box.ro_mounts.append(p)
        elif op == "file":
            if extra <= (1 << 20):
                with open(s, "rb") as f, open(target, "wb") as g:  # small: a throwaway copy
                    g.write(f.read())
                os.chmod(target, os.stat(s).st_mode & 0o7777)
            else:
                open(target, "wb").close()
                _mount(lib, s, target, None, _MS_BIND)
                _ro(lib, target)
                box.ro_mounts.append(p)
        elif op == "fresh":
            if not os.path.isdir(target):
                os.mkdir(target)
            data, flags = _FRESH_FS[extra]
            try:
                _mount(lib, extra, target, extra, flags, data)
            except OSError:
                pass  # an empty directory: no terminals / no mqueue view, nothing of the kernel's
        elif op == "dev":
            open(target, "wb").close()
            _mount(lib, s, target, None, _MS_BIND)
        elif op in ("bind", "rbind"):
            if extra == "file":
                if not os.path.exists(target):
                    open(target, "wb").close()
            elif not os.path.isdir(target):
                os.mkdir(target)
            _mount(lib, s, target, None, _MS_BIND | (_MS_REC if op == "rbind" else 0))
            fstype, ro = extra if isinstance(extra, tuple) else ("", False)
            if not ro and fstype not in ("proc", "devpts", "mqueue", "cgroup", "cgroup2"):
                _ro(lib, target)  # devices on a read-only mount still work
                if fstype not in _BIND_FS:
                    box.ro_mounts.append(p)
    _ro_below(lib, root)
    old = root + "/.premortem-old-root"
    os.mkdir(old)
    if _pivot(lib, root, old):
        os.chdir("/")
        lib.umount2(b"/.premortem-old-root", _MNT_DETACH)
        try:
            os.rmdir("/.premortem-old-root")
        except OSError:
            pass
    else:
        os.chroot(root)
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    try:
        _lo_up()
    except OSError:
        pass


def _ro_below(lib, root):
    """Every mount of the new root that is not a throwaway layer becomes read-only, one by
    one: a read-only bind is not recursive, and the submounts of /sys (cgroup hierarchies,
    debugfs, securityfs) and of /dev would stay writable. /proc is left alone here: G mounts
    a fresh one and makes its kernel-wide files read-only (_ro_proc). Fails closed: a mount
    that cannot be made read-only ends the namespace sandbox (the run falls back)."""
    pre = root.rstrip("/") + "/"
    with open("/proc/self/mountinfo") as f:
        lines = f.read().splitlines()
    for line in lines:
        left, _, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if len(a) < 6 or len(b) < 2:
            continue
        mp, fstype, opts = _unescape(a[4]), b[0], a[5].split(",")
        if not mp.startswith(pre) or "ro" in opts:
            continue
        inner = mp[len(root):]
        if fstype == "overlay" or (fstype == "tmpfs" and b[1] == "premortem") or fstype in _FRESH_FS \
                or inner == "/proc":
            continue  # the throwaway layers, the fresh instances; /proc is G's (_ro_proc)
        try:
            _mount(lib, None, mp, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _mount_flags(opts))
        except OSError as e:
            if os.path.isdir(mp) or os.path.exists(mp):
                raise OSError(e.errno, "read-only remount of %s: %s" % (inner, e.strerror))


def _mount_flags(opts):
    """The per-mount flags a remount must keep (dropping a locked one fails with EPERM)."""
    f = 0
    for name, bit in (("nosuid", _MS_NOSUID), ("nodev", _MS_NODEV), ("noexec", _MS_NOEXEC)):
        if name in opts:
            f |= bit
    for name, bit in (("noatime", 1024), ("nodiratime", 2048), ("relatime", 1 << 21)):
        if name in opts:
            f |= bit
    return f


# Files of a fresh /proc that act on the whole machine (sysctls, the SysRq trigger, IRQ
# affinity, bus and filesystem settings): the kernel lets uid 0 write them, and uid 0 of
# the sandbox is uid 0 outside, so they are bound read-only over themselves.
_PROC_RO = ("sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "driver")


def _ro_proc(lib):
    """G: /proc's kernel-wide files read-only. Where /proc/sys cannot be made read-only,
    /proc goes away (cells rarely need it; writing the kernel's settings must not work)."""
    for name in _PROC_RO:
        p = "/proc/" + name
        if not os.path.exists(p):
            continue
        try:
            _mount(lib, p, p, None, _MS_BIND | _MS_REC)
            _mount(lib, None, p, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        except OSError:
            if name == "sys":
                lib.umount2(b"/proc", _MNT_DETACH)
                return False
    return True


def _ro(lib, target):
    try:
        _mount(lib, None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
    except OSError:
        pass


def _die_with(parent_pid=None, alive_fd=None):
    """A forked child: killed when its parent dies (PR_SET_PDEATHSIG), and gone at once if the
    parent died before the signal was armed (between fork and prctl the child is an orphan
    nothing kills: a kernel killed at that moment left a shadow child running the cell, in its
    own session, holding the kernel's copy of premortem's stderr). The parent is checked by
    pid (parent_pid, taken before the fork) or, for pid 1 of a new PID namespace whose parent
    is out of sight (getppid() is 0), by the end of a pipe only the parent holds open
    (alive_fd: end of file there means the parent is gone)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except BaseException:
        pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(70)
    if alive_fd is not None:
        import select

        try:
            readable, _, _ = select.select([alive_fd], [], [], 0)
        except (OSError, ValueError):
            readable = [alive_fd]
        if readable:  # the parent never writes: readable is end of file
            os._exit(70)


def _relay(pid):
    """C after forking G: wait for G and end the same way (the parent reads C's status)."""
    import signal

    while True:
        try:
            _, st = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(70)
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        try:
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 70)


# Key-management syscalls per audit architecture: add_key, request_key, keyctl.
_KEY_SYSCALLS = ((0xC000003E, (248, 249, 250)), (0x40000003, (286, 287, 288)), (0xC00000B7, (217, 218, 219)))


def _fence_keyrings():
    """G: a fresh anonymous session keyring (keys the kernel's session holds are out of
    reach), then a seccomp filter of the sandbox's own that kills the run on add_key,
    request_key and keyctl: keys live in the kernel, outside every namespace, and would
    outlive the run. The parent reports the kill (SIGSYS) as a refused side effect. Filters
    stack: the fallback's backstop (45_child) is not involved. Returns why not, or ""."""
    import ctypes

    lib = ctypes.CDLL(None, use_errno=True)
    lib.syscall.restype = ctypes.c_long
    arch = {"x86_64": 0, "i386": 1, "i686": 1, "aarch64": 2, "arm64": 2}.get(os.uname().machine)
    if arch is None:
        return "key-management calls not refused on %s" % os.uname().machine
    keyctl = _KEY_SYSCALLS[arch][1][2]
    joined = lib.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), ctypes.c_void_p(None)) >= 0  # JOIN_SESSION_KEYRING
    join_err = ctypes.get_errno()
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    prog = []  # (code, jump-if-true label, jump-if-false label, k); labels resolved below
    for i, (audit, nrs) in enumerate(_KEY_SYSCALLS):
        prog += [(ld, None, None, 4), (jeq, None, "arch%d" % (i + 1), audit), (ld, None, None, 0)]
        if audit == 0xC000003E:
            prog.append((jge, "kill", None, 0x40000000))  # the x32 ABI: killed outright
        prog += [(jeq, "kill", None, nr) for nr in nrs]
        prog += [(ret, None, None, 0x7FFF0000), ("arch%d" % (i + 1),)]
    prog += [(ret, None, None, 0x7FFF0000), ("kill",), (ret, None, None, 0x80000000)]  # KILL_PROCESS
    where, n = {}, 0
    for ins in prog:
        if len(ins) == 1:
            where[ins[0]] = n
        else:
            n += 1
    code, n = [], 0
    for ins in prog:
        if len(ins) == 1:
            continue
        off = lambda lab: 0 if lab is None else where[lab] - n - 1  # noqa: E731
        code.append((ins[0], off(ins[1]), off(ins[2]), ins[3]))
        n += 1
    if not _seccomp_install(lib, code):
        return "key-management calls not refused: seccomp filter refused (%s)" % os.strerror(ctypes.get_errno())
    return "" if joined else "no fresh session keyring: %s" % os.strerror(join_err)


def _seccomp_install(lib, code):
    """Install a classic BPF seccomp filter [(code, jt, jf, k)]. As root of its user
    namespace G may install it without no_new_privs; where that is refused, no_new_privs is
    set (setuid programs then run without their privileges, which they never had here)."""
    import ctypes

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    arr = (Filter * len(code))(*[Filter(*x) for x in code])
    fprog = Prog(len(code), ctypes.cast(arr, ctypes.POINTER(Filter)))
    if lib.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return True
    lib.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    return lib.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0


def _fresh_proc(box, lib):
    """G: a /proc of the new PID namespace in place of the kernel's. Mounting it needs a
    fully visible procfs in the mount namespace (the bind of the kernel's one); that bind is
    then removed so unmounting the fresh one cannot reveal the kernel's processes."""
    tmp = "/.premortem-proc"
    try:
        os.mkdir(tmp)
        _mount(lib, "proc", tmp, "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    except OSError:
        box.phases["proc_kept_kernel_bind"] = 0.0  # pids are still private; /proc shows the kernel's
        return
    lib.umount2(b"/proc", _MNT_DETACH)
    _mount(lib, tmp, "/proc", None, 8192)  # MS_MOVE
    try:
        os.rmdir(tmp)
    except OSError:
        pass


def _lock_mounts():
    """G: enter one more user and mount namespace. Mounts copied into a less privileged
    namespace are locked: the read-only binds cannot be made writable again and no mount can
    be removed to reveal what it covers, whatever the cell does as root of its namespace."""
    lib = _libc()
    uid, gid = os.getuid(), os.getgid()
    if lib.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        raise _oserr("unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", "%d %d 1" % (uid, uid))
    _write("/proc/self/gid_map", "%d %d 1" % (gid, gid))


def _fallback_reason(e):
    en = getattr(e, "errno", None)
    msg = str(getattr(e, "strerror", None) or e)
    if en in (_errno.EPERM, _errno.EACCES):
        why = "unprivileged user namespaces are not allowed here"
        try:
            with open("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") as f:
                if f.read().strip() == "1":
                    why += " (AppArmor's kernel.apparmor_restrict_unprivileged_userns is 1)"
        except OSError:
            pass
        return "%s (unshare: %s)" % (why, os.strerror(en))
    if en == _errno.ENOSYS:
        return "namespaces are not available on this system (%s)" % msg
    if en == _errno.EINVAL:
        return "this kernel does not support the namespaces the sandbox needs (unshare: %s)" % os.strerror(en)
    if en == _errno.ENOSPC:
        return "the user namespace limit is reached (user.max_user_namespaces)"
    return "the namespace sandbox could not be set up (%s)" % msg
