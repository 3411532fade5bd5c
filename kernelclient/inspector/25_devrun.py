# ---------------------------------------------------------------------------------------------
# Fast dev run: the cell with its loops capped (PyTorch Lightning's fast_dev_run idea)
#
# The parent transforms the cell's AST before forking: every `for` iterable is wrapped in
# _dr_for (a generator that stops after the cap, peeking one element to know the loop was
# cut short), every `while` test gets `and _dr_while(id)` (a counter reset by a _dr_enter(id)
# statement before the loop). New nodes take the loop's source location, so every line number
# of the cell stays exact. The child running the capped code counts per loop how often it was
# entered, how many iterations it ran and whether the cap cut it; _devrun_report then says
# whether the crash line reads state the shortened loops produced (a likely crash, which only
# the full run can confirm) or not (a confirmed crash).

_DEVRUN_MODULE = "_premortem_inspector"
# Method calls that do not change the value a later line reads in a way the number of
# iterations matters for (mode switches, gradient plumbing).
_DR_NOT_MUTATING = frozenset(["train", "eval", "zero_grad", "backward", "step", "item", "cpu", "numpy", "detach",
                              "size", "dim", "print", "write", "flush", "set_postfix", "set_description", "update_bar"])

_DR = {"meta": None, "stats": {}, "cap": 0, "caps": {}, "t0": 0.0, "window": 0.0, "hits": set()}
# A loop over this many items or fewer (a dict of models, the folds, a few columns) is not a
# long loop by itself: past the cap it goes on while the capped run has time for it.
_DR_FEW_ITEMS = 8


class _DrStat(object):
    __slots__ = ("entries", "ran", "cur", "shortened", "total", "short_ran", "last", "began", "uniform")

    def __init__(self):
        self.entries = 0  # times the loop started
        self.ran = 0  # most iterations in one entry
        self.cur = 0  # iterations of the current entry (while loops)
        self.shortened = 0  # entries the cap cut short
        self.total = None  # len() of the iterable of a shortened entry, when known
        self.short_ran = 0
        # the last item's iteration, run after the cap (_dr_last): 0 not run, 1 running (a
        # crash now is that iteration's), 2 ran to its end
        self.last = 0
        self.began = 0.0  # when the current entry of a while loop began
        # every shortened entry went over items of one make (_dr_uniform): None before the
        # first shortened entry, then True or False
        self.uniform = None


def _dr_stat(lid):
    st = _DR["stats"].get(lid)
    if st is None:
        st = _DR["stats"][lid] = _DrStat()
    return st


def _dr_for(iterable, lid, hint=None):
    """The loop's iterable, stopped after the cap; the cap+1-th element is only peeked.
    hint, for `enumerate(x)` and `zip(a, b)` over names, is ("enumerate", x, start) or
    ("zip", a, b, ...): what the last item is made of (_dr_last)."""
    if hint is None and (_DR.get("meta") or {}).get("loops", {}).get(lid, {}).get("last"):
        got = _dr_folds_of(iterable)
        if got is not None:
            iterable, hint = got
    it = iter(iterable)  # as the for statement would: errors surface at the for line
    return _dr_for_gen(iterable, it, lid, hint)


class _DrFolds(list):
    """The folds of a scikit-learn splitter's split(), made before the loop: (train, test)
    index arrays, one per fold, of one make (the cap's skipped folds differ from the ones
    that ran in which rows they hold only), with a len() and a last fold."""


# Folds are made up front only while they hold at most this many indices in all.
_DR_FOLDS_MAX = 50000000


def _dr_splitter_gen(g):
    """Whether g is a scikit-learn splitter's split() generator that has not started."""
    import inspect

    try:
        if not inspect.isgenerator(g) or g.gi_code.co_name != "split" or \
                inspect.getgeneratorstate(g) != inspect.GEN_CREATED:
            return False
        me = g.gi_frame.f_locals.get("self")
        mod = getattr(type(me), "__module__", "") or ""
        return mod.startswith("sklearn.model_selection") and hasattr(me, "get_n_splits")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return False


def _dr_folds_of(iterable):
    """For a loop over `kf.split(X, y)` or `enumerate(kf.split(X, y)[, start])` (one the
    full run surely takes to its end): the folds made now, as (the loop's new iterable, its
    hint), so that the loop has a length and a last fold; the cap cuts the folds as any
    other loop, and a clean run over them can stand for the full run's. Making them runs
    only the splitter (index arrays). None for any other loop."""
    start = None
    inner = iterable
    if type(iterable) is enumerate:
        try:
            inner, start = iterable.__reduce__()[1][:2]  # (enumerate, (the iterator, the next count))
        except BaseException:
            return None
    if not _dr_splitter_gen(inner):
        return None
    folds, rest = _dr_make_folds(inner)
    if rest is not None:
        # too many indices to hold, or the splitter raised: the loop gets what was made,
        # then the rest as the generator gives it (its error at the fold it came in)
        import itertools

        it = itertools.chain(folds, rest)
        return (enumerate(it, start) if start is not None else it), None
    if start is not None:
        return enumerate(folds, start), ("enumerate", folds, start)
    return folds, None


