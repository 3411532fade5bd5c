# ---------------------------------------------------------------------------------------------
# Describing values: pandas, torch, sklearn, sparse, images, TensorFlow/Keras


def _describe_frame(df, ctx, v):
    v["kind"] = "dataframe"
    rows, ncols = (int(x) for x in df.shape)
    v["shape"] = [rows, ncols]
    v["ndim"] = 2
    v["len"] = rows
    v["size"] = rows * ncols
    sampled = rows > _ROW_SAMPLE
    if sampled:
        v["sampled"] = True
    cols = []
    try:
        dtypes = list(df.dtypes)
        labels = list(df.columns)
    except BaseException as e:
        v["error"] = "columns: %s" % _err(e)
        return v
    stats = {}
    with warnings_off():
        try:
            stats = _frame_stats(df, None if sampled else df, dtypes, ctx)
        except BaseException as e:
            v["error"] = "column facts: %s" % _err(e)
        for i, (name, dt) in enumerate(zip(labels[:_MAX_COLUMNS], dtypes)):
            c = {"name": _label(name), "dtype": str(dt)}
            c.update(stats.get(i, {}))
            if i in stats.get("object", {}) and not ctx.over():
                try:
                    c.update(_object_column(stats["object"][i], ctx))
                except BaseException:
                    pass
            cols.append(c)
    v["columns"] = cols
    if ncols > _MAX_COLUMNS:
        v["error"] = "only the first %d of %d columns are listed" % (_MAX_COLUMNS, ncols)
    v["index"] = _describe_index(df.index, ctx)
    if ctx.values:
        nulls = [c.get("nulls") for c in cols[:_STAT_COLUMNS]]
        if nulls and all(x is not None for x in nulls) and len(nulls) == ncols:
            v["has_nan"] = any(nulls)
    dts = set(str(d) for d in dtypes)
    if len(dts) == 1:
        v["dtype"] = dts.pop()
    return v


def _describe_series(s, ctx, v):
    v["kind"] = "series"
    n = int(len(s))
    v["shape"] = [n]
    v["ndim"] = 1
    v["len"] = n
    v["size"] = n
    v["dtype"] = str(s.dtype)
    sample, sampled = _frame_sample(s)
    if sampled:
        v["sampled"] = True
    with warnings_off():
        c = _column(s.name, sample, ctx, sampled)
    v["columns"] = [c]
    v["index"] = _describe_index(s.index, ctx)
    if ctx.values:
        for k in ("min", "max", "n_unique"):
            if k in c:
                v[k] = c[k]
        if "nulls" in c:
            v["has_nan"] = c["nulls"] > 0
        try:
            head = [x for x in (_jsafe_or(e) for e in s.iloc[:5]) if x is not _MISSING]
            if head:
                v["sample"] = head
        except BaseException:
            pass
    return v


def _describe_index_value(idx, ctx, v):
    v["kind"] = "index"
    n = int(len(idx))
    v["shape"] = [n]
    v["len"] = n
    v["ndim"] = 1
    v["dtype"] = str(idx.dtype)
    v["index"] = _describe_index(idx, ctx)
    if ctx.values:
        v["sample"] = v["index"].get("sample", [])
    return v


def _describe_groupby(gb, ctx, v):
    v["kind"] = "groupby"
    obj = getattr_static_safe(gb, "obj", None)
    pd = sys.modules["pandas"]
    if isinstance(obj, pd.DataFrame):
        v["shape"] = [int(x) for x in obj.shape]
        v["columns"] = [{"name": _label(n), "dtype": str(d)} for n, d in list(zip(obj.columns, obj.dtypes))[:_MAX_COLUMNS]]
    elif isinstance(obj, pd.Series):
        v["shape"] = [int(len(obj))]
        v["columns"] = [{"name": _label(obj.name), "dtype": str(obj.dtype)}]
    keys = getattr_static_safe(gb, "keys", None)
    if keys is not None and not callable(keys):
        if type(keys) in (list, tuple):
            v["index"] = {"type": "grouping", "name": [_label(k) for k in keys]}
        elif _jsafe_or(keys) is not _MISSING:
            v["index"] = {"type": "grouping", "name": _label(keys)}
        else:
            v["index"] = {"type": "grouping", "name": "<%s>" % _tname(type(keys))}
    sel = getattr_static_safe(gb, "_selection", None)
    if sel is not None and _jsafe_or(sel) is not _MISSING:
        v["keys"] = [_label(sel)]
    return v


