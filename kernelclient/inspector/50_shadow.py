# ---------------------------------------------------------------------------------------------
# Shadow runs: parent side (after every part the child uses: it forks the child and reaps it)

_MAX_RESULTS = 32

_lock = threading.Lock()
_results = {}  # token -> result dict (facts.ShadowResult)
_order = []  # tokens, oldest first
_children = {}  # token -> _Child
_counter = [0]


class _Child(object):
    __slots__ = ("token", "pid", "rfd", "deadline", "timeout", "cancelled", "started", "max_memory")

    def __init__(self, token, pid, rfd, timeout, max_memory):
        self.token = token
        self.pid = pid
        self.rfd = rfd
        self.started = time.monotonic()
        self.timeout = timeout
        self.deadline = self.started + timeout
        self.cancelled = None
        self.max_memory = max_memory


def _store(res):
    with _lock:
        tok = res["token"]
        if tok not in _results:
            _order.append(tok)
        _results[tok] = res
        while len(_order) > _MAX_RESULTS:
            old = _order.pop(0)
            if old not in _children:
                _results.pop(old, None)
            else:
                _order.append(old)
                break


def _new_token():
    _counter[0] += 1
    return "%d-%d-%s" % (os.getpid(), _counter[0], os.urandom(4).hex())


def _final(token, status, reason=None, **kw):
    res = {"token": token, "status": status}
    if reason:
        res["reason"] = reason
    res.update(kw)
    return res


def _skip_reason(tensors="auto"):
    if not hasattr(os, "fork") or os.name == "nt":
        return "shadow runs need fork(), not available on Windows"
    reason = _meta_pick(tensors)  # 36_meta.py: CUDA tensors become meta ones, unless real is asked
    if reason:
        return reason
    _, rss = _statm()
    avail = _meminfo_available()
    if rss is not None and avail is not None and rss > avail:
        return "the kernel's memory (%d MiB) is larger than what is free (%d MiB): not shadow-run" % (
            rss >> 20, avail >> 20)
    return None


def shadow(code, timeout_s=3.0, trace=False, max_memory=0, sandbox="auto", full_timeout_s=0, devrun_cap=0, tensors="auto",
           types=()):
    """Fork the kernel and run code in the child; returns at once (facts.ShadowResult JSON).

    sandbox: "auto" (namespaces where allowed) or "fallback" (see 31_sandbox).
    With devrun_cap > 0 and loops in the cell, a second child runs the cell with its loops
    capped at devrun_cap iterations (fast dev run, 25_devrun.py) within timeout_s, while the
    full child gets max(timeout_s, full_timeout_s): the two are one run group (neither kills
    the other); the answer carries the capped child's token as devrun_token. Each child
    enters a sandbox of its own.
    """
    t0 = time.perf_counter()
    token = _new_token()
    sh = _shell()
    try:
        count = int(getattr(sh, "execution_count", 0) or 0)
    except BaseException:
        count = 0
    try:
        res = _start(token, str(code), float(timeout_s or 3.0), bool(trace), int(max_memory or 0), sh, count, t0,
                     str(sandbox or "auto"), float(full_timeout_s or 0), int(devrun_cap or 0), str(tensors or "auto"),
                     tuple(str(n) for n in (types or ())))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        res = _final(token, "skipped", "shadow run could not start: %s" % _err(e))
    res.setdefault("execution_count", count)
    res.setdefault("fork_ms", round((time.perf_counter() - t0) * 1000.0, 3))
    _annotate(res, sandbox)
    if res.get("status") != "running":
        _store(dict(res))
    return _JSON(res)