def _dr_make_folds(gen):
    """(the folds made, None) from a splitter's unstarted split() generator, or (those made
    so far, an iterator of the rest) when the indices grow past _DR_FOLDS_MAX or the
    splitter raises: the rest is then the generator itself, or one that raises the
    splitter's error at the fold the full run's loop meets it."""
    folds = _DrFolds()
    size = 0
    while True:
        try:
            fold = next(gen)
        except StopIteration:
            return folds, None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            return folds, _dr_raise(e)
        folds.append(fold)
        try:
            size += sum(len(a) for a in fold)
        except TypeError:
            size = _DR_FOLDS_MAX + 1
        if size > _DR_FOLDS_MAX:
            return folds, gen


def _dr_raise(e):
    raise e
    yield  # a generator: it raises when the loop asks for its next item


# Sequences of at most this many items give their last one (a DataLoader its last batch).
_DR_LAST_MAX = 5000000


def _dr_last(iterable, hint=None):
    """(n, the last item) of a loop's iterable when it is cheap to take without iterating
    what comes before, as the loop would get it; None otherwise. The last item is where a
    loop meets its edge: `x[i + 1]` at the last i, the last batch of a DataLoader that is
    smaller than the others."""
    if hint is not None:
        kind, args = hint[0], hint[1:]
        if kind == "enumerate":
            got = _dr_last(args[0])
            start = args[1] if len(args) > 1 else 0
            if got is None or not isinstance(start, int):
                return None
            return got[0], (start + got[0] - 1, got[1])
        if kind == "zip":
            parts = [_dr_last(a) for a in args]
            if not parts or any(p is None for p in parts) or len(set(p[0] for p in parts)) != 1:
                return None  # zip stops at the shortest: its last item is no one's last
            return parts[0][0], tuple(p[1] for p in parts)
        return None
    t = type(iterable)
    mod = getattr(t, "__module__", "") or ""
    name = t.__name__
    try:
        if t in (range, list, tuple, _DrFolds):
            n = len(iterable)
            return (n, iterable[-1]) if 0 < n <= _DR_LAST_MAX else None
        if (mod == "numpy" and name == "ndarray") or (mod == "torch" and name in ("Tensor", "Parameter")):
            if len(iterable.shape) < 1 or not 0 < int(iterable.shape[0]) <= _DR_LAST_MAX:
                return None
            return int(iterable.shape[0]), iterable[-1]
        if mod.startswith("pandas") and name == "Series":
            n = len(iterable)
            return (n, iterable.iloc[-1]) if 0 < n <= _DR_LAST_MAX else None
        if mod.startswith("pandas") and name == "DataFrame":
            n = len(iterable.columns)  # a frame iterates over its column labels
            return (n, iterable.columns[-1]) if n else None
        if mod.startswith("tqdm") and hasattr(iterable, "iterable"):
            return _dr_last(iterable.iterable)
        if mod.startswith("torch.utils.data") and name == "DataLoader":
            return _dr_last_batch(iterable)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return None
    return None


def _dr_uniform(iterable, hint=None):
    """Whether a loop's items are of one make, so that the iterations the cap skipped meet
    what the first ones and the last one met: the integers of a range, the rows of an array
    or tensor, the batches of a map-style DataLoader (one collate, one batch size but the
    last), the folds of a scikit-learn splitter (_DrFolds), and enumerate, zip or tqdm over
    those. A list, a frame's columns, a dict of
    models, a generator are not: the fourth item may be the text column or the model that
    fails."""
    if hint is not None:
        kind, args = hint[0], hint[1:]
        if kind == "enumerate":
            return _dr_uniform(args[0])
        if kind == "zip":
            return bool(args) and all(_dr_uniform(a) for a in args)
        return False
    t = type(iterable)
    mod = getattr(t, "__module__", "") or ""
    name = t.__name__
    try:
        if t is range or t is _DrFolds:
            return True
        if mod == "numpy" and name == "ndarray":
            return iterable.dtype != object
        if mod == "torch" and name in ("Tensor", "Parameter"):
            return True
        if mod.startswith("tqdm") and hasattr(iterable, "iterable"):
            return _dr_uniform(iterable.iterable)
        if mod.startswith("torch.utils.data") and name == "DataLoader":
            import torch.utils.data as tud

            return not isinstance(iterable.dataset, tud.IterableDataset) and iterable.batch_sampler is not None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return False
    return False


def _dr_hit(sid):
    """Statement sid of a loop body or a function of the cell ran (at least once)."""
    _DR["hits"].add(sid)


def _dr_last_batch(loader):
    """A map-style DataLoader's last batch: the indices its batch sampler gives last, fetched
    and collated as the loader does (in this process, without workers)."""
    import torch.utils.data as tud

    ds = loader.dataset
    if isinstance(ds, tud.IterableDataset) or loader.batch_sampler is None or not 0 < len(ds) <= _DR_LAST_MAX:
        return None
    n = len(loader)
    bs, sampler = loader.batch_sampler, loader.sampler
    if type(bs) is tud.BatchSampler and type(sampler) in (tud.SequentialSampler, tud.RandomSampler) and \
            len(sampler) == len(ds) and not getattr(sampler, "replacement", False):
        # every index once, in batches of batch_size: the last batch holds what is left over
        # (its indices are the sampler's order's last ones; which rows they are does not
        # matter for the edge, which is the batch's size)
        m = len(ds)
        k = bs.batch_size if bs.drop_last or m % bs.batch_size == 0 else m % bs.batch_size
        idx = list(range(m - k, m))
    elif len(ds) <= 100000:
        idx = None
        for idx in bs:
            pass
    else:
        return None
    if not idx:
        return None
    return n, loader.collate_fn([ds[i] for i in idx])


