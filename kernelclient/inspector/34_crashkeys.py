# ---------------------------------------------------------------------------------------------
# Shadow runs: crash evidence (facts.ShadowResult.CrashKeys)
#
# When a cell fails on a missing key or attribute, the repair library needs the keys that do
# exist, also of objects the cell itself built (a frame made and read in the same cell is in
# no inspection). The child still holds the cell's frame: the objects the crash line
# subscripts (df[...]) or reads attributes of (df.col) are looked up there and their keys
# reported. Only names are looked up, and attribute chains are followed only through a
# DataFrame's columns (df.col is df["col"]); nothing else of the user's runs (no getattr on
# user objects, no __getitem__, no __iter__): DataFrame/Series label reads and dict.keys()
# only, at most _CK_OBJECTS objects and _CK_KEYS keys each. The child is about to exit, so
# nothing here can change the user's kernel.

_CK_OBJECTS = 4
_CK_KEYS = 200
_CK_BASE = None  # compiled lazily: a subscripted or attribute-read name chain
_CK_STRING = None


def _ck_wanted(e):
    name = type(e).__name__
    if name in ("KeyError", "AttributeError"):
        return True
    try:
        msg = str(e)
    except BaseException:
        return False
    return "not in index" in msg or "not found in axis" in msg


def _ck_label(x):
    """A label as JSON (str, finite number, bool), or None when it is of another kind."""
    t = type(x)
    if t in (str, bool, int):
        return x if t is not str or len(x) <= 200 else None
    if t is float:
        return x if x == x and x not in (float("inf"), float("-inf")) else None
    np = _np()
    if np is not None and isinstance(x, np.generic):
        try:
            return _ck_label(x.item())
        except BaseException:
            return None
    return None


def _ck_keys(obj):
    """(kind, keys, total) of a DataFrame, Series or dict; None for anything else."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.DataFrame):
        labels, kind = obj.columns, "dataframe"
    elif pd is not None and isinstance(obj, pd.Series):
        labels, kind = obj.index, "series"
    elif isinstance(obj, dict):
        labels, kind = dict.keys(obj), "dict"
    else:
        return None
    total = len(labels)
    keys = []
    if kind == "dict":
        for k in labels:
            if len(keys) >= _CK_KEYS:
                break
            keys.append(k)
    else:
        keys = list(labels[:_CK_KEYS])
    out = []
    for k in keys:
        v = _ck_label(k)
        if v is not None:
            out.append(v)
    return kind, out, total


def _ck_lookup(chain, frame):
    """The object a dotted name chain names in frame: the first name from the frame's locals
    or globals, each further part only as a column of a DataFrame; None otherwise."""
    parts = chain.split(".")
    for scope in (frame.f_locals, frame.f_globals):
        if isinstance(scope, dict):
            if parts[0] in scope:
                obj = dict.__getitem__(scope, parts[0])
                break
        elif type(scope).__name__ == "FrameLocalsProxy":  # Python 3.13+: C-level lookups
            if parts[0] in scope:
                obj = scope[parts[0]]
                break
    else:
        return None
    pd = sys.modules.get("pandas")
    for p in parts[1:]:
        if _ck_sklearn(obj) and not p.startswith("_"):
            # A scikit-learn object's attribute (pipe.named_steps, grid.best_params_): the
            # library's code, run in the child, which is about to exit.
            try:
                obj = getattr(obj, p)
            except BaseException:
                return None
            continue
        if pd is None or not isinstance(obj, pd.DataFrame):
            return None
        try:
            if p not in obj.columns:
                return None
            obj = obj[p]
        except BaseException:
            return None
    return obj


def _ck_sklearn(obj):
    """Whether obj's class and every class it inherits from are scikit-learn's (or object):
    then its attributes run no user code."""
    try:
        return all(c is object or (c.__module__ or "").split(".")[0] in ("sklearn", "abc") for c in type(obj).__mro__)
    except BaseException:
        return False


def _cell_frame(tb):
    """The innermost frame of the traceback that runs the cell's own code (a function the
    cell defined counts), and its line; (None, 0) when the exception never reached it."""
    frame, lineno = None, 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CELL_FILENAME:
            frame, lineno = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    return frame, lineno


def _crash_keys(e, tb, code, lmap):
    """facts.CrashKeys of the objects the crash line subscripts or reads attributes of, for a
    KeyError, an AttributeError or a "not in index" error; None otherwise."""
    global _CK_BASE, _CK_STRING
    if not _ck_wanted(e):
        return None
    frame, lineno = _cell_frame(tb)
    if frame is None:
        return None
    import re

    if _CK_BASE is None:
        _CK_BASE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*(?=[\[.])")
        _CK_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
    lines = _src_lines(code)
    ln = _map(lmap, lineno)
    if not 1 <= ln <= len(lines):
        return None
    text = _CK_STRING.sub("''", lines[ln - 1]).split("#", 1)[0]
    out, seen = [], set()
    for m in _CK_BASE.finditer(text):
        if len(out) >= 2 * _CK_OBJECTS:
            break
        chain = re.sub(r"\s+", "", m.group(1))
        # df.col.str[...]: try the longest chain first, then its prefixes (df.col, df).
        parts = chain.split(".")
        for n in range(len(parts), 0, -1):
            expr = ".".join(parts[:n])
            if expr in seen:
                continue
            seen.add(expr)
            obj = _ck_lookup(expr, frame)
            if obj is None:
                continue
            got = _ck_keys(obj)
            if got is None:
                continue
            kind, keys, total = got
            out.append({"expr": expr, "kind": kind, "keys": keys, "total": int(total)})
            if len(out) >= 2 * _CK_OBJECTS:
                break
    # Frames and dicts first: a Series' keys are its row labels, rarely what was misspelled.
    out.sort(key=lambda c: c["kind"] == "series")
    return out[:_CK_OBJECTS] or None
