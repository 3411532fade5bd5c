# ---------------------------------------------------------------------------------------------
# Fast dev run: sizes at full length (the test a "likely" crash must pass)
#
# A capped loop leaves its products short (2 losses where the full run has 20). A crash on a
# line that reads them may be the shortening's: the learning-curve cell that plots
# range(1, EPOCHS + 1) against one loss per epoch crashes only when capped. Before such a
# crash may count, the capped child fits the size of every loop-produced value as a linear
# function of the loops' iteration counts (snapshots at each iteration boundary, exact
# rational arithmetic: a size that is not exactly linear is not extrapolated), predicts its
# size at the full counts (len() of each loop's iterable), puts stand-ins of that size in
# the namespace (the value's own elements repeated) and runs the crash statement again. The
# crash counts only if it happens again; when it disappears, or anything cannot be
# extrapolated, the verdict is unknown with the reason. All of this runs in the capped child.

_DS = {"n": {}, "snaps": {}, "keep": [], "watch": (), "on": False, "started": {}, "iters": {}, "totals": {}}
_DS_MAX_SNAPS = 400
_DS_MAX_STANDIN = 5000000


def _ds_begin(watch):
    """In the capped child only: start recording the sizes of the names in watch."""
    _DS.update(n={}, snaps={}, keep=[], watch=tuple(watch)[:32], on=bool(watch), started={}, iters={}, totals={})


def _ds_size(obj):
    """len() of a value whose length is cheap and side-effect free; None otherwise."""
    t = type(obj)
    if t in (list, tuple, dict, set, frozenset, bytearray):
        return len(obj)
    mod = getattr(t, "__module__", "") or ""
    name = t.__name__
    try:
        if mod == "collections" and name == "deque":
            return len(obj)
        if (mod == "numpy" and name == "ndarray") or (mod == "torch" and name in ("Tensor", "Parameter")):
            return int(obj.shape[0]) if len(obj.shape) >= 1 else None
        if mod.startswith("pandas") and name in ("DataFrame", "Series"):
            return len(obj)
    except BaseException:
        return None
    return None


def _ds_entry(lid, frame, top):
    """A loop entry started: count it (entries per parent iteration are checked later) and,
    for a loop of the cell's top level (top), snapshot the sizes its iterations start from."""
    if _DS["on"]:
        _DS["started"].setdefault(lid, [0])[0] += 1
        if top:
            _ds_snap(frame, True)


def _ds_iter_done(lid, frame, top=False):
    """One iteration of loop lid completed: count it and snapshot the watched sizes. top: lid
    is a loop of the cell's top level."""
    if not _DS["on"]:
        return
    n = _DS["n"]
    n[lid] = n.get(lid, 0) + 1
    _ds_snap(frame, False, "top" if top else lid)


def _ds_snap(frame, start, group="top"):
    """Records the watched sizes. group says where in the cell the snapshot is taken: between
    the iterations of a top-level loop ("top": no other loop is midway), or between those
    of inner loop lid, midway through its parents' iterations, where a value appended to
    between two inner loops (a loss per epoch after the batches, before validation) has
    an offset of its own."""
    n = _DS["n"]
    if frame is None:
        return
    try:
        loc = frame.f_locals
        glb = frame.f_globals
    except BaseException:
        return
    for name in _DS["watch"]:
        obj = loc.get(name, glb.get(name)) if loc is not glb else glb.get(name)
        if obj is None:
            continue
        s = _ds_size(obj)
        if s is None:
            continue
        lst = _DS["snaps"].setdefault(name, [])
        if len(lst) >= _DS_MAX_SNAPS:
            continue
        _DS["keep"].append(obj)  # a freed value's id must not be reused by another
        lst.append((id(obj), dict(n), s, start, group))


def _ds_entry_done(lid, iters, total):
    """An entry of loop lid ended after iters iterations (total: len() when the cap cut it)."""
    if _DS["on"]:
        _DS["iters"].setdefault(lid, set()).add(int(iters))
        _DS["totals"].setdefault(lid, set()).add(total)