def _dr_after_lib(lid, st):
    """A loop of the cell's own code that starts after shortened library work, outside it,
    may iterate over what that work produced (a plot per candidate, per tree): a clean run
    then does not stand for the full one."""
    if st.entries == 1 and _DL["records"] and _DL["depth"] == 0:
        m = (_DR.get("meta") or {}).get("loops", {}).get(lid) or {}
        _dl_unsure("the loop at line %s started after the shortened library work and may go over what it produced"
                   % m.get("line", "?"))


def _dr_more(iterable, k, began):
    """Whether a loop at its cap may run another iteration: it goes over a few items
    (len() at most _DR_FEW_ITEMS) and, at the pace of its iterations so far, two more fit
    in the first half of the capped run's budget. Such a loop then runs whole, and a clean
    run of it proves what a whole run does."""
    try:
        n = len(iterable)
    except BaseException:
        return False
    if n > _DR_FEW_ITEMS or not _DR["window"]:
        return False
    now = time.perf_counter()
    per = (now - began) / max(1, k)
    return now + 2 * per < _DR["t0"] + _DR["window"]


def _dr_late(k, began):
    """Whether one more iteration, at the pace of this entry's k so far, would end past 80 %
    of the capped run's budget: the loop is cut there, short of its cap, so that the capped
    run answers within its budget (with what the cut loops produced) instead of being
    stopped with nothing to say."""
    if not _DR["window"] or k < 1:
        return False
    now = time.perf_counter()
    return now + (now - began) / k > _DR["t0"] + 1.6 * _DR["window"]  # window is half the budget


def _dr_for_gen(iterable, it, lid, hint=None):
    st = _dr_stat(lid)
    st.entries += 1
    _dr_after_lib(lid, st)
    cap = _DR["caps"].get(lid) or _DR["cap"] or 3
    k = 0
    me = sys._getframe()
    began = time.perf_counter()
    top = _dr_top(lid)
    _ds_entry(lid, me.f_back, top)
    for x in it:
        if k:
            _ds_iter_done(lid, me.f_back, top)  # the loop's frame resumed us: iteration k ended
        if (k >= cap and not _dr_more(iterable, k, began)) or _dr_late(k, began):
            st.shortened += 1
            st.short_ran = k
            st.uniform = _dr_uniform(iterable, hint) and st.uniform is not False
            try:
                st.total = int(len(iterable))
            except BaseException:
                st.total = None
            last = None
            if (_DR.get("meta") or {}).get("loops", {}).get(lid, {}).get("last") and not _dr_late(k, began):
                last = _dr_last(iterable, hint)
            if last is not None and st.total is None:
                st.total = last[0]  # enumerate(x), zip(a, b): the length of what they go over
            if last is None or last[0] <= k + 1:
                _ds_entry_done(lid, k, st.total)
                break
            # The loop's edge: its last item runs too, on the state the capped iterations
            # left (a crash in it counts only where it reads nothing they carry over).
            st.last = 1
            yield last[1]
            _ds_iter_done(lid, me.f_back, top)
            st.last = 2
            _ds_entry_done(lid, k + 1, st.total)
            break
        k += 1
        if k > st.ran:
            st.ran = k
        yield x
    else:
        if k:
            _ds_iter_done(lid, me.f_back, top)
        _ds_entry_done(lid, k, None)


def _dr_enter(lid):
    st = _dr_stat(lid)
    st.entries += 1
    _dr_after_lib(lid, st)
    st.cur = 0
    st.began = time.perf_counter()
    _ds_entry(lid, sys._getframe(1), _dr_top(lid))


def _dr_top(lid):
    """Whether loop lid is a loop of the cell's top level (in no function, no other loop)."""
    m = (_DR.get("meta") or {}).get("loops", {}).get(lid)
    return bool(m) and m.get("func") is None and not m.get("path")


def _dr_while(lid):
    """True while the capped while loop may run another iteration (its test was true)."""
    st = _dr_stat(lid)
    cap = _DR["caps"].get(lid) or _DR["cap"] or 3
    if st.cur:
        # a while loop's last iteration before its test turns false is not seen: its
        # sizes never fit exactly, so nothing is extrapolated through it
        _ds_iter_done(lid, sys._getframe(1), _dr_top(lid))
    if st.cur >= cap or _dr_late(st.cur, st.began):
        st.shortened += 1
        st.short_ran = st.cur
        _ds_entry_done(lid, st.cur, None)
        return False
    st.cur += 1
    if st.cur > st.ran:
        st.ran = st.cur
    return True


def _dr_root(node):
    """The name at the root of x, x.a.b, x[i].c ... (None for other expressions)."""
    import ast

    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dr_targets(t, out):
    import ast

    if isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _dr_targets(e, out)
        return
    r = _dr_root(t)
    if r:
        out.add(r)


