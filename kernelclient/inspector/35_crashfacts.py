# ---------------------------------------------------------------------------------------------
# Shadow runs: crash-frame facts (facts.ShadowResult.CrashFacts)
#
# A cell that builds its own data (X = df.drop(...); X_train, ... = train_test_split(X, y))
# and fails on it leaves the repair library nothing to reason with: the objects exist only in
# the child. On any exception the child describes, as the innermost cell frame held them at
# the crash, the names the crash line reads and the names read by the cell's statements that
# bind those (X_train's split reads X, X's drop reads df), with the inspector's own
# _describe: the same sampling and bounds, nothing of the user's code beyond what describe
# runs for an inspection. At most _CF_NAMES names, _CF_BUDGET_MS of the child's CPU time and _CF_BYTES of
# JSON. The child is about to exit, so nothing here can change the user's kernel.

_CF_NAMES = 8
_CF_BUDGET_MS = 50.0


class _CpuCtx(_Ctx):
    """A describe context whose budget is the child's CPU time, not the wall clock: the
    budget bounds the work done after a crash, and on a loaded machine the wall clock ran out
    after the first name (the crash facts then depended on the machine's load). The child is
    single-threaded and its whole run has a wall-time limit of its own."""

    __slots__ = ()

    def over(self):
        if time.thread_time() > self.deadline:
            self.exceeded = True
            return True
        return False


_CF_BYTES = 64 * 1024
_CF_IDENT = None
_CF_SKIP = frozenset(
    "and as assert async await break class continue def del elif else except finally for from global if "
    "import in is lambda nonlocal not or pass raise return try while with yield None True False "
    "print len range list dict set tuple int float str bool type isinstance".split()
)


def _cf_names(text):
    """The identifiers text reads (no attribute names, no keywords, no string contents)."""
    global _CF_IDENT
    import re

    if _CF_IDENT is None:
        _CF_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?!\s*=[^=])")
    text = (_CK_STRING.sub("''", text) if _CK_STRING is not None else text).split("#", 1)[0]
    out = []
    for m in _CF_IDENT.finditer(text):
        n = m.group(1)
        if n not in _CF_SKIP and n not in out:
            out.append(n)
    return out


def _cf_binders(lines, upto):
    """name -> the text (right-hand side) of the last top-level statement before line upto
    (1-based) that binds it with a plain assignment."""
    import re

    out = {}
    for ln in range(1, min(upto, len(lines) + 1)):
        line = lines[ln - 1]
        if not line or line[0] in " \t#":
            continue
        m = re.match(r"\s*([A-Za-z_][\w\s,()\[\]]*?)\s*=(?!=)(.*)$", line)
        if m is None:
            continue
        for t in re.findall(r"[A-Za-z_]\w*", m.group(1)):
            out[t] = m.group(2)
    return out


def _cf_value(frame, name):
    for scope in (frame.f_locals, frame.f_globals):
        if isinstance(scope, dict):
            if name in scope:
                return dict.__getitem__(scope, name)
        elif type(scope).__name__ == "FrameLocalsProxy":
            if name in scope:
                return scope[name]
    return _MISSING


def _crash_facts(tb, code, lmap):
    """facts.Value (JSON) by name of what the crash line reads and what the cell's bindings
    of those read, as the innermost cell frame held it; None when there is nothing."""
    global _CK_STRING
    frame, lineno = _cell_frame(tb)  # 34_crashkeys.py
    if frame is None:
        return None
    import re

    if _CK_STRING is None:
        _CK_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
    lines = code.split("\n")
    ln = _map(lmap, lineno)
    if not 1 <= ln <= len(lines):
        return None
    binders = _cf_binders(lines, ln)
    # Breadth first: the crash line's names, then what their bindings read, and so on.
    queue, names = _cf_names(lines[ln - 1]), []
    while queue and len(names) < 3 * _CF_NAMES:
        n = queue.pop(0)
        if n in names:
            continue
        names.append(n)
        if n in binders:
            queue.extend(x for x in _cf_names(binders[n]) if x not in names)
    ctx = _CpuCtx(True, time.thread_time() + _CF_BUDGET_MS / 1000.0)
    out, size = {}, 0
    for n in names:
        if len(out) >= _CF_NAMES or ctx.over():
            break
        obj = _cf_value(frame, n)
        if obj is _MISSING or isinstance(obj, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)):
            continue
        try:
            v = {"name": n, "exists": True}
            v.update(_describe(obj, ctx))
        except BaseException as e:  # the child reports what it has; nothing is lost by going on
            v = {"name": n, "exists": True, "type": _tname(type(obj)), "error": "inspector: %s" % _err(e)}
        if v.get("kind") in ("other", "callable", "module", "class"):
            continue  # nothing a repair reads, and user objects' attributes are noise
        try:
            n_bytes = len(json.dumps(v, default=str))
        except BaseException:
            continue
        if size + n_bytes > _CF_BYTES:
            continue
        size += n_bytes
        out[n] = v
    return out or None


_CS_MAX = 3


def _crash_suggestions(e):
    """For a NameError or AttributeError, the names that do exist and are spelled nearest to
    the missing one (facts.ShadowResult.Suggestions): dir() of the object the attribute was
    looked up on, the innermost frame's locals, globals and builtins for a name. This is what
    the interpreter's own "Did you mean" reads (3.12 prints it; 3.11 has e.name and e.obj
    but prints nothing). The child is about to exit: dir() of a user object runs its code
    there only."""
    import difflib

    name = getattr(e, "name", None)
    if not isinstance(name, str) or not name:
        return None
    if isinstance(e, AttributeError):
        obj = getattr(e, "obj", _MISSING)
        if obj is _MISSING:
            return None
        try:
            pool = [n for n in dir(obj) if isinstance(n, str)]
        except BaseException:
            return None
        cutoff = 0.6
    elif isinstance(e, NameError):
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None:
            return None
        f = tb.tb_frame
        import builtins

        pool = list(f.f_locals) + list(f.f_globals) + dir(builtins)
        pool = [n for n in pool if isinstance(n, str) and not n.startswith("_")]
        cutoff = 0.75
    else:
        return None
    if len(pool) > 5000:
        pool = pool[:5000]
    near = difflib.get_close_matches(name, set(pool) - {name}, n=_CS_MAX, cutoff=cutoff)
    if not near:
        return None
    return {"name": name, "candidates": near}
