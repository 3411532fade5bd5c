# ---------------------------------------------------------------------------------------------
# Public calls: inspect, whoami


def _namespace(sh, ns):
    hidden = getattr(sh, "user_ns_hidden", {}) if sh is not None else {}
    out = []
    for k in list(ns.keys()):
        if not isinstance(k, str) or k.startswith("_"):
            continue
        if k in hidden and ns.get(k) is hidden.get(k):
            continue
        if k in ("In", "Out", "exit", "quit", "get_ipython"):
            continue
        out.append(k)
    out.sort()
    return out


def _imported(ns):
    roots = set()
    for val in list(ns.values()):
        try:
            if _isa(val, types.ModuleType):
                roots.add(_root(_idict(val).get("__name__")))
            elif type(val) in (types.FunctionType, types.BuiltinFunctionType) or _isa(val, type):
                mod = _modof(val)
                if isinstance(mod, str) and mod != "__main__":
                    roots.add(_root(mod))
        except BaseException:
            pass
    roots.update(m for m in _KNOWN_LIBS if m in sys.modules)
    roots.discard("builtins")
    roots.discard("")
    return sorted(r for r in roots if r in sys.modules)


def inspect(names, budget_ms=50, values=True, namespace=False):
    """Facts for names and attribute chains (facts.Inspection JSON)."""
    start = time.perf_counter()
    try:
        budget = float(budget_ms) if budget_ms else 50.0
    except BaseException:
        budget = 50.0
    ctx = _Ctx(bool(values), start + budget / 1000.0)
    sh = _shell()
    ns = _user_ns()
    out = {}
    for name in list(names or []):
        name = str(name)
        try:
            out[name] = _inspect_one(ns, name, ctx)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            out[name] = {"name": name, "exists": True, "error": "inspector: %s" % _err(e)}
    res = {"values": out, "inspector_version": VERSION}
    try:
        res["execution_count"] = int(getattr(sh, "execution_count", 0) or 0)
    except BaseException:
        res["execution_count"] = 0
    if namespace:
        try:
            res["namespace"] = _namespace(sh, ns)
        except BaseException:
            pass
    try:
        res["imported"] = _imported(ns)
    except BaseException:
        pass
    if ctx.exceeded:
        res["budget_exceeded"] = True
    res["elapsed_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
    return _JSON(res)


def _inspect_one(ns, name, ctx):
    obj, note = _resolve(ns, name)
    if obj is _MISSING:
        v = {"name": name, "exists": False}
        if note:
            v["error"] = note
        return v
    if note is not None:
        return {"name": name, "exists": True, "error": note}
    if ctx.over():
        # Out of budget: the cheap part only.
        return {"name": name, "exists": True, "type": _tname(type(obj)), "error": "budget exceeded"}
    v = {"name": name, "exists": True}
    v.update(_describe(obj, ctx))
    return v


def whoami():
    """Which notebook this kernel serves, its cwd and pid."""
    ns = _user_ns()

    def s(x):
        return x if isinstance(x, str) else None

    return _JSON(
        {
            "vsc_ipynb_file": s(ns.get("__vsc_ipynb_file__")),
            "session": s(ns.get("__session__")),
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "version": VERSION,
        }
    )