def _dr_stmt_record(node, lmap):
    """reads, stores and calls of one statement (a compound one: its header only)."""
    import ast

    parts = _dr_header(node)
    if parts is None:
        parts = [node]
        hi = getattr(node, "end_lineno", node.lineno) or node.lineno
    else:
        body = getattr(node, "body", None) or []
        hi = node.lineno
        if body and isinstance(body, list) and hasattr(body[0], "lineno"):
            hi = max(node.lineno, body[0].lineno - 1)
    reads, stores, calls = set(), set(), set()
    for p in parts:
        for n in ast.walk(p):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Load):
                    reads.add(n.id)
                else:
                    stores.add(n.id)
            elif isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Name):
                    calls.add(f.id)
                elif isinstance(f, ast.Attribute):
                    calls.add(f.attr)
                    r = _dr_root(f.value)
                    if r and f.attr not in _DR_NOT_MUTATING:
                        stores.add(r)  # losses.append(x), df.drop(..., inplace=True)
            elif isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not p:
                pass
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            _dr_targets(t, stores)
        if isinstance(node, ast.AugAssign):
            r = _dr_root(node.target)
            if r:
                reads.add(r)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        _dr_targets(node.target, stores)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for it in node.items:
            if it.optional_vars is not None:
                _dr_targets(it.optional_vars, stores)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        stores.add(node.name)
    lo = _map(lmap, node.lineno)
    hi = _map(lmap, hi)
    return {"lo": lo, "hi": max(lo, hi), "reads": reads, "stores": stores, "calls": calls}


def _dr_pure(node):
    """Whether evaluating the expression again has no effect: a name, a constant, an
    attribute of one."""
    import ast

    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _dr_hint(node):
    """For a loop over `enumerate(x[, start])` or `zip(a, b, ...)` of pure arguments: the
    tuple expression ("enumerate", x, start) or ("zip", a, b...) that _dr_last reads (the
    arguments are evaluated again, which is why they must be pure)."""
    import ast

    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        return None
    f, args = node.func.id, node.args
    if f == "enumerate" and 1 <= len(args) <= 2 or f == "zip" and len(args) >= 2:
        if all(_dr_pure(a) for a in args):
            import copy

            return ast.Tuple(elts=[ast.Constant(f)] + [copy.deepcopy(a) for a in args], ctx=ast.Load())
    return None


def _dr_leaves(body):
    """Whether a loop body can leave the loop early: a break of its own (not an inner
    loop's), or a return or yield."""
    import ast

    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, ast.Break):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            # an inner loop's break leaves the inner loop only; a return leaves them all
            todo.extend(x for x in ast.walk(n) if isinstance(x, (ast.Return, ast.Yield, ast.YieldFrom)))
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


