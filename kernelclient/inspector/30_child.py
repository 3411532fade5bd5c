# ---------------------------------------------------------------------------------------------
# Shadow runs: child side


class ShadowRefusal(BaseException):
    """Raised in the child when the cell attempts a side effect premortem refuses.

    A BaseException so that `except Exception` in user code does not swallow it.
    """


_refusals = []
# O_TMPFILE is not listed: it contains O_DIRECTORY's bit and requires O_WRONLY/O_RDWR anyway.
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_REFUSED_EVENTS = {
    "os.remove": "delete", "os.rmdir": "delete", "os.rename": "rename", "os.mkdir": "mkdir",
    "os.chmod": "chmod", "os.chown": "chown", "os.link": "link", "os.symlink": "symlink",
    "os.truncate": "truncate", "os.utime": "utime", "os.chflags": "chflags", "os.lchflags": "chflags",
    "os.mkfifo": "mkfifo", "os.mknod": "mknod", "os.setxattr": "setxattr", "os.removexattr": "removexattr",
    "shutil.rmtree": "delete", "shutil.move": "move", "shutil.copyfile": "copy", "shutil.copymode": "copy",
    "shutil.copystat": "copy", "shutil.copytree": "copy", "shutil.chown": "chown",
    "shutil.make_archive": "archive", "shutil.unpack_archive": "unpack",
    "socket.connect": "socket", "socket.bind": "socket", "socket.sendto": "socket", "socket.sendmsg": "socket",
    "subprocess.Popen": "subprocess", "os.system": "os.system", "os.exec": "exec", "os.posix_spawn": "spawn",
    "os.spawn": "spawn", "os.fork": "fork", "os.forkpty": "fork", "pty.spawn": "spawn", "os.startfile": "startfile",
    "webbrowser.open": "webbrowser", "os.kill": "kill", "os.killpg": "kill",
}


def _refuse(what):
    if len(_refusals) < 20:
        _refusals.append(what)
    raise ShadowRefusal("premortem shadow run refused: %s" % what)


def _arg(a):
    try:
        if isinstance(a, bytes):
            a = a.decode("utf-8", "replace")
        if isinstance(a, (str, int)):
            s = str(a)
        elif hasattr(a, "__fspath__"):
            s = str(os.fspath(a))
        else:
            s = "<%s>" % _short(type(a))
    except BaseException:
        s = "?"
    return s if len(s) <= 120 else s[:120] + "..."


def _audit(event, args):
    if _in_scratch[0]:
        return  # the fallback's scratch directory (_Scratch): writes there are allowed
    if event in _VIEW_EVENTS and _view[0] is not None:
        return  # shutil's steps go through the private view's os functions (33_view.py)
    if event == "os.truncate" and args and isinstance(args[0], int):
        return  # ftruncate: only the view's files and private copies are open for writing
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if isinstance(path, int):
            return
        write = False
        if isinstance(mode, str):
            write = any(ch in mode for ch in "wax+")
        elif isinstance(flags, int):
            write = bool(flags & _WRITE_FLAGS)
        if write:
            p = _arg(path)
            if p in (os.devnull, "/dev/null"):
                return
            m = mode if isinstance(mode, str) else "flags=%#x" % (flags or 0)
            _refuse("open(%r, %r)" % (p, m))
        return
    what = _REFUSED_EVENTS.get(event)
    if what is None:
        if event == "sqlite3.connect":
            db = _arg(args[0]) if args else ""
            if db not in (":memory:", ""):
                _refuse("sqlite3.connect(%r)" % db)
        return
    if event in ("os.kill", "os.killpg") and args and args[0] in (os.getpid(), 0):
        return
    if event == "subprocess.Popen" and len(args) > 1 and _probe_command(args):
        # A library asking the system about itself (matplotlib's font scan runs fc-list on
        # its first import): it handles a missing tool, so the tool is "missing" here.
        raise FileNotFoundError(_errno.ENOENT, "not run in a premortem shadow run", _arg(args[0]))
    n = 2 if event in ("os.rename", "os.link", "os.symlink", "shutil.move", "shutil.copyfile", "shutil.copytree",
                       "subprocess.Popen") else 1
    shown = ", ".join(repr(_arg(a)) for a in list(args)[:n])
    _refuse("%s(%s)" % (event, shown))


_VIEW_NATIVE = frozenset(["torch.save", "torch.jit.save", "DataFrame.to_parquet", "DataFrame.to_feather",
                          "DataFrame.to_orc"])
