# ---------------------------------------------------------------------------------------------
# Shadow runs: the child's main (limits, sandbox, guards, the run, the report)


class _CappedText(io.StringIO):
    """stdout/stderr of the child: bounded so a print loop cannot eat memory."""

    def write(self, s):
        if self.tell() < _OUT_LIMIT * 4:
            return io.StringIO.write(self, s)
        return len(s)

    def isatty(self):
        return False


def _seccomp_backstop():
    """The fallback's syscall allow-list (29_seccomp.py) for native code the audit hook
    cannot see (C extensions, ctypes). Returns None when installed, else why not."""
    return _allowlist_filter(_SCRATCH_FD)


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


def _gomp_loaded():
    """Whether GNU OpenMP (libgomp) is loaded: xgboost, scikit-learn's histogram boosting,
    k-means and many compiled extensions use it. libgomp has no fork handler: a thread that
    ran a parallel region before the fork keeps a pool whose threads the child does not
    have, and its next parallel region waits for them forever."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return b"libgomp" in f.read()
    except BaseException:
        return False


# What the probes found, kept in the kernel (the reaper records each child's answer): a
# stale pool stays stale for the kernel's life; a sound one holds until the kernel runs
# another cell (its execution count), the only code of the kernel's thread that runs OpenMP.
_GOMP_SEEN = {"stale": False, "sound_at": None}


def _gomp_known(count):
    """The probe's answer the kernel already knows for execution count count, else None."""
    if _GOMP_SEEN["stale"]:
        return True
    if count is not None and _GOMP_SEEN["sound_at"] == count:
        return False
    return None


def _gomp_record(res):
    """In the kernel: keeps a child's probe answer (and drops it from the result)."""
    seen = res.pop("gomp_probe", None)
    if seen is None:
        return
    if seen.get("stale"):
        _GOMP_SEEN["stale"] = True
    elif seen.get("count") is not None:
        _GOMP_SEEN["sound_at"] = seen["count"]


def _gomp_stale():
    """Whether this (forked) thread holds a libgomp pool whose threads are gone: a probe,
    forked from here, runs an empty parallel region in its main thread; it hangs exactly
    when the cell's first parallel region would. About a fork and a millisecond; only
    when libgomp is loaded. The probe is killed after 200 ms (with the parent too)."""
    if not _gomp_loaded():
        return False
    import ctypes
    import select
    import signal

    try:
        gomp = ctypes.CDLL("libgomp.so.1")
        fn = ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p)  # void f(void *): ignores it
    except BaseException:
        return False
    me = os.getpid()
    r, w = os.pipe()
    try:
        pid = os.fork()
    except BaseException:
        os.close(r)
        os.close(w)
        return False
    if pid == 0:
        try:
            _die_with(parent_pid=me)
            os.close(r)
            gomp.GOMP_parallel(fn, None, ctypes.c_uint(0), ctypes.c_uint(0))
            os.write(w, b"1")
        finally:
            os._exit(0)
    os.close(w)
    try:
        ready = select.select([r], [], [], 0.2)[0]
    except BaseException:
        ready = []
    if not ready:
        try:
            os.kill(pid, signal.SIGKILL)
        except BaseException:
            pass
    try:
        os.waitpid(pid, 0)
    except BaseException:
        pass
    os.close(r)
    return not ready