class _DevrunXform(object):
    """Caps the loops of a cell's AST in place and records what each loop produces."""

    def __init__(self, lmap, base=0, marks=True):
        self.lmap = lmap
        self.base = base  # loop ids start after it (a function of an earlier cell: after the cell's)
        self.marks = marks  # coverage markers (_dr_hit), for the cell's own statements only
        self.loops = {}  # loop id -> {"line", "kind", "header", "produces", "func"}
        self.stmts = []  # statement records (see _dr_stmt_record), with "loops" and "func"
        self.nodes = []  # the statements' AST nodes, parallel to stmts (the crash's recheck)
        self.funcs = {}  # function or method name -> loop ids inside it (nested included)
        self.calls_in = {}  # function name -> names it calls

    def helper(self, name, at):
        import ast

        imp = ast.Call(func=ast.Name(id="__import__", ctx=ast.Load()), args=[ast.Constant(_DEVRUN_MODULE)], keywords=[])
        return self.locate(ast.Attribute(value=imp, attr=name, ctx=ast.Load()), at)

    @staticmethod
    def locate(new, at, keep=()):
        """Gives the new nodes at's source location; the original nodes in keep (and below
        them) keep theirs."""
        import ast

        todo = [new]
        while todo:
            n = todo.pop()
            if any(n is k for k in keep):
                continue
            if isinstance(n, (ast.expr, ast.stmt)):
                n.lineno, n.col_offset = at.lineno, at.col_offset
                n.end_lineno = getattr(at, "end_lineno", at.lineno)
                n.end_col_offset = getattr(at, "end_col_offset", at.col_offset)
            todo.extend(ast.iter_child_nodes(n))
        return new

    def run(self, tree):
        tree.body = self.block(tree.body, [], None)
        return tree

    def block(self, stmts, loops, func):
        import ast

        out = []
        for s in stmts:
            rec = _dr_stmt_record(s, self.lmap)
            rec["loops"] = list(loops)
            rec["func"] = func
            self.stmts.append(rec)
            self.nodes.append(s)
            if self.marks and (loops or func is not None) and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
                # which statements of loop bodies and functions ran: a clean capped run
                # stands for the full one only where every one of them did (_dr_clean_stands)
                rec["mark"] = True
                out.append(self.locate(ast.Expr(value=ast.Call(func=self.helper("_dr_hit", s),
                                                               args=[ast.Constant(len(self.stmts) - 1)],
                                                               keywords=[])), s))
            if func is not None:
                self.calls_in.setdefault(func, set()).update(rec["calls"])
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(s.name, [])
                s.body = self.block(s.body, [], s.name)
                out.append(s)
                continue
            if isinstance(s, ast.ClassDef):
                s.body = self.block(s.body, [], func)
                out.append(s)
                continue
            if isinstance(s, (ast.For, ast.While)):
                lid = self.base + len(self.loops) + 1
                kind = "for" if isinstance(s, ast.For) else "while"
                try:
                    if kind == "for":
                        tgt = s.target
                        names = tgt.elts if isinstance(tgt, ast.Tuple) else [tgt]
                        head = ", ".join(ast.unparse(e) for e in names) + " in " + ast.unparse(s.iter)
                    else:
                        head = ast.unparse(s.test)
                except BaseException:
                    head = ""
                self.loops[lid] = {"line": _map(self.lmap, s.lineno), "kind": kind, "header": head[:120],
                                   "produces": set(), "func": func, "path": list(loops), "stmt": len(self.stmts) - 1}
                if func is not None:
                    self.funcs.setdefault(func, []).append(lid)
                first = len(self.stmts)
                s.body = self.block(s.body, loops + [lid], func)
                # A loop around other loops (epochs around batches) re-enters them: one
                # iteration fewer for it halves nothing the inner loops check.
                self.loops[lid]["outer"] = self.base + len(self.loops) > lid
                s.orelse = self.block(s.orelse, loops, func)
                prod = self.loops[lid]["produces"]
                if kind == "for":
                    _dr_targets(s.target, prod)
                    tg = set()
                    _dr_targets(s.target, tg)
                    self.loops[lid]["targets"] = sorted(tg)
                calls = self.loops[lid]["calls"] = set()
                for r in self.stmts[first:]:
                    if lid in r["loops"]:
                        prod.update(r["stores"])
                        calls.update(r["calls"])
                if kind == "for":
                    # the last item runs after the cap only where the full run surely gets
                    # to it: no break or return in the body
                    self.loops[lid]["last"] = not _dr_leaves(s.body)
                    args = [s.iter, ast.Constant(lid)]
                    hint = _dr_hint(s.iter)
                    if hint is not None:
                        args.append(hint)
                    s.iter = self.locate(ast.Call(func=self.helper("_dr_for", s.iter), args=args,
                                                  keywords=[]), s.iter, keep=(s.iter,) + tuple(hint.elts[1:] if hint else ()))
                    out.append(s)
                else:
                    check = self.locate(ast.Call(func=self.helper("_dr_while", s.test), args=[ast.Constant(lid)],
                                                 keywords=[]), s.test)
                    s.test = self.locate(ast.BoolOp(op=ast.And(), values=[s.test, check]), s.test, keep=(s.test, check))
                    enter = self.locate(ast.Expr(value=ast.Call(func=self.helper("_dr_enter", s), args=[ast.Constant(lid)],
                                                                keywords=[])), s)
                    out.append(enter)
                    out.append(s)
                continue
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    setattr(s, field, self.block(sub, loops, func))
            for h in getattr(s, "handlers", None) or []:
                h.body = self.block(h.body, loops, func)
            for c in getattr(s, "cases", None) or []:
                c.body = self.block(c.body, loops, func)
            out.append(s)
        return out

    def meta(self):
        funcs = {k: list(v) for k, v in self.funcs.items()}
        return {"loops": {lid: dict(m, produces=sorted(m["produces"]), calls=sorted(m.get("calls", ())),
                                    targets=list(m.get("targets", ())))
                          for lid, m in self.loops.items()},
                "stmts": [dict(r, reads=sorted(r["reads"]), stores=sorted(r["stores"]), calls=sorted(r["calls"]))
                          for r in self.stmts],
                "funcs": funcs, "calls_in": {k: sorted(v) for k, v in self.calls_in.items()}, "nodes": self.nodes}


# Functions of earlier cells whose loops the fast dev run caps too, at most.
_DR_EXT_MAX = 8


def _dr_cell_source(f):
    """(filename, source lines) of the cell that defined function f at its top level, or
    None: f is not a plain function of an earlier cell (a library's, a method, a closure,
    a decorated one)."""
    import linecache

    if not isinstance(f, types.FunctionType):  # before any attribute: a user object's __getattr__ is user code
        return None
    code = f.__code__
    if f.__qualname__ != f.__name__ or code.co_freevars:
        return None
    if code.co_flags & (0x20 | 0x200):  # CO_GENERATOR, CO_ASYNC_GENERATOR: the loop over it is capped
        return None
    fn = code.co_filename
    if fn == CELL_FILENAME or fn not in linecache.cache:
        return None
    cells = getattr(linecache, "_ipython_cache", None)
    if (fn not in cells) if cells is not None else os.path.exists(fn):
        return None  # a module's file, not a cell
    return fn, linecache.cache[fn][2]