def _describe_tensor(t, ctx, v):
    torch = sys.modules["torch"]
    v["kind"] = "tensor"
    v["shape"] = [int(x) for x in t.shape]
    v["ndim"] = int(t.dim())
    v["size"] = int(t.numel())
    if t.dim():
        v["len"] = int(t.shape[0])
    v["dtype"] = str(t.dtype)
    v["device"] = str(t.device)
    v["requires_grad"] = bool(t.requires_grad)
    v["layout"] = str(t.layout)
    try:
        v["contiguous"] = bool(t.is_contiguous())
    except BaseException:
        pass
    if not ctx.values or t.numel() == 0 or ctx.over():
        return v
    if t.device.type != "cpu" or t.layout != torch.strided:
        v["error"] = "value facts not computed for %s %s tensors" % (t.device.type, t.layout)
        return v
    try:
        with torch.no_grad(), warnings_off():
            s = t.detach()
            if s.numel() > _FULL_SCAN:
                s = s[_strided(list(s.shape), _ELEM_SAMPLE)]
                v["sampled"] = True
            if s.is_floating_point():
                nan = torch.isnan(s)
                inf = torch.isinf(s)
                v["has_nan"] = bool(nan.any())
                v["has_inf"] = bool(inf.any())
                fin = s[~(nan | inf)]
                if fin.numel():
                    v["min"] = _finite(fin.min().item())
                    v["max"] = _finite(fin.max().item())
            elif s.dtype != torch.bool and not s.is_complex():
                v["min"] = _finite(s.min().item())
                v["max"] = _finite(s.max().item())
                v["has_nan"] = False
            if t.dim() == 0:
                v["repr"] = _builtin_repr(t.item())
            head = s.reshape(-1)[:5].tolist() if not s.is_complex() else []
            samp = [x for x in (_jsafe_or(e) for e in head) if x is not _MISSING]
            if samp:
                v["sample"] = samp
    except BaseException as e:
        v["error"] = "value facts: %s" % _err(e)
    return v


def _first_param(m):
    for d in ("_parameters", "_buffers"):
        ps = _idict(m).get(d) or {}
        for p in ps.values():
            if p is not None:
                return p
    return None


def _layer(name, m):
    d = _idict(m)
    l = {"name": name, "class": _short(type(m))}

    def put(key, val):
        if type(val) is int:
            l[key] = val

    put("in_features", d.get("in_features"))
    put("out_features", d.get("out_features"))
    put("in_channels", d.get("in_channels"))
    put("out_channels", d.get("out_channels"))
    put("num_embeddings", d.get("num_embeddings"))
    put("embedding_dim", d.get("embedding_dim"))
    if "num_features" in d:  # BatchNorm
        put("in_features", d.get("num_features"))
        put("out_features", d.get("num_features"))
    if "input_size" in d and "hidden_size" in d:  # RNN/LSTM/GRU
        put("in_features", d.get("input_size"))
        hs = d.get("hidden_size")
        if type(hs) is int:
            l["out_features"] = hs * (2 if d.get("bidirectional") else 1)
    if "embed_dim" in d:  # MultiheadAttention
        put("in_features", d.get("embed_dim"))
        put("out_features", d.get("embed_dim"))
    ns = d.get("normalized_shape")
    if type(ns) is tuple and ns and type(ns[-1]) is int:  # LayerNorm
        l["in_features"] = l["out_features"] = ns[-1]
    p = _first_param(m)
    if p is not None:
        l["device"] = str(p.device)
        l["dtype"] = str(p.dtype)
    return l


def _named_modules(m, limit):
    """(name, module) of m and its submodules in registration order, as named_modules()
    lists them, read from the _modules registries (a subclass's overrides never run)."""
    out, seen, stack = [], set(), [("", m)]
    while stack and len(out) < limit:
        name, cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        out.append((name, cur))
        subs = _idict(cur).get("_modules")
        if not _isa(subs, dict):
            continue
        kids = [(k, x) for k, x in list(dict.items(subs)) if x is not None]
        for k, x in reversed(kids):
            stack.append(((name + "." + k) if name else str(k), x))
    return out, bool(stack)


