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


# Lazy iterables a repair materialises (a map read by len()): their type is the fact.
_CF_LAZY = frozenset(type(x) for x in (map(len, ()), zip(), filter(None, ()), (i for i in ()), {}.keys(), {}.values(), {}.items()))


def _crash_facts(tb, code, lmap):
    """facts.Value (JSON) by name of what the crash line reads and what the cell's bindings
    of those read, as the innermost cell frame held it; None when there is nothing."""
    frame, lineno = _cell_frame(tb)  # 34_crashkeys.py
    if frame is None:
        return None
    return _frame_facts(frame, _src_lines(code), _map(lmap, lineno))


def _site_facts(tb):
    """Crash facts of the innermost frame below the cell that runs code an earlier cell
    defined (a forward, a helper: the repair library's site, repair.FrameSite), as that frame
    held them; None when the traceback goes through no such code. IPython keeps each executed
    cell's source in linecache and, so that checkcache keeps it, in linecache._ipython_cache
    (IPython/core/compilerop.py); without IPython, a linecache entry no file on disk backs
    is a cell's."""
    import linecache

    cells = getattr(linecache, "_ipython_cache", None)
    frame, lineno = None, 0
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn != CELL_FILENAME and fn in linecache.cache:
            if cells is not None:
                ok = fn in cells
            else:
                ok = not os.path.exists(fn)
            if ok:
                frame, lineno = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return None
    lines = [l.rstrip("\r\n") for l in linecache.cache[frame.f_code.co_filename][2]]
    return _frame_facts(frame, lines, lineno)


def _frame_facts(frame, lines, ln):
    """The facts of what line ln (1-based) of lines reads, and of what the top-level bindings
    of those read, as frame holds them."""
    global _CK_STRING
    import re

    if _CK_STRING is None:
        _CK_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
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
        lazy = type(obj) in _CF_LAZY
        try:
            v = {"name": n, "exists": True}
            v.update(_describe(obj, ctx))
        except BaseException as e:  # the child reports what it has; nothing is lost by going on
            v = {"name": n, "exists": True, "type": _tname(type(obj)), "error": "inspector: %s" % _err(e)}
        if v.get("kind") in ("callable", "module", "class") or v.get("kind") == "other" and not lazy:
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
_CS_MOVE = 2  # CPython's suggestion costs (Lib/traceback.py, Python/suggestions.c)
_CS_CASE = 1
_CS_LONGEST = 40