def _start(token, code, timeout, trace, max_memory, sh, count, t0, sandbox="auto", full_timeout=0.0, devrun_cap=0,
           tensors="auto", types=()):
    reason = _skip_reason(tensors)
    if reason:
        return _final(token, "skipped", reason)
    _kill_running("cancelled: a newer shadow run started")
    body, early = _prepare(code)
    if early is not None:
        early["token"] = token
        return early
    transformed = _transform(sh, body)
    lmap = _line_map(code, transformed)
    flags = 0
    comp = getattr(sh, "compile", None)
    try:
        flags = int(getattr(comp, "flags", 0)) & ~0x2000  # no PyCF_ALLOW_TOP_LEVEL_AWAIT
    except BaseException:
        flags = 0
    is_async = False
    try:
        if len(transformed) > _CHEAP_TRANSFORM and devrun_cap <= 0:
            # compile() of a large cell holds the kernel's main thread (0.8 s for 16,000
            # lines): the child compiles it, and reports a SyntaxError as it would
            cell_code = _Deferred(transformed, flags)
        else:
            cell_code = compile(transformed, CELL_FILENAME, "exec", flags, True)
    except SyntaxError as e:
        try:
            import ast

            cell_code = compile(transformed, CELL_FILENAME, "exec", flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, True)
            is_async = True
        except SyntaxError:
            line = _map(lmap, e.lineno or 0)
            return _final(token, "error", None, exception=type(e).__name__, message=str(e.msg)[:2000],
                          line=line, frames=[{"file": CELL_FILENAME, "line": line, "func": "<cell>",
                                              "in_cell": True, "text": _orig_line(code, line)}])
    if max_memory <= 0:
        max_memory = _DEFAULT_MAX_MEMORY
    capped, meta = (None, None)
    if devrun_cap > 0:
        capped, meta = _devrun_compile(transformed, flags, is_async, lmap)
    full_limit = max(timeout, full_timeout) if devrun_cap > 0 else timeout
    dev = None
    if capped is not None:
        dev = _fork_child(_new_token(), code, capped, lmap, timeout, trace, max_memory, sh, count, t0, is_async,
                          (meta, devrun_cap), sandbox=sandbox)
    res = _fork_child(token, code, cell_code, lmap, full_limit, trace, max_memory, sh, count, t0, is_async,
                      None, background=dev is not None, sandbox=sandbox, types=types)
    if dev is not None:
        res["devrun_token"] = dev["token"]
        res["devrun_fork_ms"] = dev.get("fork_syscall_ms")
        _store(dict(res))
    return res


class _Deferred(object):
    """A large cell's source, compiled in the child (see _start)."""

    __slots__ = ("source", "flags")

    def __init__(self, source, flags):
        self.source = source
        self.flags = flags

    def compile_or_report(self, wfd, code, lmap):
        """In the child: (code object, is_async), or the SyntaxError written as the run's
        result (the same answer _start gives for a small cell) and the child ends."""
        import ast

        try:
            return compile(self.source, CELL_FILENAME, "exec", self.flags, True), False
        except SyntaxError:
            pass
        try:
            return compile(self.source, CELL_FILENAME, "exec", self.flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, True), True
        except SyntaxError as e:
            line = _map(lmap, e.lineno or 0)
            res = {"status": "error", "exception": type(e).__name__, "message": str(e.msg)[:2000], "line": line,
                   "frames": [{"file": CELL_FILENAME, "line": line, "func": "<cell>", "in_cell": True,
                               "text": _orig_line(code, line)}]}
            view = memoryview(json.dumps(res, default=str).encode())
            while view:
                view = view[os.write(wfd, view):]
            os._exit(0)