_PROBE_COMMANDS = frozenset(["fc-list", "fc-match", "nvidia-smi", "lscpu", "sysctl"])


def _probe_command(args):
    try:
        argv = args[1]
        exe = args[0] if args[0] else (argv[0] if isinstance(argv, (list, tuple)) and argv else argv)
        return os.path.basename(os.fsdecode(exe)) in _PROBE_COMMANDS
    except BaseException:
        return False


def _path_like(f):
    return isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")


def _patch_native_writers(view=False):
    """Writers that open files in C (not seen by the audit hook): refuse path arguments,
    but for those the private view gives a file object instead (_view_native_io)."""
    def wrap(owner, name, label, argpos=0, kw="path"):
        orig = getattr(owner, name, None)
        if orig is None or (view and label in _VIEW_NATIVE):
            return

        def guarded(*a, **k):
            target = a[argpos] if len(a) > argpos else k.get(kw)
            if _path_like(target):
                _refuse("%s(%r)" % (label, _arg(target)))
            return orig(*a, **k)

        try:
            setattr(owner, name, guarded)
        except BaseException:
            pass

    torch = sys.modules.get("torch")
    if torch is not None:
        wrap(torch, "save", "torch.save", 1, "f")
        jit = getattr(torch, "jit", None)
        if jit is not None:
            wrap(jit, "save", "torch.jit.save", 1, "f")
        onnx = sys.modules.get("torch.onnx")
        if onnx is not None:
            wrap(onnx, "export", "torch.onnx.export", 2, "f")
    pd = sys.modules.get("pandas")
    if pd is not None:
        for meth in ("to_parquet", "to_feather", "to_hdf", "to_orc"):
            wrap(pd.DataFrame, meth, "DataFrame." + meth, 1, "path")
        wrap(pd.Series, "to_hdf", "Series.to_hdf", 1, "path_or_buf")
    h5 = sys.modules.get("h5py")
    if h5 is not None:
        orig = h5.File

        class _File(orig):
            def __init__(self, name, mode="r", *a, **k):
                if mode not in ("r",) and _path_like(name):
                    _refuse("h5py.File(%r, %r)" % (_arg(name), mode))
                orig.__init__(self, name, mode, *a, **k)

        h5.File = _File
    cv2 = sys.modules.get("cv2")
    if cv2 is not None:
        wrap(cv2, "imwrite", "cv2.imwrite", 0, "filename")
        if hasattr(cv2, "VideoWriter"):
            def _vw(*a, **k):
                _refuse("cv2.VideoWriter")
            cv2.VideoWriter = _vw
    for modname, cls in (("keras", "Model"), ("tensorflow", "keras.Model")):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        owner = mod
        for part in cls.split("."):
            owner = getattr(owner, part, None)
            if owner is None:
                break
        if owner is not None:
            wrap(owner, "save", "Model.save", 1, "filepath")
            wrap(owner, "save_weights", "Model.save_weights", 1, "filepath")
    for modname, cls, meth in (("xgboost", "Booster", "save_model"), ("lightgbm", "Booster", "save_model")):
        mod = sys.modules.get(modname)
        owner = getattr(mod, cls, None) if mod is not None else None
        if owner is not None:
            wrap(owner, meth, "%s.%s" % (cls, meth), 1, "fname")


class _CappedText(io.StringIO):
    """stdout/stderr of the child: bounded so a print loop cannot eat memory."""

    def write(self, s):
        if self.tell() < _OUT_LIMIT * 4:
            return io.StringIO.write(self, s)
        return len(s)

    def isatty(self):
        return False