def _dr_ext_funcs(calls, base, flags):
    """The functions of earlier cells the cell calls by name (and those they call, in turn)
    that hold a loop, capped as the cell's loops are: a `train(model, loader, epochs)`
    defined two cells ago holds the slow loops of the cell that calls it. Returns [(function,
    its capped code, the _DevrunXform that capped it)], transformed in the parent, where
    nothing of the user's runs; the child swaps the code in (_devrun_begin). Also the names
    every function of an earlier cell it went through calls ({name: calls}): a `run_all`
    without a loop that calls `train` returns what train's shortened loops made."""
    import ast

    ns = _user_ns()
    out, seen, calls_of = [], set(), {}
    todo = sorted(c for c in calls if isinstance(c, str))
    while todo and len(out) < _DR_EXT_MAX:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        f = ns.get(name)
        src = _dr_cell_source(f) if f is not None else None
        if src is None:
            continue
        fn, lines = src
        try:
            tree = ast.parse("".join(lines), fn)
        except BaseException:
            continue
        node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
                     and n.lineno == f.__code__.co_firstlineno and not n.decorator_list), None)
        if node is None:
            continue
        x = _DevrunXform(None, base=base, marks=False)
        node.body = x.block(node.body, [], name)
        calls_in = set(c for r in x.stmts for c in r["calls"])
        calls_of[name] = sorted(calls_in)
        todo.extend(sorted(calls_in - seen))
        if not x.loops:
            continue
        try:
            code = compile(ast.Module(body=[node], type_ignores=[]), fn, "exec", flags, True)
        except BaseException:
            continue
        new = next((c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name), None)
        if new is None or new.co_freevars != f.__code__.co_freevars:
            continue
        for m in x.loops.values():
            m["ext"] = name
        out.append((f, new, x))
        base += len(x.loops)
    return out, calls_of


def _devrun_compile(transformed, flags, is_async, lmap):
    """The capped cell's code object and what the report needs, or (None, None) when the cell
    has no loop to cap (or the transform fails: then no fast dev run)."""
    import ast

    try:
        f = flags | ast.PyCF_ONLY_AST
        if is_async:
            f |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        tree = compile(transformed, CELL_FILENAME, "exec", f, True)
        x = _DevrunXform(lmap)
        x.run(tree)
        try:
            ext, calls_of = _dr_ext_funcs(set(c for r in x.stmts for c in r["calls"]), len(x.loops),
                                          flags & ~ast.PyCF_ONLY_AST)
        except BaseException:
            ext, calls_of = [], {}
        if not x.loops and not ext and not any(_dl_cell_calls(r["calls"]) for r in x.stmts):
            return None, None  # nothing to cap, no library call to shorten
        cflags = flags | (ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if is_async else 0)
        meta = x.meta()
        meta["ext"] = []
        meta["ext_stores"] = {}
        if ext:
            for k, v in calls_of.items():
                if k not in meta["funcs"]:  # the cell's own functions shadow an earlier cell's
                    meta["calls_in"][k] = sorted(set(meta["calls_in"].get(k, ())) | set(v))
        for fobj, code, ex in ext:
            em = ex.meta()
            meta["loops"].update(em["loops"])
            meta["funcs"].setdefault(fobj.__name__, []).extend(em["funcs"].get(fobj.__name__, []))
            for k, v in em["calls_in"].items():
                meta["calls_in"].setdefault(k, [])
                meta["calls_in"][k] = sorted(set(meta["calls_in"][k]) | set(v))
            meta["ext_stores"][fobj.__name__] = sorted(set(st for r in em["stmts"] for st in r["stores"]))
            meta["ext"].append((fobj, code))
        return compile(tree, CELL_FILENAME, "exec", cflags, True), meta
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return None, None


def _devrun_begin(meta, cap, budget=0.0):
    """In the capped child only: from here on the loop helpers count. budget is the capped
    run's time limit in seconds (loops over a few items may use half of it, _dr_more)."""
    _DR["meta"] = meta
    _DR["cap"] = int(cap)
    _DR["t0"] = time.perf_counter()
    _DR["window"] = 0.5 * float(budget or 0)
    _DR["stats"] = {}
    _DR["hits"] = set()
    for f, code in meta.get("ext") or ():
        # this child's copy of a function of an earlier cell runs with its loops capped; the
        # kernel's keeps its code
        try:
            f.__code__ = code
        except BaseException:
            pass
    # Outer loops keep one iteration fewer (at least 2, so their second iteration still
    # runs on the state the first one left).
    _DR["caps"] = {lid: (max(2, int(cap) - 1) if m.get("outer") and int(cap) > 2 else int(cap))
                   for lid, m in meta["loops"].items()}
    watch = set()
    for m in meta["loops"].values():
        watch.update(m["produces"])
    _ds_begin(sorted(watch))
    sh = _shell()
    _dl_begin(sh.user_ns if sh is not None else _user_ns())


def _dr_crash_line(res):
    """The innermost line of the cell in the crash's traceback."""
    line = 0
    for fr in res.get("frames") or []:
        if fr.get("in_cell"):
            line = fr.get("line") or line
    return line


def _dr_span_reads(meta, i, pos):
    """The names statement i reads inside the span pos (_tb_span) of the instruction that
    raised, or None when that is not known."""
    import ast

    nodes = meta.get("nodes") or []
    if not pos or i >= len(nodes) or nodes[i] is None:
        return None
    l0, c0, l1, c1 = pos
    root = nodes[i]
    parts = _dr_header(root)
    out = set()
    for p in (parts if parts is not None else [root]):
        for n in ast.walk(p):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and hasattr(n, "end_lineno"):
                if (n.lineno, n.col_offset) >= (l0, c0) and (n.end_lineno, n.end_col_offset) <= (l1, c1):
                    out.add(n.id)
    return out