def _describe_module(m, ctx, v):
    torch = sys.modules["torch"]
    v["kind"] = "nn_module"
    v["callable"] = True
    mod = {"class": _short(type(m)), "parameters": 0}
    mods, cut = _named_modules(m, 20000)
    try:
        total, first, seen = 0, None, set()
        for _, sub in mods:
            ps = _idict(sub).get("_parameters")
            if not _isa(ps, dict):
                continue
            for p in list(dict.values(ps)):
                if p is None or id(p) in seen or not _isa(p, torch.Tensor):
                    continue
                seen.add(id(p))
                total += int(torch.Tensor.numel(p))
                if first is None:
                    first = p
        mod["parameters"] = total
        if first is not None:
            mod["dtype"] = str(first.dtype)
            v["device"] = str(first.device)
            v["dtype"] = str(first.dtype)
        if cut:
            v["error"] = "parameters: only the first %d modules are counted" % len(mods)
    except BaseException as e:
        v["error"] = "parameters: %s" % _err(e)
    tr = _idict(m).get("training")
    if type(tr) is bool:
        mod["training"] = tr
    layers = []
    truncated = False
    last = None
    try:
        for name, sub in mods:
            subs = _idict(sub).get("_modules") or {}
            if subs and any(x is not None for x in subs.values()):
                continue
            if len(layers) >= _MAX_LAYERS:
                truncated = True
                last = _layer(name or _short(type(sub)), sub)
                continue
            layers.append(_layer(name or _short(type(sub)), sub))
            if ctx.over():
                truncated = True
                break
    except BaseException as e:
        v["error"] = "layers: %s" % _err(e)
    if layers:
        mod["layers"] = layers
        mod["first"] = layers[0]
        mod["last"] = last if last is not None else layers[-1]
        if truncated:
            v["error"] = "only the first %d leaf layers are listed" % len(layers)
    v["module"] = mod
    return v


def _sample_facts(sample):
    """Shapes, dtypes and types of a dataset sample's top-level elements."""
    np = _np()
    torch = sys.modules.get("torch")
    if type(sample) is dict:
        elems = list(sample.values())[:20]
    elif type(sample) in (tuple, list):
        elems = list(sample)[:20]
    else:
        elems = [sample]
    shapes, dtypes, tps = [], [], []
    for e in elems:
        tps.append(_tname(type(e)))
        if torch is not None and isinstance(e, torch.Tensor):
            shapes.append([int(x) for x in e.shape])
            dtypes.append(str(e.dtype))
        elif np is not None and isinstance(e, (np.ndarray, np.generic)):
            shapes.append([int(x) for x in np.shape(e)])
            dtypes.append(str(e.dtype))
        elif type(e) in (int, float, bool):
            shapes.append([])
            dtypes.append(type(e).__name__)
        elif "PIL.Image" in sys.modules and _is(e, "PIL.Image", "Image"):
            w, h = e.size
            bands = len(e.getbands())
            shapes.append([h, w] + ([bands] if bands > 1 else []))
            dtypes.append(str(e.mode))
        else:
            shapes.append([])
            dtypes.append("")
    return shapes, dtypes, tps


def _tensor_dataset(ds):
    """The tensors of a torch TensorDataset (exactly that class), else None: its length and
    first sample are read from them, so no __len__ or __getitem__ runs."""
    torch = sys.modules.get("torch")
    tds = _static_get(sys.modules.get("torch.utils.data"), "TensorDataset", None)
    if torch is None or tds is None or type(ds) is not tds:
        return None
    ts = _idict(ds).get("tensors")
    if type(ts) is not tuple or not ts or not all(type(t) in (torch.Tensor, torch.nn.Parameter) for t in ts):
        return None
    return ts


def _dataset_facts(ds, loader):
    """Length and first-sample facts of a dataset, when they are static (TensorDataset);
    any other dataset's __len__ and __getitem__ are the user's code: cannot tell."""
    ts = _tensor_dataset(ds)
    if ts is None:
        return None
    shapes = [[int(x) for x in t.shape] for t in ts]
    if not shapes[0]:
        return None
    n = shapes[0][0]
    loader["sample_shapes"] = [s[1:] for s in shapes]
    loader["sample_dtypes"] = [str(t.dtype) for t in ts]
    loader["sample_types"] = ["torch.Tensor" for _ in ts]
    return n


def _loader_len(dl, n):
    """len(dl) from its dataset's length n, when its sampler and batch sampler are torch's
    plain ones (else None: a custom sampler's __len__ is user code)."""
    tud = sys.modules.get("torch.utils.data")
    d = _idict(dl)
    bs, drop = d.get("batch_size"), d.get("drop_last")
    sampler, bsampler = d.get("sampler"), d.get("batch_sampler")
    seq, rnd, bat = (_static_get(tud, k, None) for k in ("SequentialSampler", "RandomSampler", "BatchSampler"))
    if type(bs) is not int or bs <= 0 or type(drop) is not bool or type(bsampler) is not bat:
        return None
    if type(sampler) is seq:
        pass
    elif type(sampler) is rnd and _idict(sampler).get("_num_samples") is None:
        pass
    else:
        return None
    return n // bs if drop else -(-n // bs)


