# ---------------------------------------------------------------------------------------------
# Name resolution


def _resolve_attr(obj, name):
    """Attribute lookup that avoids running user code.

    Returns (value, note): value is _MISSING when the attribute certainly does not exist;
    note is a string when it may exist but was not evaluated (user property, dynamic
    __getattr__, costly attribute).
    """
    if isinstance(obj, types.ModuleType):
        try:
            return getattr(obj, name), None
        except AttributeError:
            return _MISSING, None
    tp = type(obj)
    ga = _lookup(tp, "__getattribute__")
    if ga is not None and ga is not object.__getattribute__ and not _trusted(ga):
        return None, "not evaluated: %s overrides __getattribute__" % _short(tp)
    static = getattr_static_safe(obj, name, _MISSING)
    if static is _MISSING:
        dyn = _lookup(tp, "__getattr__")
        if dyn is None:
            return _MISSING, None
        if not _trusted(dyn):
            return None, "not evaluated: %s defines __getattr__" % _short(tp)
        return _checked_getattr(obj, name)
    if name in _EXPENSIVE_ATTRS and _root(_modof(tp)) == "pandas":
        return None, "not evaluated: %s.%s may be costly" % (_short(tp), name)
    if isinstance(static, property):
        if static.fget is None or not _trusted(static.fget):
            return None, "not evaluated: %s.%s is a property" % (_short(tp), name)
        return _checked_getattr(obj, name)
    st = type(static)
    if st in (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType,
              types.MethodDescriptorType, types.WrapperDescriptorType, types.MemberDescriptorType,
              types.GetSetDescriptorType, types.ClassMethodDescriptorType):
        return _checked_getattr(obj, name)
    if _lookup(st, "__get__") is None:
        return static, None  # plain value: no descriptor code runs
    if _trusted(st):
        return _checked_getattr(obj, name)
    return None, "not evaluated: %s.%s is a %s descriptor" % (_short(tp), name, _short(st))


def _checked_getattr(obj, name):
    try:
        with warnings_off():
            return getattr(obj, name), None
    except AttributeError:
        return _MISSING, None


def _pandas_attr(obj, name):
    """df.col / s.str: cheap special cases before generic resolution."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return _MISSING, None, False
    if isinstance(obj, pd.DataFrame):
        try:
            cols = obj.columns
            if name in cols and getattr_static_safe(type(obj), name, _MISSING) is _MISSING:
                col = obj[name]
                return col, None, True
        except BaseException:
            pass
    if isinstance(obj, (pd.Series, pd.Index)) and name in ("str", "dt", "cat"):
        ok = _accessor_ok(obj, name)
        if ok is False:
            return _MISSING, None, True
        return None, "accessor .%s not evaluated" % name, True
    return _MISSING, None, False


def _accessor_ok(s, name):
    pd = sys.modules.get("pandas")
    try:
        dt = s.dtype
        api = pd.api.types
        if name == "dt":
            return bool(api.is_datetime64_any_dtype(dt) or api.is_timedelta64_dtype(dt) or api.is_period_dtype(dt))
        if name == "cat":
            return bool(api.is_categorical_dtype(dt))
        if api.is_string_dtype(dt) and not api.is_object_dtype(dt):
            return True
        if not api.is_object_dtype(dt):
            return False
        n = len(s)
        step = max(1, n // 200)
        vals = s.iloc[::step][:200] if hasattr(s, "iloc") else s[::step][:200]
        for v in vals:
            if v is None or isinstance(v, (str, bytes)) or (isinstance(v, float) and v != v):
                continue
            return False
        return True
    except BaseException:
        return None


def _resolve(ns, name):
    parts = name.split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        return _MISSING, "not a name or attribute chain"
    head = parts[0]
    if head in ns:
        obj = ns[head]
    elif hasattr(builtins, head):
        obj = getattr(builtins, head)
    else:
        return _MISSING, None
    for p in parts[1:]:
        val, note, handled = _pandas_attr(obj, p)
        if not handled:
            val, note = _resolve_attr(obj, p)
        if note is not None:
            return None, note
        if val is _MISSING:
            return _MISSING, None
        obj = val
    return obj, None