def _ds_solve(rows, target):
    """rows: [(x vector, y)]; returns target . beta for the exact linear fit y = x . beta, or
    (None, why) when the fit is not exact or target's prediction is not determined."""
    from fractions import Fraction

    m = len(target)
    mat = [[Fraction(v) for v in x] + [Fraction(y)] for x, y in rows]
    piv = []
    r = 0
    for c in range(m):
        p = next((i for i in range(r, len(mat)) if mat[i][c] != 0), None)
        if p is None:
            continue
        mat[r], mat[p] = mat[p], mat[r]
        inv = mat[r][c]
        mat[r] = [v / inv for v in mat[r]]
        for i in range(len(mat)):
            if i != r and mat[i][c] != 0:
                f = mat[i][c]
                mat[i] = [a - f * b for a, b in zip(mat[i], mat[r])]
        piv.append(c)
        r += 1
    for i in range(r, len(mat)):
        if mat[i][m] != 0:
            return None, "its size does not grow linearly with the loops' iterations"
    # target must lie in the row space: reduce it by the pivot rows.
    t = [Fraction(v) for v in target] + [Fraction(0)]
    for i, c in enumerate(piv):
        if t[c] != 0:
            f = t[c]
            t = [a - f * b for a, b in zip(t, mat[i])]
    if any(v != 0 for v in t[:m]):
        return None, "the capped run does not show how its size grows with every loop it depends on"
    val = -t[m]
    if val.denominator != 1:
        return None, "its extrapolated size is not a whole number"
    return int(val), ""


def _ds_full_counts(meta, short):
    """Iterations each loop runs in the full run of a top-level cell (None where unknown),
    and why a count is unknown."""
    loops = meta["loops"]
    n = _DS["n"]
    full, why = {}, {}
    order = sorted(loops, key=lambda l: len(loops[l].get("path", ())))
    for lid in order:
        m = loops[lid]
        per = None
        totals = _DS["totals"].get(lid, set())
        iters = _DS["iters"].get(lid, set())
        if lid in short:
            if m["kind"] != "for" or None in totals or len(totals) != 1:
                why[lid] = "the length of the iterable of line %d (%s) is not known" % (m["line"], m["header"])
            else:
                per = next(iter(totals))
        elif len(iters) == 1:
            per = next(iter(iters))
        else:
            why[lid] = "the loop at line %d ran a different number of iterations per entry" % m["line"]
        if per is None:
            full[lid] = None
            continue
        if m.get("func") is not None:
            full[lid] = None
            why[lid] = "the loop at line %d is in function %s" % (m["line"], m["func"])
            continue
        path = m.get("path") or []
        entries = _DS["started"].get(lid, [0])[0]
        if not path:
            full[lid] = per * entries if entries == 1 else None
            if entries != 1:
                why[lid] = "the loop at line %d started %d times" % (m["line"], entries)
            continue
        parent = path[-1]
        # every iteration of the parent enters the loop once (no if around it cut entries)
        if full.get(parent) is None or entries != n.get(parent, 0):
            full[lid] = None
            why[lid] = "the loop at line %d does not run once per iteration of the loop at line %d" % (
                m["line"], loops[parent]["line"])
            continue
        full[lid] = full[parent] * per
    return full, why