def _dr_last_reads(meta, short, lid, res):
    """For a crash in loop lid's last item: the names its statement reads that the capped run
    holds otherwise than the full run would there (carried over from an earlier iteration
    of the loop, or made by another shortened loop, or computed from those earlier in the
    body), and why it cannot tell (a crash inside a function the loop calls); (set(), "")
    when the statement reads only the last item and what the loop does not change: the full
    run meets the same crash there."""
    m = meta["loops"][lid]
    frames = [f for f in res.get("frames") or [] if f.get("in_cell")]
    top = ("<cell>", "<module>")
    at = [i for i, f in enumerate(frames)
          if (f.get("func") == m["func"] if m.get("func") else (f.get("func") or "<module>") in top)]
    if not at:
        return set(), "the crash's traceback does not pass through the loop at line %d" % m["line"]
    if at[-1] != len(frames) - 1:
        return set(), "the crash in the loop's last item came from inside %s, which the loop calls" % (
            frames[-1].get("func") or "a function")
    line = frames[at[-1]].get("line") or 0
    body = [(i, r) for i, r in enumerate(meta["stmts"]) if lid in r["loops"]]
    crash = None
    for i, r in body:
        if r["lo"] <= line <= r["hi"]:
            crash = i
    if crash is None:
        return set(), "the crash line %d is not a statement of the loop's body" % line
    names, funcs = _devrun_tainted(meta, short - {lid})
    failed = _dr_span_reads(meta, crash, frames[at[-1]].get("pos"))
    # torch.zeros(...) reads as a method call that changes torch: a module is no product
    sh = _shell()
    ns = sh.user_ns if sh is not None else _user_ns()
    plain = lambda ss: set(x for x in ss if not isinstance(ns.get(x), types.ModuleType))
    tainted = plain(names)
    defined = set(m.get("targets") or ())
    prods = plain(m["produces"])
    for i, r in body:
        rd = set(r["reads"])
        carried = (rd & prods) - defined
        t = (rd & tainted) | carried | (funcs & set(r["calls"]))
        if i == crash:
            if failed is not None:
                # only what the failing sub-expression reads decides
                t = (failed & (tainted | (prods - defined))) | (funcs & set(r["calls"]))
            return t, ""
        if t:
            tainted.update(r["stores"])
        tainted.update(carried)
        defined.update(r["stores"])
    return set(), "the crash statement was not found"


_DR_MAX_RECHECKS = 6


