# ---------------------------------------------------------------------------------------------
# Shadow runs: entering the child's sandbox (namespaces, else the fallback; see 31_sandbox.py)


def _enter_sandbox(sandbox, max_memory):
    """Called by the child C before anything else of the run. Returns the _Box in force; with
    namespaces, the caller is then G (pid 1 of the new PID namespace; C never returns).
    box.phases holds the seconds each step took (reported as child_phases_ms sandbox_*)."""
    t = [time.perf_counter()]

    def mark(box, name):
        now = time.perf_counter()
        box.phases[name] = box.phases.get(name, 0.0) + now - t[0]
        t[0] = now

    survey = _survey_fds()
    if sandbox == "fallback":
        box = _Box("fallback", "the fallback sandbox was asked for (the sandbox setting)" + _FALLBACK_TAIL)
    else:
        box = _Box("namespaces", _NS_REASON)
        mark(box, "survey")
        try:
            box.scratch_bytes = _scratch_size(max_memory)
            _ns_setup(box, box.scratch_bytes)
        except OSError as e:
            # Namespaces entered but not completed are this child's alone (the staging mount
            # is undone): the fallback's guards apply as anywhere else.
            box = _Box("fallback", _fallback_reason(e) + _FALLBACK_TAIL)
        t[0] = time.perf_counter()
    if box.kind == "fallback":
        import tempfile

        try:
            tmp = tempfile.gettempdir()
            box.scratch_bytes = _fallback_scratch_size(max_memory, tmp)
            box.scratch = _scratch[0] = _Scratch(os.path.join(
                tmp, "premortem-shadow-%d-%d" % (os.getppid(), os.getpid())), box.scratch_bytes)
            import signal

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the cap a write fails (EFBIG), not the run
            box.scratch.quota.refresh()  # RLIMIT_FSIZE at the cap from the first write
        except OSError:
            pass  # first-import caches are then refused like any other write
        mark(box, "scratch")
    if box.kind == "namespaces":
        import signal

        alive_r, alive_w = os.pipe()  # C holds alive_w until it dies: G's sign that C lives
        pid = os.fork()
        if pid != 0:
            os.close(alive_r)
            _relay(pid)
        os.close(alive_w)
        _die_with(alive_fd=alive_r)
        os.close(alive_r)
        mark(box, "fork_init")
        lib = _libc()
        _fresh_proc(box, lib)
        if not _ro_proc(lib):
            box.reason += " (/proc is not mounted: its kernel settings could not be made read-only)"
        mark(box, "proc")
        try:
            _lock_mounts()
        except OSError:
            box.reason += " (mounts not locked: %s)" % _err(sys.exc_info()[1])
        mark(box, "lock")
        why = _fence_keyrings()
        if why:
            box.reason += " (%s)" % why
        mark(box, "keyring")
    _contain(box, survey, lambda name: mark(box, name))
    return box