def _ds_fit(name, obj, meta, short, full):
    """The size obj (bound to name) has at the end of the full run, or (None, why)."""
    lids = sorted(meta["loops"])
    snaps = [s for s in _DS["snaps"].get(name, ()) if s[0] == id(obj)]
    cur = _ds_size(obj)
    if cur is None:
        return None, "%s is a %s, whose size the fast dev run does not extrapolate" % (name, type(obj).__name__)
    # The value must have existed when a top-level loop began: one made inside the loops
    # (a list reset per epoch) has no meaningful start, and its fit would be a line through
    # the last epoch only.
    first = next((i for i, s in enumerate(snaps) if s[3]), None)
    if first is None:
        return None, "%s was made inside the loops, not before them" % name
    snaps = snaps[first:]
    now = dict(_DS["n"])
    # size = a_g + sum of b_L * N_L: one slope per loop, one offset per place the snapshots
    # are taken at (the top level, or between the iterations of an inner loop); the end of
    # the cell is the top level
    groups = sorted(set(s[4] for s in snaps if s[4] != "top"))
    pre = lambda g: [1 if g == "top" else 0] + [1 if g == x else 0 for x in groups]
    rows = [(pre(g) + [c.get(l, 0) for l in lids], s) for _, c, s, _, g in snaps]
    rows.append((pre("top") + [now.get(l, 0) for l in lids], cur))
    if len(snaps) < 2:
        return None, "%s was not seen growing over the loops' iterations" % name
    # A loop the value does not depend on needs no full count: solve with a target of the
    # observed count first to find which coefficients matter.
    target = []
    for l in lids:
        f = full.get(l)
        target.append(now.get(l, 0) if f is None else f)
    val, why = _ds_solve(rows, pre("top") + target)
    if val is None:
        return None, "%s: %s" % (name, why)
    for i, l in enumerate(lids):
        if full.get(l) is None:
            # the coefficient of a loop without a full count must be 0: moving its count must
            # not move the prediction
            bumped = list(target)
            bumped[i] += 1
            v2, _ = _ds_solve(rows, pre("top") + bumped)
            if v2 is None or v2 != val:
                return None, "%s grows with the loop at line %d, but %s" % (name, meta["loops"][l]["line"],
                                                                                "its full count is not known")
    return val, ""


def _ds_standin(obj, size):
    """A value like obj with size entries along its first axis (its own entries repeated)."""
    k = _ds_size(obj)
    if not k or size < 0 or size > _DS_MAX_STANDIN:
        return None
    idx = [i % k for i in range(size)]
    t = type(obj)
    if t is list:
        return [obj[i] for i in idx]
    if t is tuple:
        return tuple(obj[i] for i in idx)
    mod = getattr(t, "__module__", "") or ""
    try:
        if mod == "numpy":
            import numpy

            return numpy.take(obj, numpy.asarray(idx, dtype=numpy.intp), axis=0)
        if mod == "torch":
            import torch

            return obj[torch.as_tensor(idx, dtype=torch.long)]
    except BaseException:
        return None
    return None


