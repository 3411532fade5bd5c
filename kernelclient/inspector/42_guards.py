# ---------------------------------------------------------------------------------------------
# Shadow runs: the child's guards (buffered output, no input or display, screened magics;
# in the fallback, the audit hook that refuses sockets, processes and writes outside the view)


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


_PROBE_COMMANDS = frozenset(["fc-list", "fc-match", "nvidia-smi", "lscpu", "sysctl"])


def _probe_command(args):
    try:
        argv = args[1]
        exe = args[0] if args[0] else (argv[0] if isinstance(argv, (list, tuple)) and argv else argv)
        return os.path.basename(os.fsdecode(exe)) in _PROBE_COMMANDS
    except BaseException:
        return False


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
            _view_writers()  # sqlite3, PyTables, h5py, cv2 (33_writers.py)
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