def _in_fresh_thread(fn, ns):
    """Runs fn in a new thread and raises what it raised. A new thread has no OpenMP pool,
    so libgomp builds one with live threads: a parallel region the kernel's main thread
    used before the fork runs in the child instead of hanging. The timeout (SIGALRM's
    default action, RLIMIT_CPU) is the process's and still holds.

    Signal handlers can only be set in the main thread, so while the cell runs the main
    thread serves the cell's signal.signal calls; a handler's exception (a TimeoutError of
    an alarm) is raised in the cell's thread, as it would be in the kernel's."""
    import queue
    import signal
    import threading

    box = []
    carry = _thread_state()
    calls = queue.SimpleQueue()
    main = threading.get_ident()
    real = signal.signal

    def body():
        try:
            for restore in carry:
                restore()
            fn()
        except BaseException as e:  # handed to the caller with its traceback
            box.append(e)

    def proxy(signalnum, handler):
        if threading.get_ident() == main:
            return real(signalnum, handler)
        done, out = threading.Event(), []

        def call():
            try:
                out.append((True, real(signalnum, handler)))
            except BaseException as e:
                out.append((False, e))
            done.set()

        calls.put(call)
        done.wait()
        ok, v = out[0]
        if ok:
            return v
        raise v

    proxy.__wrapped__ = real
    signal.signal = proxy
    bound = []
    try:
        for k, v in list(ns.items()):
            if v is real:
                ns[k] = proxy  # from signal import signal, in an earlier cell
                bound.append(k)
    except BaseException:
        pass
    try:
        t = threading.Thread(target=body, name="premortem-shadow-cell", daemon=True)
        t.start()
    except RuntimeError:
        signal.signal = real
        for k in bound:
            ns[k] = real
        return fn()  # no thread could start (a limit): the main thread runs it
    while t.is_alive():
        try:
            try:
                call = calls.get(timeout=0.02)
            except queue.Empty:
                continue
            call()
        except BaseException as e:  # a handler the cell set raised here, in the main thread
            _raise_in(t, e)
    t.join()
    if box:
        raise box[0]


def _raise_in(thread, e):
    """Raises e's type in thread at its next bytecode (what a signal handler's exception
    does to the main thread a cell runs in)."""
    import ctypes

    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(type(e)))
    except BaseException:
        pass


def _thread_affine(e):
    """What ties a crash to the thread the cell ran in ("" when nothing does): an sqlite3
    connection made in another thread, asyncio's or tkinter's main-thread checks."""
    try:
        msg = str(e)
    except BaseException:
        return ""
    for needle, what in (("same thread", "an sqlite3 connection an earlier cell made"),
                         ("no current event loop in thread", "asyncio's event loop"),
                         ("main thread is not in main loop", "tkinter"),
                         ("only works in main thread", "a main-thread-only call")):
        if needle in msg:
            return what
    return ""


def _thread_state():
    """The kernel thread's thread-local settings a cell may depend on, as functions that
    set them again in another thread: torch's grad mode (torch.set_grad_enabled(False) in an
    earlier cell), numpy's error state (np.seterr(all='raise')) and the decimal context."""
    out = []
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            grad = bool(torch.is_grad_enabled())
            out.append(lambda: torch.set_grad_enabled(grad))
        except BaseException:
            pass
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            err, call = np.geterr(), np.geterrcall()
            out.append(lambda: (np.seterr(**err), np.seterrcall(call)))
        except BaseException:
            pass
    sk = sys.modules.get("sklearn")
    if sk is not None:
        try:
            cfg = sk.get_config()  # thread-local: set_config(transform_output="pandas")
            out.append(lambda: sk.set_config(**cfg))
        except BaseException:
            pass
    dec = sys.modules.get("decimal")
    if dec is not None:
        try:
            ctx = dec.getcontext().copy()
            out.append(lambda: dec.setcontext(ctx))
        except BaseException:
            pass
    return out


def _is_memory_error(e):
    if isinstance(e, MemoryError):
        return True
    try:
        msg = str(e)
    except BaseException:
        return False
    return type(e).__name__ == "RuntimeError" and ("can't allocate memory" in msg or "not enough memory" in msg
                                                  or "std::bad_alloc" in msg)


