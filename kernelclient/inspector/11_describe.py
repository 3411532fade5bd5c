# ---------------------------------------------------------------------------------------------
# Describing values


class _Ctx(object):
    __slots__ = ("values", "deadline", "exceeded")

    def __init__(self, values, deadline):
        self.values = values
        self.deadline = deadline
        self.exceeded = False

    def over(self):
        if time.perf_counter() > self.deadline:
            self.exceeded = True
            return True
        return False


def _is(obj, modname, attr_path):
    """Whether obj's type is sys.modules[modname].<attr_path> or a subclass, without
    importing or loading anything and without reading obj.__class__."""
    cls = sys.modules.get(modname)
    if cls is None:
        return False
    for a in attr_path.split("."):
        cls = _static_get(cls, a, None)
        if cls is None:
            return False
    return isinstance(cls, type) and _isa(obj, cls)


def _mro_has(obj, root, names):
    try:
        for c in type.__getattribute__(type(obj), "__mro__"):
            if c.__name__ in names and _root(c.__module__) == root:
                return True
    except BaseException:
        pass
    return False


def _lib_type(obj):
    """obj's type is defined by a known container library (not a user subclass of one)."""
    return _root(_modof(type(obj))) in _TRUSTED_ROOTS


def _describe_array_type(a, v):
    """A user subclass of ndarray: what ndarray's own C getters say (the subclass's
    properties, __array_finalize__ and methods never run)."""
    np = _np()
    v["kind"] = "ndarray"
    try:
        base = np.ndarray
        shape = type.__getattribute__(base, "__dict__")["shape"].__get__(a, base)
        v["shape"] = [int(x) for x in shape]
        v["ndim"] = len(shape)
        v["dtype"] = str(type.__getattribute__(base, "__dict__")["dtype"].__get__(a, base))
        if shape:
            v["len"] = int(shape[0])
    except BaseException as e:
        v["error"] = "array facts: %s" % _err(e)
    v["error"] = v.get("error") or "value facts not computed for a subclass of numpy.ndarray"
    return v


def _signature(obj):
    try:
        return str(_pyinspect.signature(obj))
    except BaseException:
        return None


def _attributes(obj, v):
    """The attribute names statically there: the instance __dict__ and the class dicts along
    the MRO. Complete only when the type decides nothing at run time (no own __getattr__ or
    __getattribute__); "dynamic" says when it does, so that absence proves nothing."""
    names = set()
    inst = _idict(obj)
    complete = True
    names.update(k for k in inst if isinstance(k, str) and not k.startswith("_"))
    tp = type(obj)
    try:
        for c in type.__getattribute__(tp, "__mro__"):
            if c is object:
                continue
            names.update(k for k in type.__getattribute__(c, "__dict__") if isinstance(k, str) and not k.startswith("_"))
    except BaseException:
        complete = False
    dynamic = _lookup(tp, "__getattr__") is not None
    ga = _lookup(tp, "__getattribute__")
    if ga is not None and not _plain_getattribute(ga):
        dynamic = True
    if dynamic:
        complete = False
        v["dynamic"] = True
    names = sorted(names)
    if names:
        v["attributes"] = names[:500]
    v["attributes_complete"] = complete and len(names) <= 500


def _describe_seq(obj, ctx, v):
    t = type(obj)
    v["kind"] = {list: "list", tuple: "tuple", set: "set", frozenset: "set"}[t]
    n = len(obj)
    v["len"] = n
    import itertools

    sample = list(itertools.islice(iter(obj), 100))  # builtin containers: iterating is safe
    types_seen = []
    for e in sample:
        tn = _tname(type(e))
        if tn not in types_seen:
            types_seen.append(tn)
    if types_seen:
        v["element_types"] = types_seen
    if n > len(sample):
        v["sampled"] = True
    # Nested shape of regular lists of lists (what np.array(obj).shape would give), cheaply.
    if t in (list, tuple) and sample:
        shape = [n]
        cur = obj
        while type(cur) in (list, tuple) and cur and type(cur[0]) in (list, tuple):
            inner = len(cur[0])
            if any(type(x) not in (list, tuple) or len(x) != inner for x in cur[:50]):
                break
            shape.append(inner)
            cur = cur[0]
        if len(shape) > 1:
            v["shape"] = shape
    if ctx.values:
        samp = []
        for e in sample[:5]:
            j = _jsafe_or(e)
            if j is not _MISSING:
                samp.append(j)
        if samp:
            v["sample"] = samp
        nums = [x for x in (_jsafe_or(e) for e in sample) if type(x) in (int, float)]
        if nums and len(nums) == len(sample) and n == len(sample):
            v["min"] = float(min(nums))
            v["max"] = float(max(nums))
    return v


