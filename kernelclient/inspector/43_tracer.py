# ---------------------------------------------------------------------------------------------
# Shadow runs: the tracer (per line of the cell, compact facts about the names it binds)


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