def _tb_span(tb):
    """[line, col, end line, end col] of the instruction that raised in a traceback entry,
    in the compiled (transformed) cell's coordinates, or None: the sub-expression that
    failed (`values[i + 1]` inside `deltas.append(values[i + 1] - v)`). Python 3.11 keeps
    these positions per instruction."""
    try:
        pos = list(tb.tb_frame.f_code.co_positions())[tb.tb_lasti // 2]
    except BaseException:
        return None
    if pos is None or any(p is None for p in pos):
        return None
    line, end, col, end_col = pos  # co_positions' order
    return [int(line), int(col), int(end), int(end_col)]


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
            if in_cell:
                pos = _tb_span(tb)
                if pos is not None:
                    fr["pos"] = pos
            frames.append(fr)
        tb = tb.tb_next
    if len(frames) > 30:
        frames = frames[:5] + frames[-25:]
    return frames, line


def _bound_types(ns, names):
    """The type of each of names in ns after a clean run ("" when unbound): the fix guard
    refuses a candidate that left a name the edited cell binds unbound or of another type.
    Only type() is read: nothing of the user's code runs."""
    out = {}
    for n in names:
        try:
            out[n] = _tname(type(ns[n])) if n in ns else ""
        except BaseException:
            pass
    return out


def _child_main(wfd, code, cell_code, lmap, timeout, trace, max_memory, rstate, old_mask, is_async, sh,
                sandbox="auto", types=()):
    import signal

    t0 = time.perf_counter()
    # A collection would write to every tracked object's header, copying the whole heap
    # page by page (copy-on-write); the child is short-lived and memory-capped.
    import gc

    gc.disable()
    try:
        os.setsid()
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
    count = getattr(sh, "execution_count", None) if sh is not None else None
    stale, probe = _gomp_known(count), None
    if stale is None:
        try:
            stale = _gomp_stale()  # before the sandbox: the probe is a fork
        except BaseException:
            stale = False
        probe = {"stale": stale, "count": count}
    phases = {"setup": time.perf_counter()}
    _keep_fds.add(wfd)
    try:
        # With namespaces this process is from here on G, pid 1 of the new PID namespace
        # (the forked child only relays G's exit status; see 31_sandbox).
        box = _enter_sandbox(sandbox, max_memory)
    except BaseException as e:
        box = _Box("fallback", "the sandbox could not be set up (%s)%s" % (_err(e), _FALLBACK_TAIL))
    phases["sandbox"] = time.perf_counter()
    # the namespace sandbox's tmpfs is paid from the same cap (the fallback's tree is on disk)
    _limits(timeout, max_memory - (box.scratch_bytes if box.kind == "namespaces" else 0))
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
    ns = None
    try:
        phases["rng"] = time.perf_counter()
        _install_child_guards(sh, out, err, box)
        phases["guards"] = time.perf_counter()
        ns = sh.user_ns if sh is not None else _user_ns()
        _meta_begin(ns, code, lmap)  # the CUDA guard; meta tensors in a meta run (37_metarun.py)
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

        def run_cell():
            if tracer is not None:
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

        if stale:
            _in_fresh_thread(run_cell, ns)
        else:
            run_cell()
    except ShadowRefusal:
        pass
    except BaseException as e:
        _meta_crash(e)  # 37_metarun.py
        boxed = _sandbox_outcome(box, e)
        if boxed is not None:
            res = boxed
        elif stale and _thread_affine(e):
            res = {"status": "died", "reason": "the shadow run had to run the cell in a thread of its own (an OpenMP pool of "
                   "the kernel's does not survive fork), and the cell uses something tied to the kernel's thread (%s); "
                   "outcome unknown" % _thread_affine(e)}
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
                sfacts = _site_facts(e.__traceback__)  # 35_crashfacts.py
            except BaseException:
                sfacts = None
            if sfacts:
                res["site_facts"] = sfacts
            try:
                sugg = _crash_suggestions(e)  # 35_crashfacts.py
            except BaseException:
                sugg = None
            if sugg:
                res["suggestions"] = sugg
    if types and ns is not None and res.get("status") == "ok":
        res["types"] = _bound_types(ns, types)
    native = _sc_refusal() if box.kind != "namespaces" else None
    if native is not None and not _refusals:
        _refusals.append(native)
    if _refusals:
        res = {"status": "refused", "refused": _refusals[0],
               "reason": "the cell tried a side effect a shadow run does not allow (%s); outcome unknown" % _refusals[0]}
    elif _scratch_full(box):  # even when the cell caught the error (33_fallback's _Quota)
        res = _scratch_full_result(box)
    res = _meta_report(res)  # 37_metarun.py
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
    if probe is not None:
        res["gomp_probe"] = probe  # the kernel keeps it (_gomp_record) for the next runs
    try:
        data = json.dumps(res, separators=(",", ":"), allow_nan=False, default=str).encode()
    except BaseException:
        data = json.dumps(_sanitize(res), default=str).encode()
    view = memoryview(data)
    while view:
        n = os.write(wfd, view)
        view = view[n:]
    os._exit(0)
