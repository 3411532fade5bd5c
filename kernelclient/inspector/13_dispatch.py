# ---------------------------------------------------------------------------------------------
# Describing values: the dispatch on a value's kind, to the describers of 11 and 12


def _describe(obj, ctx):
    """Facts for one resolved object (the dict of facts.Value minus name/exists)."""
    v = {"type": _tname(type(obj))}
    t = type(obj)
    if obj is None:
        v["kind"] = "none"
        if ctx.values:
            v["repr"] = "None"
        return v
    if t is bool or t is int or t is float or t is complex:
        v["kind"] = {bool: "bool", int: "int", float: "float", complex: "other"}[t]
        if ctx.values:
            v["repr"] = _builtin_repr(obj)
            if t is not complex and t is not bool:
                f = _finite(obj)
                if f is not None and abs(f) < 1e300:
                    v["min"] = v["max"] = f
            if t is float:
                v["has_nan"] = obj != obj
                v["has_inf"] = obj in (float("inf"), float("-inf"))
        return v
    if t is str or t is bytes:
        v["kind"] = "str" if t is str else "other"
        v["len"] = len(obj)
        if ctx.values:
            v["repr"] = _builtin_repr(obj)
        return v
    np = _np()
    lib = _lib_type(obj)
    if np is not None:
        if _isa(obj, np.ndarray):
            if not lib:
                return _describe_array_type(obj, v)
            return _describe_ndarray(obj, ctx, v)
        if _isa(obj, np.generic) and lib:
            v["kind"] = "numpy_scalar"
            v["dtype"] = str(obj.dtype)
            v["shape"] = []
            v["ndim"] = 0
            if ctx.values:
                v["repr"] = _builtin_repr(obj)
                f = _finite(obj) if isinstance(obj, (np.integer, np.floating)) else None
                if f is not None:
                    v["min"] = v["max"] = f
                if isinstance(obj, np.floating):
                    v["has_nan"] = bool(np.isnan(obj))
                    v["has_inf"] = bool(np.isinf(obj))
            return v
    if "pandas" in sys.modules and lib:
        pd = sys.modules["pandas"]
        if _isa(obj, pd.DataFrame):
            return _describe_frame(obj, ctx, v)
        if _isa(obj, pd.Series):
            return _describe_series(obj, ctx, v)
        if _isa(obj, pd.Index):
            return _describe_index_value(obj, ctx, v)
        if _is(obj, "pandas.core.groupby.groupby", "BaseGroupBy"):
            return _describe_groupby(obj, ctx, v)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        if _isa(obj, torch.Tensor) and lib:
            return _describe_tensor(obj, ctx, v)
        if _is(obj, "torch.nn", "Module"):
            return _describe_module(obj, ctx, v)
        if _is(obj, "torch.utils.data", "DataLoader"):
            return _describe_loader(obj, ctx, v)
        if _is(obj, "torch.utils.data", "Dataset"):
            return _describe_dataset(obj, ctx, v)
    if "sklearn.base" in sys.modules and _is(obj, "sklearn.base", "BaseEstimator"):
        v["kind"] = "estimator"
        v["estimator"] = _estimator(obj, ctx, 0)
        v["callable"] = False
        return v
    if "scipy.sparse" in sys.modules and _root(_modof(type(obj))) == "scipy":
        if _is(obj, "scipy.sparse", "spmatrix") or _is(obj, "scipy.sparse", "sparray"):
            return _describe_sparse(obj, ctx, v)
    if "PIL.Image" in sys.modules and _root(_modof(type(obj))) == "PIL" and _is(obj, "PIL.Image", "Image"):
        return _describe_image(obj, ctx, v)
    if ("tensorflow" in sys.modules or "keras" in sys.modules) and _root(_modof(type(obj))) in ("tensorflow", "keras"):
        if _mro_has(obj, "tensorflow", ("Tensor", "EagerTensor", "Variable", "ResourceVariable")):
            return _describe_tf_tensor(obj, ctx, v)
        if _mro_has(obj, "keras", ("Model", "Functional", "Sequential", "Layer")) or _mro_has(
            obj, "tensorflow", ("Model", "Functional", "Sequential")
        ):
            return _describe_keras(obj, ctx, v)
    if t in (list, tuple, set, frozenset):
        return _describe_seq(obj, ctx, v)
    if t is dict:
        return _describe_dict(obj, ctx, v)
    if _isa(obj, types.ModuleType):
        v["kind"] = "module"
        d = _idict(obj)
        names = sorted(k for k in d if isinstance(k, str) and not k.startswith("_"))
        v["attributes"] = names[:2000]
        v["attributes_complete"] = len(names) <= 2000 and "__getattr__" not in d and t is types.ModuleType
        if not v["attributes_complete"]:
            v["dynamic"] = "__getattr__" in d or t is not types.ModuleType
        return v
    if _isa(obj, type):
        v["kind"] = "class"
        v["callable"] = True
        sig = _signature(obj) if _lookup(t, "__signature__") is None else None
        if sig:
            v["signature"] = sig
        names = set()
        try:
            for c in type.__getattribute__(obj, "__mro__"):
                if c is object:
                    continue
                names.update(k for k in type.__getattribute__(c, "__dict__") if isinstance(k, str) and not k.startswith("_"))
        except BaseException:
            pass
        names.add("mro")  # type's own public method
        names = sorted(names)
        v["attributes"] = names[:500]
        v["attributes_complete"] = len(names) <= 500 and t is type
        return v
    if callable(obj) and _isa(
        obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType,
              types.MethodWrapperType, types.MethodDescriptorType, types.WrapperDescriptorType)
    ) or (_is(obj, "functools", "partial") and type(obj).__module__ == "functools"):
        v["kind"] = "callable"
        v["callable"] = True
        sig = _signature(obj)
        if sig:
            v["signature"] = sig
        return v
    # Anything else: type, callability and the statically known attributes. No repr, no len
    # (user code that may hang or raise).
    v["kind"] = "other"
    call = _lookup(t, "__call__")
    v["callable"] = call is not None
    if v["callable"]:
        if type(call) is types.FunctionType:
            try:
                v["signature"] = str(_pyinspect.signature(call))
            except BaseException:
                pass
    _attributes(obj, v)
    return v