def _describe_dict(obj, ctx, v):
    v["kind"] = "dict"
    n = len(obj)
    v["len"] = n
    keys = []
    faithful = True
    import itertools

    for k in itertools.islice(iter(obj), 50):
        j = _jsafe_or(k)
        if j is _MISSING or type(k) is float:
            faithful = False
            r = _builtin_repr(k) if type(k) is not tuple else _tuple_repr(k)
            keys.append(r if r is not None else "<%s>" % _tname(type(k)))
        else:
            keys.append(j)
    if keys:
        v["keys"] = keys
    v["keys_complete"] = faithful and n <= 50
    types_seen = []
    for val in itertools.islice(iter(obj.values()), 100):
        tn = _tname(type(val))
        if tn not in types_seen:
            types_seen.append(tn)
    if types_seen:
        v["element_types"] = types_seen
    return v


def _tuple_repr(k):
    parts = []
    for x in k:
        r = _builtin_repr(x)
        if r is None:
            return None
        parts.append(r)
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _strided(shape, limit):
    """Per-axis steps so that the strided view has at most limit elements."""
    steps = [1] * len(shape)

    def count():
        c = 1
        for s, st in zip(shape, steps):
            c *= -(-s // st) if s else 0
        return c

    while count() > limit:
        i = max(range(len(shape)), key=lambda j: -(-shape[j] // steps[j]))
        steps[i] *= 2
    return tuple(slice(None, None, st) for st in steps)


def _describe_ndarray(a, ctx, v):
    np = _np()
    v["kind"] = "ndarray"
    v["shape"] = [int(x) for x in a.shape]
    v["ndim"] = int(a.ndim)
    v["size"] = int(a.size)
    v["dtype"] = str(a.dtype)
    if a.ndim:
        v["len"] = int(a.shape[0])
    v["contiguous"] = bool(a.flags.c_contiguous)
    if not ctx.values or a.size == 0 or ctx.over():
        return v
    sample = a
    if a.size > _FULL_SCAN:
        row = a.size // a.shape[0]
        if a.ndim and row <= _ELEM_SAMPLE // _CHUNKS:
            sample = a.take(_chunk_rows(a.shape[0], max(_CHUNKS, _ELEM_SAMPLE // row)), axis=0)
        else:
            sample = a[_strided(a.shape, _ELEM_SAMPLE)]
        v["sampled"] = True
    kind = a.dtype.kind
    with warnings_off():
        try:
            if kind in "fc":
                fin = np.isfinite(sample)
                v["has_nan"] = bool(np.isnan(sample).any())
                v["has_inf"] = bool((np.isinf(sample)).any())
                if kind == "f" and fin.any():
                    good = sample[fin]
                    v["min"] = _finite(good.min())
                    v["max"] = _finite(good.max())
            elif kind in "iu":
                v["min"] = _finite(sample.min())
                v["max"] = _finite(sample.max())
                v["has_nan"] = False
                v["has_inf"] = False
            elif kind == "b":
                v["has_nan"] = False
            elif kind == "O":
                seen = []
                for e in sample.flat[:200]:
                    tn = _tname(type(e))
                    if tn not in seen:
                        seen.append(tn)
                v["element_types"] = seen
            if kind in "iub" and sample.size <= 200000:
                v["n_unique"] = int(np.unique(sample).size)
            head = a.flat[:5].tolist() if kind != "O" else []
            samp = [x for x in (_jsafe_or(e) for e in head) if x is not _MISSING]
            if samp:
                v["sample"] = samp
        except BaseException as e:
            v["error"] = "value facts: %s" % _err(e)
    return v


_CHUNKS = 10  # contiguous row chunks a big object is sampled in (cache friendly, deterministic)


def _chunk_rows(n, want):
    """Row positions of _CHUNKS evenly spaced contiguous chunks, want rows in all."""
    np = _np()
    per = max(1, want // _CHUNKS)
    starts = [(n - per) * k // (_CHUNKS - 1) for k in range(_CHUNKS)]
    return np.concatenate([np.arange(st, st + per) for st in starts])


def _frame_sample(df):
    """(rows used for value facts, sampled?): all rows when few, else contiguous chunks.

    Slices, not take(): take() would materialize (and cache) a big RangeIndex.
    """
    n = len(df)
    if n <= _ROW_SAMPLE:
        return df, False
    pd = sys.modules["pandas"]
    np = _np()
    per = _ROW_SAMPLE // _CHUNKS
    starts = [(n - per) * k // (_CHUNKS - 1) for k in range(_CHUNKS)]
    if isinstance(df, pd.Series) and isinstance(df.dtype, np.dtype):
        vals = df.to_numpy(copy=False)
        return pd.Series(np.concatenate([vals[st:st + per] for st in starts]), name=df.name, copy=False), True
    return pd.concat([df.iloc[st:st + per] for st in starts], copy=False), True


def _column(name, s, ctx, sampled_rows):
    """facts.Column for one Series (s is already the sampled rows)."""
    pd = sys.modules["pandas"]
    api = pd.api.types
    c = {"name": _label(name), "dtype": str(s.dtype)}
    if sampled_rows is None:
        return c
    try:
        c["nulls"] = int(s.isna().sum())
    except BaseException:
        pass
    dt = s.dtype
    try:
        if api.is_object_dtype(dt) or api.is_string_dtype(dt):
            c.update(_object_column(s, ctx))
        elif ctx.values and api.is_numeric_dtype(dt) and not api.is_bool_dtype(dt):
            lo, hi = _finite(s.min()), _finite(s.max())
            if lo is not None:
                c["min"] = lo
            if hi is not None:
                c["max"] = hi
        elif ctx.values and api.is_categorical_dtype(dt):
            c["n_unique"] = int(len(dt.categories))
    except BaseException:
        pass
    return c


def _describe_index(idx, ctx):
    i = {"type": _short(type(idx))}
    try:
        i["dtype"] = str(idx.dtype)
    except BaseException:
        pass
    try:
        names = list(idx.names)
        if len(names) == 1:
            if names[0] is not None:
                i["name"] = _label(names[0])
        elif any(n is not None for n in names):
            i["name"] = [_label(n) for n in names]
    except BaseException:
        pass
    if ctx.values:
        try:
            n = len(idx)
            head = idx[: min(n, 10)]
            i["sample"] = [_label(x) for x in head]
            i["complete"] = n <= 10
        except BaseException:
            pass
    return i


def _frame_stats(df, sample, dtypes, ctx):
    """Null counts and numeric min/max for the first _STAT_COLUMNS columns.

    A small frame is reduced column-wise in one vectorized call per statistic; a big one
    column by column on numpy arrays gathered from contiguous row chunks (no index is
    materialized and the cost does not grow with the number of rows).
    """
    pd = sys.modules["pandas"]
    api = pd.api.types
    k = min(len(dtypes), _STAT_COLUMNS)
    out = {"object": {}}
    objects = [i for i in range(k) if api.is_object_dtype(dtypes[i]) or api.is_string_dtype(dtypes[i])]
    numeric = [i for i in range(k) if api.is_numeric_dtype(dtypes[i]) and not api.is_bool_dtype(dtypes[i])]
    if sample is not None:
        sub = sample.iloc[:, :k]
        nulls = sub.isna().sum().to_numpy()
        for i in range(k):
            out[i] = {"nulls": int(nulls[i])}
        if ctx.values and numeric:
            num = sub.iloc[:, numeric]
            lo, hi = num.min().to_numpy(), num.max().to_numpy()
            for j, i in enumerate(numeric):
                _put_range(out[i], lo[j], hi[j])
        for i in objects:
            out["object"][i] = sub.iloc[:, i]
    else:
        np = _np()
        n = len(df)
        per = _ROW_SAMPLE // _CHUNKS
        starts = [(n - per) * c // (_CHUNKS - 1) for c in range(_CHUNKS)]
        for i in range(k):
            if ctx.over():
                break
            col = df.iloc[:, i]
            if isinstance(col.dtype, np.dtype):
                vals = col.to_numpy(copy=False)
                samp = np.concatenate([vals[st:st + per] for st in starts])
                out[i] = {"nulls": int(pd.isna(samp).sum())}
                if ctx.values and i in numeric and samp.size:
                    if samp.dtype.kind == "f":
                        _put_range(out[i], np.nanmin(samp), np.nanmax(samp))
                    elif samp.dtype.kind in "iu":
                        _put_range(out[i], samp.min(), samp.max())
                if i in objects:
                    out["object"][i] = pd.Series(samp, copy=False)
            else:
                part = pd.concat([col.iloc[st:st + per] for st in starts], copy=False)
                out[i] = {"nulls": int(part.isna().sum())}
                if ctx.values and i in numeric:
                    _put_range(out[i], part.min(), part.max())
                if i in objects:
                    out["object"][i] = part
    if ctx.values:
        for i in range(k):
            if i in out and api.is_categorical_dtype(dtypes[i]):
                out[i]["n_unique"] = int(len(dtypes[i].categories))
    return out


def _put_range(c, lo, hi):
    a, b = _finite(lo), _finite(hi)
    if a is not None:
        c["min"] = a
    if b is not None:
        c["max"] = b


def _object_column(s, ctx):
    """Element types, non-numeric strings and unique count of an object column's sample."""
    c = {}
    head = s.dropna()
    head = head.iloc[:200] if len(head) > 200 else head
    seen = []
    non_num = []
    for e in head:
        tn = _tname(type(e))
        if tn not in seen:
            seen.append(tn)
        if ctx.values and type(e) is str and len(non_num) < 3:
            try:
                float(e.strip())
            except ValueError:
                short = e if len(e) <= 40 else e[:40] + "..."
                if short not in non_num:
                    non_num.append(short)
    if seen:
        c["element_types"] = seen
    if non_num:
        c["non_numeric_sample"] = non_num
    if ctx.values:
        try:
            # Hashing runs __hash__/__eq__ of the elements: only for builtin scalars
            # (infer_dtype reads the element types in C).
            kinds = sys.modules["pandas"].api.types.infer_dtype(s, skipna=True)
            if kinds in ("string", "bytes", "integer", "floating", "mixed-integer-float", "boolean", "empty"):
                c["n_unique"] = int(s.nunique())
        except BaseException:
            pass
    return c