def _describe_loader(dl, ctx, v):
    v["kind"] = "dataloader"
    d = _idict(dl)
    loader = {}
    bs = d.get("batch_size")
    if type(bs) is int:
        loader["batch_size"] = bs
    ds = d.get("dataset")
    n = _dataset_facts(ds, loader) if ds is not None else None
    if n is not None:
        loader["dataset_len"] = n
        ln = _loader_len(dl, n) if _root(_modof(type(dl))) == "torch" else None
        if ln is not None:
            loader["len"] = ln
            v["len"] = ln
    if n is None:
        v["error"] = "cannot tell: %s's length and samples are its own code (not run)" % _short(type(ds))
    v["loader"] = loader
    return v


def _describe_dataset(ds, ctx, v):
    v["kind"] = "dataset"
    loader = {}
    n = _dataset_facts(ds, loader)
    if n is not None:
        loader["len"] = n
        loader["dataset_len"] = n
        v["len"] = n
    else:
        v["error"] = "cannot tell: %s's length and samples are its own code (not run)" % _short(type(ds))
    v["loader"] = loader
    return v


_EST_METHODS = (
    "fit", "partial_fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
    "transform", "inverse_transform", "fit_transform", "fit_predict", "score", "score_samples",
    "get_feature_names_out",
)


def _estimator(est, ctx, depth):
    e = {"class": _short(type(est)), "fitted": False}
    base = sys.modules.get("sklearn.base")
    BaseEstimator = _static_get(base, "BaseEstimator", None) if base is not None else None
    if BaseEstimator is None or not _isa(est, BaseEstimator):
        e["class"] = "passthrough" if est is None or (type(est) is str and est == "passthrough") else (
            "drop" if type(est) is str and est == "drop" else _short(type(est)))
        return e
    # Only scikit-learn's own code may run, and only on an estimator made of scikit-learn
    # parts: a user subclass's properties, get_params or available_if checks never run.
    own = _sklearn_only(est, 0)
    d = _idict(est)
    params = None
    if own:
        try:
            params = est.get_params(deep=False)
        except BaseException:
            params = None
    else:
        try:
            names = BaseEstimator.__dict__["_get_param_names"].__func__(type(est))
            params = {k: d[k] for k in names if k in d}
        except BaseException:
            params = None
    if params:
        safe = {}
        for k, val in params.items():
            j = _jsafe_or(val)
            if j is not _MISSING:
                safe[str(k)] = j
            elif type(val) in (list, tuple) and all(_jsafe_or(x) is not _MISSING for x in val) and len(val) <= 20:
                safe[str(k)] = [_jsafe_or(x) for x in val]
        if safe:
            e["params"] = safe
    steps = None
    try:
        if type(d.get("steps")) is list:
            steps = d["steps"]
        elif type(d.get("transformers_")) is list:
            steps = [(t[0], t[1]) for t in d["transformers_"]]
        elif type(d.get("transformers")) is list:
            steps = [(t[0], t[1]) for t in d["transformers"]]
        elif type(d.get("transformer_list")) is list:
            steps = d["transformer_list"]
        elif d.get("best_estimator_") is not None:
            steps = [("best_estimator_", d["best_estimator_"])]
    except BaseException:
        steps = None
    with warnings_off():
        fitted = _fitted(est, steps, own)
        if fitted is None:
            e["fitted"] = True  # cannot tell: its own __sklearn_is_fitted__ decides
            e["fitted_unknown"] = True
        else:
            e["fitted"] = fitted
        n = d.get("n_features_in_")
        if n is not None and type(_jsafe_or(n)) is int:
            e["n_features_in"] = int(n)
        np = _np()
        names = d.get("feature_names_in_")
        if names is not None and np is not None and type(names) is np.ndarray:
            e["feature_names_in"] = [str(x) for x in names.tolist()[:1000]]
        if ctx.values:
            cl = d.get("classes_")
            if cl is not None and (type(cl) in (list, tuple) or (np is not None and type(cl) is np.ndarray)):
                lst = list(cl[:100])
                e["classes"] = [_label(x) for x in lst]
        methods = []
        for m in _EST_METHODS:
            static = getattr_static_safe(est, m, _MISSING)
            if static is _MISSING:
                continue
            if own:
                try:
                    if hasattr(est, m):
                        methods.append(m)
                except BaseException:
                    pass
            else:
                methods.append(m)  # an available_if method may be there: not checked
        e["methods"] = methods
        if own:
            try:
                tags = est._get_tags()
                if type(tags.get("allow_nan")) is bool:
                    e["allows_nan"] = tags["allow_nan"]
            except BaseException:
                try:
                    tags = est.__sklearn_tags__()
                    e["allows_nan"] = bool(tags.input_tags.allow_nan)
                except BaseException:
                    pass
    if steps and depth < 3:
        out = []
        for st in steps[:50]:
            try:
                name, sub = st[0], st[1]
                out.append({"name": str(name), "estimator": _estimator(sub, ctx, depth + 1)})
            except BaseException:
                pass
        e["steps"] = out
    return e