def _compact(v):
    """facts.Compact for one traced value."""
    t = type(v)
    c = {"type": _short(t)}
    try:
        np = _np()
        pd = sys.modules.get("pandas")
        torch = sys.modules.get("torch")
        if np is not None and isinstance(v, np.ndarray):
            c["shape"] = [int(x) for x in v.shape]
            c["dtype"] = str(v.dtype)
        elif pd is not None and isinstance(v, pd.DataFrame):
            c["shape"] = [int(x) for x in v.shape]
            dts = set(str(d) for d in v.dtypes)
            if len(dts) == 1:
                c["dtype"] = dts.pop()
        elif pd is not None and isinstance(v, (pd.Series, pd.Index)):
            c["shape"] = [int(len(v))]
            c["dtype"] = str(v.dtype)
        elif torch is not None and isinstance(v, torch.Tensor):
            c["shape"] = [int(x) for x in v.shape]
            c["dtype"] = str(v.dtype)
        elif np is not None and isinstance(v, np.generic):
            c["dtype"] = str(v.dtype)
            c["repr"] = (_builtin_repr(v) or "")[:60]
        elif t in (list, tuple, dict, set, frozenset):
            c["len"] = len(v)
        elif t is str:
            c["len"] = len(v)
            r = repr(v)
            c["repr"] = r if len(r) <= 60 else r[:57] + "..."
        elif v is None or t in (bool, int, float, complex):
            r = repr(v)
            c["repr"] = r if len(r) <= 60 else r[:57] + "..."
        elif "scipy.sparse" in sys.modules and sys.modules["scipy.sparse"].issparse(v):
            c["shape"] = [int(x) for x in v.shape]
            c["dtype"] = str(v.dtype)
    except BaseException:
        pass
    return c


def _line_stores(code):
    """line -> names the top-level cell code binds (or mutates by item/attr assignment) there."""
    out = {}
    line = None
    prev = []
    try:
        for ins in _dis.get_instructions(code):
            pos = getattr(ins, "positions", None)
            ln = pos.lineno if pos is not None and pos.lineno else (ins.starts_line or line)
            if ins.starts_line:
                line = ins.starts_line
            ln = ln or line
            target = None
            if ins.opname in ("STORE_NAME", "STORE_GLOBAL", "DELETE_NAME"):
                target = ins.argval
            elif ins.opname == "STORE_ATTR" and prev and prev[-1].opname in ("LOAD_NAME", "LOAD_GLOBAL"):
                target = prev[-1].argval
            elif ins.opname == "STORE_SUBSCR" and len(prev) >= 2 and prev[-2].opname in ("LOAD_NAME", "LOAD_GLOBAL") \
                    and prev[-1].opname in ("LOAD_CONST", "LOAD_NAME"):
                target = prev[-2].argval
            if target is not None and ln and ins.opname != "DELETE_NAME":
                names = out.setdefault(ln, [])
                if target not in names:
                    names.append(target)
            if ins.opname not in ("CACHE", "EXTENDED_ARG", "PRECALL"):
                prev.append(ins)
                if len(prev) > 3:
                    prev.pop(0)
    except BaseException:
        pass
    return out


class _Tracer(object):
    def __init__(self, code, lmap):
        self.code = code
        self.lmap = lmap
        self.stores = _line_stores(code)
        self.states = []
        self.truncated = False
        self.prev = None
        self.last = {}  # line -> identities of its names when last recorded

    def global_trace(self, frame, event, arg):
        if frame.f_code is self.code:
            return self.local_trace
        return None

    def record(self, frame, line):
        names = self.stores.get(line)
        if not names:
            return
        if len(self.states) >= _TRACE_LINES:
            self.truncated = True
            return
        g = frame.f_globals
        ids = tuple(id(g.get(n)) for n in names)
        if self.last.get(line) == ids:
            return  # nothing new (a for loop's final check re-visits its line)
        self.last[line] = ids
        st = {}
        for n in names[:_TRACE_NAMES]:
            if n in g:
                st[n] = _compact(g[n])
        if len(names) > _TRACE_NAMES:
            self.truncated = True
        if st:
            self.states.append({"line": _map(self.lmap, line), "names": st})

    def local_trace(self, frame, event, arg):
        if event == "line":
            if self.prev is not None:
                self.record(frame, self.prev)
            self.prev = frame.f_lineno
        elif event == "return":
            if self.prev is not None:
                self.record(frame, self.prev)
            self.prev = None
        elif event == "exception":
            self.prev = None
        return self.local_trace


