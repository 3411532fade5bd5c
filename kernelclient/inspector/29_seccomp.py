# ---------------------------------------------------------------------------------------------
# Shadow runs: the fallback's syscall allow-list (seccomp)
#
# Where the namespace sandbox is refused, the child's native code (ctypes, C extensions) is
# held by a seccomp filter that lists what a Python cell needs: memory, reads, time,
# futexes, signals to itself, the write calls the private view (33_fallback) makes through
# the scratch directory's descriptor. Arguments are checked where a call can reach outside
# the process: ioctl requests (terminal reads only: no TIOCSTI, TCSETS*, FS_IOC_SETFLAGS),
# socket families (AF_UNIX only: no AF_INET, no AF_NETLINK), clone flags (threads only, no
# namespace flags), fcntl commands (no leases, no signal owners), process ids (this process
# only). Everything else traps: a SIGSYS handler records the call and makes it return EPERM,
# and the child's result is "refused" with the call's name. A filter for another machine
# would need its own syscall table: there, the fallback does not shadow-run at all.

_SECCOMP_ARCH = {"x86_64": 0xC000003E}

# x86_64 syscalls allowed whatever their arguments, the frequent ones first (the filter is a
# linear scan). Nothing here acts on a path for writing, another process or the system.
_SC_ALLOW = (
    0, 1, 202, 9, 11, 10, 12, 3, 5, 262, 8, 17, 18, 19, 20, 28, 25, 14, 15, 332, 217, 7, 271, 232, 281, 441,
    4, 6, 21, 269, 439, 267, 89, 79, 80, 81, 32, 33, 292, 22, 293, 23, 270, 24, 26, 27, 34, 35, 36, 37, 38,
    39, 40, 45, 47, 48, 51, 52, 54, 55, 60, 61, 247, 63, 74, 75, 77, 78, 95, 96, 97, 98, 99, 100, 102, 104,
    107, 108, 110, 111, 112, 115, 118, 120, 121, 124, 125, 127, 128, 130, 131, 137, 138, 140, 143, 145,
    146, 147, 148, 149, 150, 151, 152, 157, 158, 160, 162, 186, 187, 191, 192, 193, 194, 195, 196, 201,
    204, 205, 211, 213, 218, 219, 221, 222, 223, 224, 225, 226, 228, 229, 230, 231, 233, 237, 238, 239,
    273, 274, 275, 276, 277, 278, 282, 283, 284, 285, 286, 287, 289, 290, 291, 295, 296, 299, 306, 309,
    315, 317, 318, 319, 324, 325, 326, 327, 328, 329, 330, 331, 334, 436, 444, 445, 446, 449, 450, 451,
    453, 454, 455, 456, 462, 73, 216,
)
_SC_ENOSYS = (435, 437)  # clone3, openat2: glibc falls back to clone, callers to openat
_SC_OWN_PID0 = (62, 200, 234, 203, 142, 144, 314, 302, 129, 297, 256, 279, 434)  # pid in arg 0
_SC_SCRATCH_AT = (258, 263, 268, 280)  # mkdirat, unlinkat, fchmodat, utimensat: dirfd arg 0
_SC_RENAME_AT = (264, 316)  # renameat, renameat2: both directory descriptors
# ioctl requests a cell may make: terminal queries (isatty, size), FIONREAD/FIONBIO, close-on-
# exec, FS_IOC_GETFLAGS, PROCMAP_QUERY. Anything else (TIOCSTI, TCSETS*, FS_IOC_SETFLAGS,
# device ioctls) traps.
_IOCTL_ALLOW = (0x5401, 0x5413, 0x540F, 0x541B, 0x5421, 0x5450, 0x5451, 0x80086601, 0x802C542A, 0xC0686611)
# fcntl commands: all but F_SETOWN(8), F_SETSIG(10), F_SETOWN_EX(15), F_SETLEASE(1024),
# F_NOTIFY(1026): those make the kernel signal or wait on other processes.
_FCNTL_DENY = (8, 10, 15, 1024, 1026)
_CLONE_NS_FLAGS = 0x7E020080  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
_CLONE_THREAD = 0x00010000
_AF_UNIX = 1
_SIGSYS = 31

# What a trap's data says about the call (shown in the refusal).
_WHY = {1: "", 2: "ioctl request %#x", 3: "socket family %d", 4: "clone flags %#x (only threads)",
        5: "open for writing outside the private view", 6: "fcntl command %d", 7: "aimed at another process",
        8: "a foreign syscall ABI", 9: "outside the private view", 10: "sendto with an address",
        11: "changing the SIGSYS handler"}