def _fitted(est, steps, own):
    """check_is_fitted's answer; None when the estimator's own code would decide."""
    if type(est).__name__ == "Pipeline" and steps and _root(_modof(type(est))) == "sklearn":
        parts = [s[1] for s in steps if not (s[1] is None or (type(s[1]) is str and s[1] == "passthrough"))]
        answers = [_fitted(p, None, _sklearn_only(p, 0)) for p in parts]
        if any(a is None for a in answers):
            return None
        last = steps[-1][1]
        if last is None or (type(last) is str and last == "passthrough"):
            return all(answers)
        return answers[-1] if answers else False
    if own:
        val = sys.modules.get("sklearn.utils.validation")
        check = _static_get(val, "check_is_fitted", None) if val is not None else None
        if check is None:
            return False
        try:
            check(est)
            return True
        except BaseException:
            return False
    if _lookup(type(est), "__sklearn_is_fitted__") is not None:
        return None
    return any(type(k) is str and k.endswith("_") and not k.startswith("__") for k in _idict(est))


def _describe_sparse(m, ctx, v):
    v["kind"] = "sparse"
    v["shape"] = [int(x) for x in m.shape]
    v["ndim"] = len(m.shape)
    v["len"] = int(m.shape[0])
    v["dtype"] = str(m.dtype)
    try:
        v["layout"] = str(m.format)
        v["size"] = int(m.nnz)  # stored elements, scipy's .size
    except BaseException:
        pass
    data = _idict(m).get("data")
    np = _np()
    if ctx.values and np is not None and isinstance(data, np.ndarray) and data.size and data.dtype.kind in "iuf":
        sample = data
        if data.size > _FULL_SCAN:
            sample = data[:: -(-data.size // _ELEM_SAMPLE)]
            v["sampled"] = True
        with warnings_off():
            if data.dtype.kind == "f":
                v["has_nan"] = bool(np.isnan(sample).any())
                v["has_inf"] = bool(np.isinf(sample).any())
                fin = sample[np.isfinite(sample)]
                if fin.size:
                    v["min"] = _finite(fin.min())
                    v["max"] = _finite(fin.max())
            else:
                v["min"] = _finite(sample.min())
                v["max"] = _finite(sample.max())
    return v


def _describe_image(img, ctx, v):
    v["kind"] = "image"
    try:
        w, h = img.size
        bands = len(img.getbands())
        v["shape"] = [int(h), int(w)] + ([bands] if bands > 1 else [])
        v["ndim"] = len(v["shape"])
        v["dtype"] = str(img.mode)
        v["repr"] = "<PIL.Image mode=%s size=%dx%d>" % (img.mode, w, h)
    except BaseException as e:
        v["error"] = _err(e)
    return v


def _describe_tf_tensor(t, ctx, v):
    v["kind"] = "tf_tensor"
    try:
        shape = t.shape
        dims = [(-1 if d is None else int(d)) for d in list(shape)]
        v["shape"] = dims
        v["ndim"] = len(dims)
        v["dtype"] = str(getattr(t.dtype, "name", t.dtype))
        dev = getattr(t, "device", None)
        if isinstance(dev, str):
            v["device"] = dev
    except BaseException as e:
        v["error"] = _err(e)
    return v


def _describe_keras(m, ctx, v):
    v["kind"] = "keras_model"
    v["callable"] = True
    mod = {"class": _short(type(m)), "parameters": 0}
    try:
        mod["parameters"] = int(m.count_params())
    except BaseException:
        pass
    layers = []
    try:
        for layer in list(getattr(m, "layers", []))[:_MAX_LAYERS]:
            l = {"name": str(getattr(layer, "name", "")), "class": _short(type(layer))}
            units = _idict(layer).get("units")
            if type(units) is int:
                l["out_features"] = units
            for attr, key in (("filters", "out_channels"), ("input_dim", "num_embeddings"), ("output_dim", "embedding_dim")):
                val = _idict(layer).get(attr)
                if type(val) is int:
                    l[key] = val
            layers.append(l)
    except BaseException:
        pass
    if layers:
        mod["layers"] = layers
        mod["first"] = layers[0]
        mod["last"] = layers[-1]
    v["module"] = mod
    return v