def _ds_recheck(meta, short, res, exc_name, at=None):
    """Runs the crash's top-level statement again with the loops' products at their full
    sizes: {"verdict": "crash"|"clean"|"unknown", "reason", "sizes"}.

    at, the index of a top-level statement of a run that ended clean, checks that statement
    instead (exc_name is then None): a value the loops made that has no size (a score, a
    model) is taken as it is, since its structure is the full run's; when no value it reads
    changes size at full length nothing runs again ("clean")."""
    import ast

    stmts = meta["stmts"]
    nodes = meta.get("nodes") or []
    idx = at
    if at is None:
        frames = [f for f in res.get("frames") or [] if f.get("in_cell")]
        if not frames:
            return {"verdict": "unknown", "reason": "the crash has no frame in the cell"}
        top = frames[0].get("line") or 0
        for i, r in enumerate(stmts):
            if r["func"] is None and not r["loops"] and r["lo"] <= top <= r["hi"]:
                idx = i
        if idx is None:
            return {"verdict": "unknown", "reason": "the crash line %d is inside a loop the fast dev run shortened" % top}
    else:
        top = stmts[idx]["lo"]
    node = nodes[idx] if idx < len(nodes) else None
    if node is None or _dr_header(node) is not None:
        if at is None:
            return {"verdict": "unknown", "reason": "the crash is in a compound statement at line %d" % top}
        return {"verdict": "unknown", "reason": "line %d is a compound statement that reads what the shortened loops made"
                % top}
    names, funcs = _devrun_tainted(meta, short, before=idx)
    rec = stmts[idx]
    ns = _user_ns()
    shell = _shell()
    if shell is not None:
        ns = shell.user_ns
    # np.asarray(x) marks np as changed (a method call on a name); a module is no product
    names = set(n for n in names if not isinstance(ns.get(n), types.ModuleType))
    if funcs.intersection(rec["calls"]):
        return {"verdict": "unknown", "reason": "the crash line calls a function whose loops were shortened" if at is None
                else "line %d calls a function whose loops were shortened" % top}
    full, fwhy = _ds_full_counts(meta, short)
    direct = set()
    for lid in short:
        direct.update(meta["loops"][lid]["produces"])
    # The names to put at full size, and the statements after the loops that derive the
    # crash line's other inputs from them (plain assignments only, run again in order).
    need = sorted(names.intersection(rec["reads"]))
    if not need and at is not None:
        return {"verdict": "clean", "reason": "line %d reads nothing the shortened loops made" % top}
    if not need:
        # the innermost line (in a function the statement calls) reads them: the stand-ins
        # would not reach it
        return {"verdict": "unknown", "reason": "the crash statement at line %d reads the shortened loops' products "
                "only through a function it calls" % rec["lo"]}
    last_loop = max((i for i, r in enumerate(stmts) if r["func"] is None and not r["loops"]
                     and i < idx and nodes[i] is not None and isinstance(nodes[i], (ast.For, ast.While))), default=-1)
    rerun, sized, sizes = [], {}, []
    todo, seen = list(need), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        defs = [i for i in range(last_loop + 1, idx) if stmts[i]["func"] is None and not stmts[i]["loops"]
                and name in stmts[i]["stores"]]
        if defs:
            for i in defs:
                n = nodes[i]
                if not isinstance(n, ast.Assign) or not all(isinstance(t, ast.Name) for t in n.targets) or \
                        names.intersection(set(stmts[i]["stores"]) - set(t.id for t in n.targets)):
                    return {"verdict": "unknown", "reason": "line %d changes %s after the loops in a way the fast dev run "
                            "does not replay" % (stmts[i]["lo"], name)}
                if name in stmts[i]["reads"]:
                    return {"verdict": "unknown", "reason": "line %d rebinds %s from itself after the loops" % (
                        stmts[i]["lo"], name)}
                if funcs.intersection(stmts[i]["calls"]):
                    # run again, it would shorten the same loops again
                    return {"verdict": "unknown", "reason": "line %d makes %s by calling a function whose loops were "
                            "shortened" % (stmts[i]["lo"], name)}
                if i not in rerun:
                    rerun.append(i)
                todo.extend(names.intersection(stmts[i]["reads"]))
            continue
        if at is not None and name in ns and _ds_size(ns[name]) is None and not _DS["snaps"].get(name):
            continue  # a score, a model, a flag: the full run's structure, another value
        if name not in direct and name in names:
            return {"verdict": "unknown", "reason": "%s derives from the shortened loops in a way the fast dev run "
                    "cannot extrapolate" % name}
        if name not in ns:
            return {"verdict": "unknown", "reason": "%s is not a name of the cell's namespace" % name}
        obj = ns[name]
        if _ds_size(obj) is None and not _DS["snaps"].get(name):
            return {"verdict": "unknown", "reason": "%s is a %s, whose size the fast dev run does not extrapolate"
                    % (name, type(obj).__name__)}
        val, why = _ds_fit(name, obj, meta, short, full)
        if val is None:
            extra = "; ".join(sorted(set(fwhy.values())))[:300]
            return {"verdict": "unknown", "reason": why + ("; " + extra if extra and "count" in why else "")}
        cur = _ds_size(obj)
        if val != cur:
            st = _ds_standin(obj, val)
            if st is None:
                return {"verdict": "unknown", "reason": "no stand-in of %d entries for %s (a %s)" % (val, name,
                                                                                                      type(obj).__name__)}
            sized[name] = st
        sizes.append("%s: %d in the capped run, %d at full length" % (name, cur, val))
    if at is not None and not sized:
        return {"verdict": "clean", "reason": "what line %d reads has the same size at full length" % top, "sizes": sizes}
    saved = {}
    if at is not None:
        # a clean run's statements are checked one after the other, each from the run's own
        # state: what this check puts at full size and binds again is put back after it
        missing = object()
        for name in set(sized).union(*(stmts[i]["stores"] for i in rerun + [idx])):
            saved[name] = ns.get(name, missing)
    for name, st in sized.items():
        ns[name] = st
    try:
        try:
            for i in sorted(rerun) + [idx]:
                code = compile(ast.Module(body=[nodes[i]], type_ignores=[]), CELL_FILENAME, "exec")
                exec(code, ns)
        finally:
            for name, v in saved.items():
                if v is missing:
                    ns.pop(name, None)
                else:
                    ns[name] = v
    except BaseException as e:
        if at is not None:
            return {"verdict": "unknown", "reason": "with the loops' products at their full sizes line %d raises %s"
                    % (top, type(e).__name__), "sizes": sizes}
        if type(e).__name__ == exc_name:
            return {"verdict": "crash", "reason": "with the loops' products at their full sizes the line raises %s again"
                    % exc_name, "sizes": sizes}
        return {"verdict": "unknown", "reason": "at full sizes the line raises %s instead of %s" % (type(e).__name__,
                                                                                              exc_name),
                "sizes": sizes}
    return {"verdict": "clean", "reason": "with the loops' products at their full sizes the line runs clean", "sizes": sizes}