_SC_NAMES = {
    2: "open", 13: "rt_sigaction", 16: "ioctl", 29: "shmget", 30: "shmat", 31: "shmctl", 41: "socket", 42: "connect",
    43: "accept", 44: "sendto", 46: "sendmsg", 49: "bind", 50: "listen", 53: "socketpair", 56: "clone", 57: "fork",
    58: "vfork", 59: "execve", 64: "semget", 65: "semop", 66: "semctl", 67: "shmdt", 68: "msgget", 69: "msgsnd",
    70: "msgrcv", 71: "msgctl", 72: "fcntl", 76: "truncate", 82: "rename", 83: "mkdir", 84: "rmdir", 85: "creat",
    86: "link", 87: "unlink", 88: "symlink", 90: "chmod", 91: "fchmod", 92: "chown", 93: "fchown", 94: "lchown",
    101: "ptrace", 103: "syslog", 105: "setuid", 106: "setgid", 109: "setpgid", 113: "setreuid", 114: "setregid",
    116: "setgroups", 117: "setresuid", 119: "setresgid", 122: "setfsuid", 123: "setfsgid", 126: "capset",
    132: "utime", 133: "mknod", 135: "personality", 141: "setpriority", 153: "vhangup", 155: "pivot_root",
    159: "adjtimex", 161: "chroot", 163: "acct", 164: "settimeofday", 165: "mount", 166: "umount2",
    167: "swapon", 168: "swapoff", 169: "reboot", 170: "sethostname", 171: "setdomainname", 172: "iopl",
    173: "ioperm", 175: "init_module", 176: "delete_module", 188: "setxattr", 189: "lsetxattr",
    190: "fsetxattr", 197: "removexattr", 198: "lremovexattr", 199: "fremovexattr", 206: "io_setup",
    209: "io_submit", 220: "semtimedop", 227: "clock_settime", 235: "utimes", 240: "mq_open",
    241: "mq_unlink", 242: "mq_timedsend", 246: "kexec_load", 248: "add_key", 249: "request_key",
    250: "keyctl", 251: "ioprio_set", 253: "inotify_init", 254: "inotify_add_watch", 257: "openat",
    258: "mkdirat", 259: "mknodat", 260: "fchownat", 261: "futimesat", 263: "unlinkat", 264: "renameat",
    265: "linkat", 266: "symlinkat", 268: "fchmodat", 272: "unshare", 280: "utimensat", 288: "accept4",
    294: "inotify_init1", 298: "perf_event_open", 300: "fanotify_init", 301: "fanotify_mark",
    303: "name_to_handle_at", 304: "open_by_handle_at", 305: "clock_adjtime", 307: "sendmmsg", 308: "setns",
    310: "process_vm_readv", 311: "process_vm_writev", 312: "kcmp", 313: "finit_module", 316: "renameat2",
    320: "kexec_file_load", 321: "bpf", 322: "execveat", 323: "userfaultfd", 424: "pidfd_send_signal",
    425: "io_uring_setup", 426: "io_uring_enter", 427: "io_uring_register", 428: "open_tree",
    429: "move_mount", 430: "fsopen", 431: "fsconfig", 432: "fsmount", 433: "fspick", 434: "pidfd_open",
    438: "pidfd_getfd", 440: "process_madvise", 442: "mount_setattr", 447: "memfd_secret",
    452: "fchmodat2", 62: "kill", 200: "tkill", 234: "tgkill", 203: "sched_setaffinity", 142: "sched_setparam",
    144: "sched_setscheduler", 314: "sched_setattr", 302: "prlimit64", 129: "rt_sigqueueinfo",
    297: "rt_tgsigqueueinfo", 256: "migrate_pages", 279: "move_pages", 457: "statmount", 458: "listmount",
}

_sc_traps = []  # (syscall number, trap data, first argument, second argument), child side
# Paths (bytes) whose open for writing without O_CREAT/O_TRUNC fails quietly as ENOENT instead of
# being recorded: HDF5's in-memory driver probes its file name that way even when handed the
# image (33_writers.py sets this only around that call). The open is refused either way.
_sc_quiet = set()
_sc_keep = []  # the handler's ctypes objects: freed, the next trap would jump into nothing


class _Asm(object):
    """A classic-BPF program with forward labels (jumps are 8-bit offsets)."""

    LD, JEQ, JGE, JSET, RET, AND = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
    ALLOW, TRAP, ERRNO = 0x7FFF0000, 0x00030000, 0x00050000

    def __init__(self):
        self.ins = []  # [code, jt, jf, k]; jt/jf an int or a label name
        self.labels = {}

    def emit(self, code, jt=0, jf=0, k=0):
        self.ins.append([code, jt, jf, k])

    def label(self, name):
        self.labels[name] = len(self.ins)

    def ld_nr(self):
        self.emit(self.LD, k=0)

    def ld_arg(self, i, high=False):
        self.emit(self.LD, k=16 + 8 * i + (4 if high else 0))

    def ret(self, action):
        self.emit(self.RET, k=action)

    def program(self):
        out = []
        for i, (code, jt, jf, k) in enumerate(self.ins):
            rel = []
            for j in (jt, jf):
                if isinstance(j, str):
                    j = self.labels[j] - i - 1
                if not 0 <= j <= 255:
                    raise ValueError("BPF jump out of range at %d" % i)
                rel.append(j)
            out.append((code, rel[0], rel[1], k))
        return out