def _install_child_guards(sh, out, err, box):
    """Output to buffers, no input, no display; in the fallback sandbox also the write,
    socket and process refusals (the namespace sandbox contains those instead)."""
    import signal

    sys.stdout = out
    sys.stderr = err
    sys.stdin = io.StringIO("")
    sys.dont_write_bytecode = True

    def _no_input(*a, **k):
        _refuse("input()")

    builtins.input = _no_input
    gp = sys.modules.get("getpass")
    if gp is not None:
        gp.getpass = _no_input
    fallback = box.kind != "namespaces"
    if sh is not None:
        _guard_shell(sh, fallback)
    os.environ["MPLBACKEND"] = "agg"  # a first import of pyplot must not pick the inline backend
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        try:
            plt.switch_backend("agg")
        except BaseException:
            pass
    plat = sys.modules.get("platform")
    if plat is not None and hasattr(plat, "_Processor"):
        # platform.uname().processor runs `uname -p` (pandas asks on import); on Linux it
        # reads "unknown", reported as ""
        try:
            plat._Processor.from_subprocess = staticmethod(lambda: "")
        except BaseException:
            pass
    _sequential_parallelism(dataloader=fallback)
    if fallback:
        _patch_native_writers(view=box.scratch is not None)
        _devnull_without_syscall()
        if box.scratch is not None:
            _scratch_env(box.scratch)
            _scratch_wrappers()
            _view_wrappers(box.scratch)  # writes land in a private view (33_view.py)
            _view_native_io()
        _guard_other_processes()
        # joblib probes named semaphores (a file in /dev/shm) when first imported; process
        # pools are refused in the fallback anyway.
        os.environ["JOBLIB_MULTIPROCESSING"] = "0"
        sys.addaudithook(_audit)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except BaseException:
        pass


_displays = [0]


def _count_display(*a, **k):
    _displays[0] += 1


def _guard_shell(sh, fallback=True):
    """Output to buffers, never the kernel's sockets; magics screened, and shell commands
    refused in the fallback sandbox (the namespace sandbox runs them inside)."""
    pub = getattr(sh, "display_pub", None)
    if pub is not None:
        # Instance attributes shadow the methods that would send display_data on IOPub.
        try:
            pub.publish = _count_display
            pub.clear_output = lambda *a, **k: None
        except BaseException:
            pass
    try:
        fmt = sh.display_formatter

        def _format(obj, include=None, exclude=None):
            return {"text/plain": "<%s>" % _short(type(obj))}, {}

        fmt.format = _format
    except BaseException:
        pass
    kernel = getattr(sh, "kernel", None)
    session = getattr(kernel, "session", None)
    if session is not None:
        try:
            session.send = lambda *a, **k: None
        except BaseException:
            pass
    sys.displayhook = lambda value: None

    def _system(cmd, *a, **k):
        _refuse("shell command !%s" % _arg(cmd))

    for name in ("system", "system_raw", "system_piped", "getoutput"):
        if not fallback:
            break
        try:
            setattr(sh, name, _system)
        except BaseException:
            pass
    orig_line = sh.run_line_magic
    orig_cell = sh.run_cell_magic

    def run_line_magic(magic_name, line, _stack_depth=1):
        if magic_name in _LINE_MAGIC_NOOP:
            return None
        if magic_name in _LINE_MAGIC_ONCE:
            return _run_once(line, magic_name, sys._getframe(1))
        if magic_name in _LINE_MAGIC_RUN:
            return orig_line(magic_name, line, _stack_depth + 1)
        _refuse("%%%s magic" % magic_name)

    def run_cell_magic(magic_name, line, cell):
        _refuse("%%%%%s cell magic" % magic_name)

    def run_cell(*a, **k):
        _refuse("run_cell()")

    sh.run_line_magic = run_line_magic
    sh.run_cell_magic = run_cell_magic
    sh.run_cell = run_cell
    sh.magic = lambda *a, **k: _refuse("magic()")


def _run_once(line, magic, caller):
    """%time/%timeit/%prun STMT: run STMT once where the magic stood (same line number)."""
    import ast

    toks = line.split()
    i = 0
    while i < len(toks) and toks[i].startswith("-"):
        if toks[i] in ("-n", "-r", "-p", "-l", "-T", "-D", "-s") and i + 1 < len(toks):
            i += 1
        i += 1
    stmt = " ".join(toks[i:]) if i else line
    lineno = caller.f_lineno if caller.f_code.co_filename == CELL_FILENAME else 1
    tree = ast.parse(stmt, CELL_FILENAME, "exec")
    ast.increment_lineno(tree, lineno - 1)
    g, l = caller.f_globals, caller.f_locals
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        expr = ast.Expression(tree.body[0].value)
        val = eval(compile(expr, CELL_FILENAME, "eval"), g, l)
        return val if magic == "time" else None
    exec(compile(tree, CELL_FILENAME, "exec"), g, l)
    return None


def _seccomp_backstop():
    """The fallback's syscall allow-list (29_seccomp.py) for native code the audit hook
    cannot see (C extensions, ctypes). Returns None when installed, else why not."""
    return _allowlist_filter(_SCRATCH_FD)