def _fork_child(token, code, cell_code, lmap, timeout, trace, max_memory, sh, count, t0, is_async, devrun,
                background=False, sandbox="auto", types=()):
    """Forks one child running cell_code (devrun: (meta, cap) for the capped child, else None),
    registers it and starts its reaper; returns the "running" answer. A background child (the
    full run beside a capped one) runs at a lower priority, so the answer the user waits for
    gets the CPU first."""
    rnd = sys.modules.get("random")
    rstate = rnd.getstate() if rnd is not None else None
    import signal

    rfd, wfd = os.pipe()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    kernel = os.getpid()
    tf = time.perf_counter()
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(rfd)
        os.close(wfd)
        raise
    if pid == 0:  # child: never returns
        try:
            # first of all: a kernel killed from here on takes the child with it (a restart
            # must not leave a looping child behind)
            _die_with(parent_pid=kernel)
            os.close(rfd)
            if isinstance(cell_code, _Deferred):
                cell_code, is_async = cell_code.compile_or_report(wfd, code, lmap)
            if devrun is not None:
                _devrun_begin(devrun[0], devrun[1], timeout)
            if background:
                try:
                    os.nice(10)
                except BaseException:
                    pass
            _child_main(wfd, code, cell_code, lmap, timeout, trace, max_memory, rstate, old_mask, is_async, sh, sandbox,
                        types)
        finally:
            os._exit(70)
    fork_ms = (time.perf_counter() - tf) * 1000.0
    _sandbox_of[pid] = sandbox
    try:  # register and start reaping before signals are unblocked: a KeyboardInterrupt must
        # not leave the child unreaped
        os.close(wfd)
        child = _Child(token, pid, rfd, timeout, max_memory)
        with _lock:
            _children[token] = child
        res = _final(token, "running")
        res["execution_count"] = count
        res["fork_syscall_ms"] = round(fork_ms, 3)
        res["fork_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
        _store(dict(res))  # before the reaper can store the outcome
        th = threading.Thread(target=_reap, args=(child,), name="premortem-shadow-reaper", daemon=True)
        th.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    return res


def _kill(pid):
    import signal

    for fn in (os.killpg, os.kill):
        try:
            fn(pid, signal.SIGKILL)
        except BaseException:
            pass


def _kill_running(why):
    with _lock:
        running = list(_children.values())
    for c in running:
        c.cancelled = why
        _kill(c.pid)


def _reap(child):
    """Parent-side thread: drain the child's pipe, enforce the deadline, reap, store."""
    import select

    chunks = []
    timed_out = False
    status = None
    pidfd = None
    try:
        pidfd = os.pidfd_open(child.pid)
    except BaseException:
        pidfd = None
    eof = False
    try:
        while True:
            if status is None:
                try:
                    wpid, st = os.waitpid(child.pid, os.WNOHANG)
                    if wpid == child.pid:
                        status = st
                except ChildProcessError:
                    status = -1
            if status is not None and eof:
                break
            now = time.monotonic()
            if now >= child.deadline and status is None:
                timed_out = True
                _kill(child.pid)
                child.deadline = now + 3600.0
            watch = [] if eof else [child.rfd]
            if pidfd is not None and status is None:
                watch.append(pidfd)
            wait = max(0.0, min(child.deadline - now, 1.0))
            if status is not None and not eof:
                wait = 0.2  # exited: drain what is left
            if pidfd is None and status is None:
                wait = min(wait, 0.01)
            if watch:
                r, _, _ = select.select(watch, [], [], wait)
            else:
                r = []
                time.sleep(wait)
            if child.rfd in r:
                data = os.read(child.rfd, 1 << 16)
                if data:
                    chunks.append(data)
                else:
                    eof = True
            elif status is not None and not r and not eof:
                eof = True  # exited, nothing more to read (a grandchild may hold the pipe)
            if timed_out and status is not None:
                break
    except BaseException as e:
        _kill(child.pid)
        try:
            os.waitpid(child.pid, 0)
        except BaseException:
            pass
        status = status if status is not None else -1
        chunks = [json.dumps({"status": "died", "reason": "shadow reaper failed: %s" % _err(e)}).encode()]
    finally:
        for fd in (child.rfd, pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except BaseException:
                    pass
        with _lock:
            _children.pop(child.token, None)
        _sandbox_cleanup(child.pid)
    elapsed = (time.monotonic() - child.started) * 1000.0
    res = _outcome(child, b"".join(chunks), status, timed_out, elapsed)
    try:
        _gomp_record(res)
    except BaseException:
        pass
    with _lock:
        prev = _results.get(child.token, {})
    for k in ("fork_ms", "execution_count"):
        if k in prev:
            res.setdefault(k, prev[k])
    _annotate(res, _sandbox_of.pop(child.pid, "auto"))
    _store(res)


def _outcome(child, data, status, timed_out, elapsed):
    import signal

    token = child.token
    if child.cancelled:
        return _final(token, "died", child.cancelled, elapsed_ms=round(elapsed, 3))
    if timed_out:
        return _final(token, "timeout", "the cell ran longer than %g s in the shadow run and was stopped; outcome unknown"
                      % child.timeout, elapsed_ms=round(elapsed, 3))
    res = None
    if data:
        try:
            res = json.loads(data.decode("utf-8", "replace"))
        except BaseException:
            res = None
    if isinstance(res, dict) and res.get("status"):
        res["token"] = token
        return res
    why = "the shadow run died without reporting"
    if status is not None and status >= 0 and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except BaseException:
            name = str(sig)
        if sig == getattr(signal, "SIGSYS", -1):
            what = ("a file write, delete, rename, socket, process launch, keyring call or action on another process "
                    "from native code")
            return _final(token, "refused", "the cell tried a side effect a shadow run does not allow (%s); outcome unknown"
                          % what, refused=what, elapsed_ms=round(elapsed, 3))
        if sig == getattr(signal, "SIGXCPU", -1):
            return _final(token, "timeout", "the cell used more CPU time than the shadow run allows", elapsed_ms=round(elapsed, 3))
        why = "the shadow run was killed by %s%s" % (name, " (out of memory?)" if sig == signal.SIGKILL else "")
    elif status is not None and status >= 0 and os.WIFEXITED(status):
        why = "the shadow run exited with status %d without reporting" % os.WEXITSTATUS(status)
    return _final(token, "died", why, elapsed_ms=round(elapsed, 3))


def shadow_result(token):
    """The stored outcome of a shadow run (status running while the child works)."""
    with _lock:
        res = _results.get(str(token))
    if res is None:
        return _JSON(_final(str(token), "died", "unknown shadow token (the kernel restarted or the result expired)"))
    return _JSON(dict(res))


def shadow_cancel(token):
    """Kill a running shadow child; returns its (final or running) result."""
    with _lock:
        c = _children.get(str(token))
    if c is not None:
        c.cancelled = "cancelled"
        _kill(c.pid)
    return shadow_result(token)


def shadow_children():
    """Pids of running shadow children (for tests)."""
    with _lock:
        return _JSON(sorted(c.pid for c in _children.values()))