def _allowlist_program(pid, scratch_fd):
    """The filter as (code, jt, jf, k) tuples for x86_64."""
    a = _Asm()
    trap = lambda why: a.ret(a.TRAP | why)  # noqa: E731
    a.emit(a.LD, k=4)  # arch
    a.emit(a.JEQ, 1, 0, _SECCOMP_ARCH["x86_64"])
    trap(8)  # int 0x80 (i386) or another ABI: its numbers mean other calls
    a.ld_nr()
    a.emit(a.JGE, 0, 1, 0x40000000)
    trap(8)  # x32
    for nr in _SC_ALLOW:
        a.emit(a.JEQ, 0, 1, nr)
        a.ret(a.ALLOW)
    for nr in _SC_ENOSYS:
        a.emit(a.JEQ, 0, 1, nr)
        a.ret(a.ERRNO | 38)
    # open(path, flags) / openat(dirfd, path, flags): write intent only through the scratch fd
    a.emit(a.JEQ, 0, 4, 2)
    a.ld_arg(1)
    a.emit(a.JSET, 0, 1, _WRITE_FLAGS)
    trap(5)
    a.ret(a.ALLOW)
    a.emit(a.JEQ, 0, 7, 257)
    a.ld_arg(2)
    a.emit(a.JSET, 0, 3, _WRITE_FLAGS)
    a.ld_arg(0)
    a.emit(a.JEQ, 1, 0, scratch_fd)
    trap(5)
    a.ret(a.ALLOW)
    a.ld_nr()
    for nr in _SC_SCRATCH_AT:
        a.emit(a.JEQ, 0, 4, nr)
        a.ld_arg(0)
        a.emit(a.JEQ, 1, 0, scratch_fd)
        trap(9)
        a.ret(a.ALLOW)
    for nr in _SC_RENAME_AT:
        a.emit(a.JEQ, 0, 6, nr)
        a.ld_arg(0)
        a.emit(a.JEQ, 0, 2, scratch_fd)
        a.ld_arg(2)
        a.emit(a.JEQ, 1, 0, scratch_fd)
        trap(9)
        a.ret(a.ALLOW)
    for nr in _SC_OWN_PID0:  # this process (its pid, or 0 for "self" where the call means that)
        a.emit(a.JEQ, 0, 5, nr)
        a.ld_arg(0)
        a.emit(a.JEQ, 2, 0, pid)
        a.emit(a.JEQ, 1, 0, 0)
        trap(7)
        a.ret(a.ALLOW)
    for nr, user in ((141, 2), (251, 3)):  # setpriority / ioprio_set(which, who): this process only
        a.emit(a.JEQ, 0, 7, nr)
        a.ld_arg(0)
        a.emit(a.JEQ, 3, 0, user)
        a.ld_arg(1)
        a.emit(a.JEQ, 2, 0, pid)
        a.emit(a.JEQ, 1, 0, 0)
        trap(7)
        a.ret(a.ALLOW)
    # ioctl(fd, request): the request (an unsigned int: the high half is ignored) in the list
    a.emit(a.JEQ, 0, "ioctl_end", 16)
    a.ld_arg(1)
    for req in _IOCTL_ALLOW:
        a.emit(a.JEQ, "allow_ioctl", 0, req)
    trap(2)
    a.label("allow_ioctl")
    a.ret(a.ALLOW)
    a.label("ioctl_end")
    a.ld_nr()
    # fcntl(fd, cmd)
    a.emit(a.JEQ, 0, "fcntl_end", 72)
    a.ld_arg(1)
    for cmd in _FCNTL_DENY:
        a.emit(a.JEQ, "deny_fcntl", 0, cmd)
    a.ret(a.ALLOW)
    a.label("deny_fcntl")
    trap(6)
    a.label("fcntl_end")
    a.ld_nr()
    # socket / socketpair(domain, ...): AF_UNIX only (no inet, no netlink, no packet sockets)
    for nr in (41, 53):
        a.emit(a.JEQ, 0, 4, nr)
        a.ld_arg(0)
        a.emit(a.JEQ, 1, 0, _AF_UNIX)
        trap(3)
        a.ret(a.ALLOW)
    # connect: fails quietly (EACCES), as glibc expects when nscd is absent; the socket can
    # only be AF_UNIX, and what it would reach is refused.
    a.emit(a.JEQ, 0, 1, 42)
    a.ret(a.ERRNO | 13)
    # sendto without a destination address (a socketpair); with one it traps
    a.emit(a.JEQ, 0, 6, 44)
    a.ld_arg(4)
    a.emit(a.JEQ, 0, 2, 0)
    a.ld_arg(4, True)
    a.emit(a.JEQ, 1, 0, 0)
    trap(10)
    a.ret(a.ALLOW)
    # clone: threads only, no namespace flags
    a.emit(a.JEQ, 0, 5, 56)
    a.ld_arg(0)
    a.emit(a.JSET, 2, 0, _CLONE_NS_FLAGS)
    a.emit(a.JSET, 0, 1, _CLONE_THREAD)
    a.ret(a.ALLOW)
    trap(4)
    # rt_sigaction: any signal but SIGSYS (the handler that reports refusals stays)
    a.emit(a.JEQ, 0, 4, 13)
    a.ld_arg(0)
    a.emit(a.JEQ, 0, 1, _SIGSYS)
    trap(11)
    a.ret(a.ALLOW)
    trap(1)
    return a.program()