def _cs_distance(a, b, max_cost):
    """CPython 3.12's Levenshtein distance for "Did you mean": substitutions and moves cost
    2, a change of case 1, and anything over max_cost stops early."""
    if a == b:
        return 0
    pre = 0
    while pre < len(a) and pre < len(b) and a[pre] == b[pre]:
        pre += 1
    a, b = a[pre:], b[pre:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if not a or not b:
        return _CS_MOVE * (len(a) + len(b))
    if len(a) > _CS_LONGEST or len(b) > _CS_LONGEST:
        return max_cost + 1
    if len(b) < len(a):
        a, b = b, a
    if (len(b) - len(a)) * _CS_MOVE > max_cost:
        return max_cost + 1
    row = list(range(_CS_MOVE, _CS_MOVE * (len(a) + 1), _CS_MOVE))
    result = 0
    for bi, bc in enumerate(b):
        distance = result = bi * _CS_MOVE
        minimum = max_cost + 1
        for i, ac in enumerate(a):
            sub = distance + (0 if bc == ac else _CS_CASE if bc.lower() == ac.lower() else _CS_MOVE)
            distance = row[i]
            result = min(min(result, distance) + _CS_MOVE, sub)
            row[i] = result
            minimum = min(minimum, result)
        if minimum > max_cost:
            return max_cost + 1
    return result


def _crash_suggestions(e):
    """For a NameError or AttributeError, the names that do exist and that Python's own "Did
    you mean" would accept, nearest first (facts.ShadowResult.Suggestions): dir() of the
    object the attribute was looked up on, the innermost frame's locals, globals and builtins
    for a name. 3.12 prints one such suggestion; 3.11 has e.name and e.obj but prints none,
    so the child computes them with the same costs and bound. The child is about to exit:
    dir() of a user object runs its code there only."""
    name = getattr(e, "name", None)
    if not isinstance(e, (AttributeError, NameError)) or not isinstance(name, str) or not name:
        # A refused value, or an attribute error that names no attribute (matplotlib's
        # "'Text' object has no property 'fontweigth'"): the quoted words.
        return _value_suggestions(e)
    if isinstance(e, AttributeError):
        obj = getattr(e, "obj", _MISSING)
        if obj is _MISSING:
            return None
        try:
            pool = dir(obj)
        except BaseException:
            return None
    elif isinstance(e, NameError):
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None:
            return None
        import builtins

        f = tb.tb_frame
        pool = list(f.f_locals) + list(f.f_globals) + dir(builtins)
    else:
        return None
    return _cs_nearest(name, pool)


def _cs_nearest(name, pool):
    """The names of pool within Python's "Did you mean" bound of name, nearest first."""
    scored = []
    for n in set(p for p in pool[:5000] if isinstance(p, str) and p != name):
        if n.startswith("_") and not name.startswith("_"):
            continue
        bound = (len(n) + len(name) + 3) * _CS_MOVE // 6
        d = _cs_distance(name, n, bound)
        if d <= bound:
            scored.append((d, n))
    if not scored:
        return None
    scored.sort()
    return {"name": name, "candidates": [n for _, n in scored[:_CS_MAX]]}


_VS_TYPES = (dict, set, frozenset, list, tuple)
_VS_FRAMES = 6  # innermost frames searched for the valid values
_VS_LEN = 5000  # the longest container read


def _vs_quoted(msg):
    """The texts msg puts in single or double quotes, in order (an apostrophe inside a word
    opens nothing): the value a library refused is among them."""
    out, i = [], 0
    while i < len(msg):
        q = msg[i]
        if q in "'\"" and not (i > 0 and (msg[i - 1].isalnum() or msg[i - 1] == "_")):
            j = msg.find(q, i + 1)
            if j < 0:
                break
            w = msg[i + 1:j]
            if w and len(w) <= _CS_LONGEST and "\n" not in w and w not in out:
                out.append(w)
            i = j + 1
        else:
            i += 1
    return out


def _vs_near(w, n):
    """Whether the valid value n is one a user meant by w: the same but for case, within the
    "Did you mean" bound, w its start (acc for accuracy) or the initials of its words (mse
    for neg_mean_squared_error, whose neg_ only flips the sign for maximising)."""
    lw, ln = w.lower(), n.lower()
    if lw == ln or len(lw) >= 2 and ln.startswith(lw):
        return True
    words = [p for p in ln.replace("-", "_").split("_") if p]
    if len(words) >= 2 and len(lw) >= 2:
        ini = "".join(p[0] for p in words)
        if lw == ini or words[0] == "neg" and lw == ini[1:]:
            return True
    bound = (len(n) + len(w) + 3) * _CS_MOVE // 6
    return _cs_distance(w, n, bound) <= bound


def _value_suggestions(e):
    """For an exception that quotes a value the library refused ("'acc' is not a valid
    scoring value"), the valid values near it, as the code that raised holds them: the
    containers of strings (exactly dict, set, list or tuple, so no user code runs) among the
    locals of the innermost frames and the globals their code names, innermost first
    (sklearn's _SCORERS in get_scorer). A container that holds the quoted value itself is
    not the table of valid ones. None when nothing near is found."""
    try:
        words = _vs_quoted(str(e))
    except BaseException:
        return None
    if not words:
        return None
    frames, tb = [], e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    # A quoted class name ("'Text' object has no property ...") is no value.
    classes = set()
    for f in frames[-_VS_FRAMES:]:
        me = f.f_locals.get("self") if f.f_locals is not f.f_globals else None
        if me is not None:
            classes.update(c.__name__ for c in type(me).__mro__)
    words = [w for w in words if w not in classes]
    for f in reversed(frames[-_VS_FRAMES:]):
        g = f.f_globals
        # A module-level frame's locals are its globals (a cell's: the whole namespace):
        # only what its code names counts.
        pool = [] if f.f_locals is g else list(f.f_locals.values())
        pool += [g[n] for n in f.f_code.co_names if n in g]
        # The properties of the object a method of the raising code sets (an artist's
        # set_fontweight for fontweight=): the names it has setters for.
        me = f.f_locals.get("self") if f.f_locals is not g else None
        if me is not None:
            try:
                pool.append([n[4:] for n in dir(me) if n.startswith("set_") and len(n) > 4])
            except BaseException:
                pass
        tables = []
        for v in pool:
            if type(v) not in _VS_TYPES or len(v) > _VS_LEN:
                continue
            strs = [x for x in v if type(x) is str]
            if len(strs) >= 2:
                tables.append(strs)
        for w in words:
            near = set()
            for t in tables:
                if w in t:
                    continue
                near.update(n for n in t if n != w and _vs_near(w, n))
            if near:
                ranked = sorted(near, key=lambda n: (n.lower() != w.lower(), _cs_distance(w, n, 99), len(n), n))
                return {"name": w, "candidates": ranked[:_CS_MAX]}
    return None