_null_fd = [None]


def _is_devnull(p):
    try:
        if not (isinstance(p, (str, bytes)) or hasattr(p, "__fspath__")):
            return False
        return os.fspath(p) in (os.devnull, "/dev/null", b"/dev/null")
    except BaseException:
        return False


def _devnull_without_syscall():
    """open(os.devnull, "w") (libraries silencing output, subprocess plumbing) must not reach
    the seccomp filter, which cannot see paths: hand out duplicates of a descriptor opened
    before the filter."""
    _null_fd[0] = os.open(os.devnull, os.O_RDWR)
    orig_os_open, orig_io_open = os.open, io.open

    def os_open(path, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is None and _is_devnull(path):
            return os.dup(_null_fd[0])
        return orig_os_open(path, flags, mode, dir_fd=dir_fd)

    def io_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
        if opener is None and _is_devnull(file):
            file, closefd = os.dup(_null_fd[0]), True
        return orig_io_open(file, mode, buffering, encoding, errors, newline, closefd, opener)

    os.open = os_open
    io.open = io_open
    builtins.open = io_open


def _limits(timeout, max_memory):
    import resource
    import signal

    vsize, _ = _statm()
    if vsize is not None and max_memory > 0:
        cap = vsize + max_memory
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except BaseException:
            pass
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        used = resource.getrusage(resource.RUSAGE_SELF)
        base = int(used.ru_utime + used.ru_stime)
        resource.setrlimit(resource.RLIMIT_CPU, (base + int(timeout) + 2, base + int(timeout) + 4))
    except BaseException:
        pass
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(int(timeout) + 3)
    except BaseException:
        pass


def _is_memory_error(e):
    if isinstance(e, MemoryError):
        return True
    try:
        msg = str(e)
    except BaseException:
        return False
    return type(e).__name__ == "RuntimeError" and ("can't allocate memory" in msg or "not enough memory" in msg
                                                  or "std::bad_alloc" in msg)


def _frames(tb, code, lmap):
    frames = []
    started = False
    line = 0
    while tb is not None:
        f = tb.tb_frame
        fn = f.f_code.co_filename
        in_cell = fn == CELL_FILENAME
        if in_cell:
            started = True
        if started and fn != "<premortem-inspector>":
            ln = tb.tb_lineno
            if in_cell:
                ln = _map(lmap, ln)
                line = ln
                text = _orig_line(code, ln)
            else:
                try:
                    text = _linecache.getline(fn, ln).strip()[:300]
                except BaseException:
                    text = ""
            fr = {"file": fn, "line": int(ln or 0), "func": f.f_code.co_name if not (in_cell and f.f_code.co_name == "<module>") else "<cell>",
                  "in_cell": in_cell}
            if text:
                fr["text"] = text
            frames.append(fr)
        tb = tb.tb_next
    if len(frames) > 30:
        frames = frames[:5] + frames[-25:]
    return frames, line


def _child_main(wfd, code, cell_code, lmap, timeout, trace, max_memory, rstate, old_mask, is_async, sh,
                sandbox="auto"):
    import signal

    t0 = time.perf_counter()
    # A collection would write to every tracked object's header, copying the whole heap
    # page by page (copy-on-write); the child is short-lived and memory-capped.
    import gc

    gc.disable()
    parent = os.getppid()
    try:
        os.setsid()
    except BaseException:
        pass
    if sys.platform.startswith("linux"):
        try:  # die with the kernel (a restart must not leave a looping child behind)
            import ctypes

            ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
            if os.getppid() != parent:
                os._exit(0)
        except BaseException:
            pass
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    except BaseException:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
    except BaseException:
        pass
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except BaseException:
        pass
    phases = {"setup": time.perf_counter()}
    _keep_fds.add(wfd)
    try:
        # With namespaces this process is from here on G, pid 1 of the new PID namespace
        # (the forked child only relays G's exit status; see 31_sandbox).
        box = _enter_sandbox(sandbox, max_memory)
    except BaseException as e:
        box = _Box("fallback", "the sandbox could not be set up (%s)%s" % (_err(e), _FALLBACK_TAIL))
    phases["sandbox"] = time.perf_counter()
    _limits(timeout, max_memory - box.scratch_bytes)  # the sandbox's tmpfs is paid from the same cap
    phases["limits"] = time.perf_counter()
    if rstate is not None:
        try:
            sys.modules["random"].setstate(rstate)  # fork re-seeds random in the child
        except BaseException:
            pass
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.get_num_threads() > 1:
                torch.set_num_threads(1)  # OpenMP pools do not survive fork
        except BaseException:
            pass
    out, err = _CappedText(), _CappedText()
    res = {"status": "ok"}
    tracer = None
    try:
        phases["rng"] = time.perf_counter()
        _install_child_guards(sh, out, err, box)
        phases["guards"] = time.perf_counter()
        ns = sh.user_ns if sh is not None else _user_ns()
        _meta_begin(ns, code, lmap)  # the CUDA guard; meta tensors in a meta run (36_meta.py)
        if box.kind != "namespaces":
            try:
                why = _seccomp_backstop()
            except BaseException as e:
                why = "the syscall filter failed (%s)" % _err(e)
            if why is not None:
                # Unfiltered native code could write anywhere: no run rather than an unsafe one.
                _refusals.append("running without the fallback's syscall filter: %s" % why)
                raise ShadowRefusal(why)
        if trace:
            tracer = _Tracer(cell_code, lmap)
            sys.settrace(tracer.global_trace)
        try:
            if is_async:
                import asyncio

                try:
                    asyncio.events._set_running_loop(None)
                except BaseException:
                    pass
                coro = eval(cell_code, ns)
                if coro is not None:
                    loop = asyncio.new_event_loop()
                    loop.run_until_complete(coro)
            else:
                exec(cell_code, ns)
        finally:
            sys.settrace(None)
    except ShadowRefusal:
        pass
    except BaseException as e:
        _meta_crash(e)  # 36_meta.py
        boxed = _sandbox_outcome(box, e)
        if boxed is not None:
            res = boxed
        elif _is_memory_error(e):
            res = {"status": "died", "reason": "the cell needed more memory than the shadow run allows (%d MiB extra); outcome unknown"
                   % (max_memory >> 20)}
        else:
            frames, line = _frames(e.__traceback__, code, lmap)
            try:
                msg = str(e)
            except BaseException:
                msg = "<str() of the exception failed>"
            res = {"status": "error", "exception": type(e).__name__, "message": msg[:2000], "line": line,
                   "frames": frames}
            try:
                keys = _crash_keys(e, e.__traceback__, code, lmap)  # 34_crashkeys.py
            except BaseException:
                keys = None
            if keys:
                res["crash_keys"] = keys
            try:
                cfacts = _crash_facts(e.__traceback__, code, lmap)  # 35_crashfacts.py
            except BaseException:
                cfacts = None
            if cfacts:
                res["crash_facts"] = cfacts
            try:
                sugg = _crash_suggestions(e)  # 35_crashfacts.py
            except BaseException:
                sugg = None
            if sugg:
                res["suggestions"] = sugg
    native = _sc_refusal() if box.kind != "namespaces" else None
    if native is not None and not _refusals:
        _refusals.append(native)
    if _refusals:
        res = {"status": "refused", "refused": _refusals[0],
               "reason": "the cell tried a side effect a shadow run does not allow (%s); outcome unknown" % _refusals[0]}
    res = _meta_report(res)  # 36_meta.py
    res["sandbox"] = box.kind
    res["sandbox_reason"] = box.reason
    res.update(_devrun_report(res))  # the fast dev run's loops, in the capped child only (25_devrun.py)
    if tracer is not None:
        res["trace"] = tracer.states
        if tracer.truncated:
            res["trace_truncated"] = True
    for key, buf in (("stdout", out), ("stderr", err)):
        s = buf.getvalue()
        if s:
            res[key] = s if len(s) <= _OUT_LIMIT else s[:_OUT_LIMIT] + "\n...[truncated]"
    phases["run"] = time.perf_counter()
    res["elapsed_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
    prev = t0
    for k in list(phases):
        phases[k], prev = round((phases[k] - prev) * 1000.0, 3), phases[k]
    for k, v in box.phases.items():
        phases["sandbox_" + k] = round(v * 1000.0, 3)  # the steps of the "sandbox" phase
    res["child_phases_ms"] = phases
    try:
        data = json.dumps(res, separators=(",", ":"), allow_nan=False, default=str).encode()
    except BaseException:
        data = json.dumps(_sanitize(res), default=str).encode()
    view = memoryview(data)
    while view:
        n = os.write(wfd, view)
        view = view[n:]
    os._exit(0)