# What the recheck and the capped run (25_devrun.py, a later part) both read of the cell.


def _dr_header(node):
    """The part of a compound statement that runs before its body (its test, iterable...)."""
    import ast

    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.iter, node.target]
    if isinstance(node, (ast.While, ast.If)):
        return [node.test]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return list(node.items)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return list(getattr(node, "decorator_list", []))
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        return []
    if type(node).__name__ == "Match":
        return [node.subject]
    return None  # a simple statement: all of it


def _devrun_tainted(meta, short, before=None):
    """Names that may hold what the shortened loops produced, and the functions whose calls
    run a shortened loop: the loops' products, then (to a fixed point) whatever a statement
    computes from them or from calling such a function. before, the index of a top-level
    statement, leaves out the top-level statements from it on: they run after it, so what
    they store cannot reach it (`df["n"] = values` reads df, but does not taint it for
    itself)."""
    names = set()
    called = set()
    for lid in short:
        names.update(meta["loops"][lid]["produces"])
        called.update(meta["loops"][lid].get("calls", ()))
    # Functions of the cell that a shortened loop calls ran fewer times: what they store
    # (globals they append to, objects they mutate) is the loop's product too.
    inner = set(fn for fn in called if fn in meta["funcs"] or fn in meta["calls_in"])
    grew = True
    while grew:
        grew = False
        for fn in list(inner):
            for g in meta["calls_in"].get(fn, ()):
                if g not in inner and (g in meta["funcs"] or g in meta["calls_in"]):
                    inner.add(g)
                    grew = True
    for r in meta["stmts"]:
        if r["func"] in inner:
            names.update(r["stores"])
    # a function of an earlier cell with a shortened loop, or called from one: whatever it
    # stores may be what the loop made (a global history list); its statements are not the
    # cell's, so all of its stores count
    for fn, stores in (meta.get("ext_stores") or {}).items():
        if fn in inner or any(l in short for l in meta["funcs"].get(fn, ())):
            names.update(stores)
    # torch.no_grad(), np.random.seed(0) read as method calls that change the module: a
    # module is no product, and what a line computes from it alone is not either
    ns = _user_ns()
    modules = set(x for x in ns if isinstance(ns.get(x), types.ModuleType))
    names -= modules
    funcs = set()
    for fn, lids in meta["funcs"].items():
        if any(l in short for l in lids):
            funcs.add(fn)
    changed = True
    while changed:
        changed = False
        for fn, called in meta["calls_in"].items():
            if fn not in funcs and funcs.intersection(called):
                funcs.add(fn)
                changed = True
    changed = True
    rounds = 0
    while changed and rounds < 50:
        changed = False
        rounds += 1
        for i, r in enumerate(meta["stmts"]):
            if before is not None and i >= before and r["func"] is None:
                continue
            if names.intersection(r["reads"]) or funcs.intersection(r["calls"]):
                new = set(r["stores"]) - names - modules
                if new:
                    names.update(new)
                    changed = True
    return names, funcs