def _sc_install_handler():
    """SIGSYS handler (SA_SIGINFO) for the filter's traps: record the call, make it return
    EPERM (rax in the saved context), go on. Runs on the trapping thread at its syscall
    instruction, a well-defined point: it only reads integers and appends to a list."""
    import ctypes

    HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

    def on_sigsys(sig, info, uctx):
        try:
            why = ctypes.c_int.from_address(info + 4).value  # si_errno: the trap's data
            nr = ctypes.c_int.from_address(info + 24).value  # si_syscall
            gregs = uctx + 40  # uc_mcontext.gregs (x86_64)
            a0 = ctypes.c_uint64.from_address(gregs + 8 * 8).value  # rdi
            a1 = ctypes.c_uint64.from_address(gregs + 9 * 8).value  # rsi
            if _sc_quiet and why == 5 and nr in (2, 257):
                path, flags = (a0, a1) if nr == 2 else (a1, ctypes.c_uint64.from_address(gregs + 12 * 8).value)
                if not flags & (os.O_CREAT | os.O_TRUNC) and ctypes.string_at(path) in _sc_quiet:
                    ctypes.c_int64.from_address(gregs + 13 * 8).value = -2  # rax = -ENOENT
                    return
            if len(_sc_traps) < 20:
                _sc_traps.append((nr, why, a0, a1))
            ctypes.c_int64.from_address(gregs + 13 * 8).value = -1  # rax = -EPERM
        except BaseException:
            pass

    cb = HANDLER(on_sigsys)

    libc = ctypes.CDLL(None, use_errno=True)

    # glibc's struct sigaction (its sigaction() adds the restorer the kernel needs)
    class GSigAction(ctypes.Structure):
        _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_uint64 * 16), ("flags", ctypes.c_int),
                    ("restorer", ctypes.c_void_p)]

    act = GSigAction()
    act.handler = ctypes.cast(cb, ctypes.c_void_p).value
    act.flags = 0x4 | 0x10000000  # SA_SIGINFO | SA_RESTART
    if libc.sigaction(_SIGSYS, ctypes.byref(act), None) != 0:
        return False
    _sc_keep.extend([cb, act])
    return True


def _allowlist_filter(scratch_fd):
    """Install the trap handler and the filter (this thread and every thread it starts).
    Returns None when installed, else why not (the caller then refuses to run the cell)."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux"):
        return "the fallback's syscall filter is Linux-only"
    machine = platform.machine()
    if machine not in _SECCOMP_ARCH:
        return "the fallback's syscall filter knows no syscall table for %s" % machine
    prog = _allowlist_program(os.getpid(), scratch_fd)
    if not _sc_install_handler():
        return "the SIGSYS handler could not be installed"

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    arr = (Filter * len(prog))(*[Filter(*x) for x in prog])
    fprog = Prog(len(prog), ctypes.cast(arr, ctypes.POINTER(Filter)))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return "prctl(PR_SET_NO_NEW_PRIVS) failed: %s" % os.strerror(ctypes.get_errno())
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return "the seccomp filter was refused: %s" % os.strerror(ctypes.get_errno())
    _sc_keep.extend([arr, fprog])
    return None


def _sc_refusal():
    """The first trapped call as a refusal text, or None."""
    if not _sc_traps:
        return None
    nr, why, a0, a1 = _sc_traps[0]
    name = _SC_NAMES.get(nr, "syscall %d" % nr)
    detail = _WHY.get(why, "")
    if "%" in detail:
        detail = detail % ({2: a1 & 0xFFFFFFFF, 3: a0, 4: a0, 6: a1}.get(why, 0))
    more = " and %d more" % (len(_sc_traps) - 1) if len(_sc_traps) > 1 else ""
    return "the system call %s%s from native code%s" % (name, " (%s)" % detail if detail else "", more)