def _dr_clean_stands(meta, short):
    """Whether a clean capped run stands for the full run of the cell, and if not why (a
    list of reasons, empty when it does). It does when every loop the cap cut is a for
    loop over items of one make (_dr_uniform) that also ran its last item (the loop's edge:
    the last index, the smaller last batch), every statement of those loops' bodies and of
    the cell's functions they call ran at least once (no branch the first iterations never
    took: `if epoch % 10 == 9`, a `continue`), and every statement after the loops that
    reads what they made runs clean with it at its full size (_ds_recheck at that
    statement); a branch or a loop after them that reads it, or an assertion, does not
    stand. The skipped iterations then differ from the ones that ran in their values only."""
    import ast

    why = []
    for lid in sorted(short):
        m = meta["loops"][lid]
        st = _DR["stats"][lid]
        if m.get("ext"):
            why.append("the loop at line %d of %s(), which an earlier cell defined, was cut after %d iterations" % (
                m["line"], m["ext"], st.short_ran))
        elif m["kind"] != "for":
            why.append("the while loop at line %d was cut after %d iterations" % (m["line"], st.short_ran))
        elif st.last != 2:
            why.append("the loop at line %d ran %d of %s iterations but not its last one" % (
                m["line"], st.short_ran, st.total if st.total is not None else "its"))
        elif not st.uniform:
            why.append("the loop at line %d goes over %s, whose items may differ from the ones that ran" % (
                m["line"], (m["header"].split(" in ", 1)[-1] or "its iterable")[:60]))
    if why:
        return why
    # every statement of the shortened loops' bodies and of the cell's functions they call
    called = set()
    for lid in short:
        called.update(meta["loops"][lid].get("calls", ()))
    inner = set(fn for fn in called if fn in meta["funcs"] or fn in meta["calls_in"])
    todo = list(inner)
    while todo:
        for g in meta["calls_in"].get(todo.pop(), ()):
            if g not in inner and (g in meta["funcs"] or g in meta["calls_in"]):
                inner.add(g)
                todo.append(g)
    hits = _DR["hits"]
    for i, r in enumerate(meta["stmts"]):
        if r.get("mark") and i not in hits and (short.intersection(r["loops"]) or r["func"] in inner):
            why.append("line %d never ran in the shortened iterations (a branch or a statement after a `continue` "
                       "the first iterations did not reach)" % r["lo"])
            return why
    # the top-level statements after the first shortened loop that read what the loops made
    stmts, nodes = meta["stmts"], meta.get("nodes") or []
    first = min(meta["loops"][lid].get("stmt", 0) for lid in short)
    checked = 0
    for i in range(first + 1, len(stmts)):
        r = stmts[i]
        if r["func"] is not None or r["loops"] or i >= len(nodes) or nodes[i] is None:
            continue
        if isinstance(nodes[i], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        names, _ = _devrun_tainted(meta, short, before=i)  # modules are never among them
        reads = names.intersection(r["reads"])
        if not reads:
            continue
        if _dr_header(nodes[i]) is not None or isinstance(nodes[i], ast.Assert):
            if isinstance(nodes[i], (ast.With, ast.AsyncWith, ast.Try)) and not reads - set(r["stores"]):
                continue
            why.append("line %d %s %s, which the shortened loops left otherwise than the full run would" % (
                r["lo"], "tests" if isinstance(nodes[i], ast.Assert) else "decides on", ", ".join(sorted(reads)[:3])))
            return why
        checked += 1
        if checked > _DR_MAX_RECHECKS:
            why.append("more than %d lines after the loops read what they made" % _DR_MAX_RECHECKS)
            return why
        try:
            got = _ds_recheck(meta, short, {}, None, at=i)
        except BaseException as e:
            got = {"verdict": "unknown", "reason": "the full-size check of line %d failed: %s" % (r["lo"], _err(e))}
        if got.get("verdict") != "clean":
            why.append(got.get("reason") or "line %d was not checked at full size" % r["lo"])
            return why
    return why


def _devrun_report(res):
    """The fast dev run's part of the child's result ({} in a full run)."""
    meta = _DR.get("meta")
    if meta is None:
        return {}
    try:
        cap = _DR["cap"]
        loops, short = [], set()
        for lid in sorted(meta["loops"]):
            m = meta["loops"][lid]
            st = _DR["stats"].get(lid)
            if st is None or st.entries == 0:
                continue
            d = {"line": m["line"], "kind": m["kind"], "header": m["header"], "entries": st.entries,
                 "ran": st.short_ran if st.shortened else st.ran}
            if m.get("ext"):
                d["func"] = m["ext"]  # in a function of an earlier cell; line is that cell's
            if st.shortened:
                d["shortened"] = True
                short.add(lid)
                if st.total is not None:
                    d["total"] = st.total
                if st.last:
                    d["last"] = True
            loops.append(d)
        lib = _dl_records()
        out = {"cap": cap, "loops": loops, "shortened": bool(short or lib)}
        if lib:
            out["library"] = lib
            if _DL["unsure"]:
                out["library_unsure"] = list(_DL["unsure"])
        if res.get("status") == "ok" and short:
            # after the report's facts: the full-size checks rerun statements and put
            # stand-ins in the namespace
            try:
                unsure = _dr_clean_stands(meta, short)
            except BaseException as e:
                unsure = ["the check of the shortened loops failed: %s" % _err(e)]
            if unsure:
                out["loops_unsure"] = unsure[:3]
            else:
                out["loops_stand"] = True
            return {"devrun": out}
        if res.get("status") == "error" and lib:
            # The table keeps the structure of what the shortened calls produce, not their
            # values: a crash inside one that the unshortened call did not repeat, or an
            # assertion (on a score, a count), may be the shortening's.
            why = _DL.get("crashed_in")
            if not why and res.get("exception") == "AssertionError":
                why = "an assertion after shortened library work may test its values"
            if why:
                out.update(crash_line=res.get("line") or 0, likely=True,
                           full_size={"verdict": "unknown", "reason": why})
                return {"devrun": out}
        edge = [lid for lid in sorted(short) if _DR["stats"][lid].last == 1]
        if res.get("status") == "error" and edge:
            # raised in a loop's last item, run after the cap
            lid = edge[-1]
            hit, why = _dr_last_reads(meta, short, lid, res)
            m = meta["loops"][lid]
            st = _DR["stats"][lid]
            out["crash_line"] = _dr_crash_line(res)
            out["last_item"] = {"line": m["line"], "header": m["header"], "ran": st.short_ran, "total": st.total or 0}
            if hit or why:
                out["likely"] = True
                out["reads"] = sorted(hit)[:10]
                out["full_size"] = {"verdict": "unknown", "reason": why or (
                    "the crash came in the last item of the loop at line %d, run after the first %d iterations, on "
                    "what the skipped iterations would have changed (%s)" % (m["line"], st.short_ran, ", ".join(sorted(hit)[:5])))}
            return {"devrun": out}
        if res.get("status") == "error" and short:
            line = _dr_crash_line(res)
            # the outermost frame in the cell: a statement of the cell
            top = next((fr.get("line") or 0 for fr in res.get("frames") or [] if fr.get("in_cell")), None)
            before = None
            for i, r in enumerate(meta["stmts"]):
                if top is not None and r["func"] is None and not r["loops"] and r["lo"] <= top <= r["hi"]:
                    before = i  # a top-level statement after the loops: what follows it is not its input
            names, funcs = _devrun_tainted(meta, short, before=before)
            hit = set()
            for r in meta["stmts"]:
                if r["lo"] <= line <= r["hi"]:
                    hit.update(names.intersection(r["reads"]))
                    hit.update(funcs.intersection(r["calls"]))
            out["crash_line"] = line
            if hit:
                out["likely"] = True
                out["reads"] = sorted(hit)[:10]
                try:
                    out["full_size"] = _ds_recheck(meta, short, res, res.get("exception") or "")
                except BaseException as e:
                    out["full_size"] = {"verdict": "unknown", "reason": "the full-size check failed: %s" % _err(e)}
        return {"devrun": out}
    except BaseException as e:
        return {"devrun": {"cap": _DR.get("cap", 0), "shortened": True, "likely": True,
                           "error": "fast dev run report failed: %s" % _err(e)}}
