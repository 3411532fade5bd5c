# ---------------------------------------------------------------------------------------------
# Name resolution


# The __getattribute__ of object, type and module: the generic lookup getattr_static
# mirrors. Any other (a class's own, or a library base class's, such as statsmodels'
# ResultsWrapper) decides at run time: nothing static is proof then.
_PLAIN_GETATTRIBUTE = (
    object.__dict__["__getattribute__"],
    type.__dict__["__getattribute__"],
    types.ModuleType.__dict__["__getattribute__"],
)



def _plain_getattribute(ga):
    """Whether a __getattribute__ found on a type is the generic lookup. Builtin types such as
    int and float name the generic C slot in their own __dict__ (a wrapper of their own, not
    object's), so a builtins wrapper counts as plain; super is the one builtin whose lookup
    is its own."""
    if any(ga is g for g in _PLAIN_GETATTRIBUTE):
        return True
    if type(ga) is not type(_PLAIN_GETATTRIBUTE[0]):
        return False
    owner = getattr(ga, "__objclass__", None)
    return owner is not None and owner is not super and type.__getattribute__(owner, "__module__") == "builtins"


# Descriptor types whose __get__ is C code that only binds (no user code runs).
_BINDING = (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
            types.WrapperDescriptorType, types.ClassMethodDescriptorType, staticmethod)


def _cannot_tell(tp, why):
    return None, "cannot tell: %s %s" % (_short(tp), why)


def _resolve_attr(obj, name):
    """Attribute lookup decided from the type, without running the object's code.

    Returns (value, note): value is _MISSING when the attribute certainly does not exist;
    note is a string when it may exist but the lookup cannot tell or did not evaluate it
    (a class's own __getattribute__ or __getattr__, a property, a descriptor of a library
    whose code we do not run, a module attribute loaded on first use). Only the known
    containers' code runs (_TRUSTED_ROOTS, _code_ok).
    """
    if _isa(obj, types.ModuleType):
        return _module_attr(obj, name)
    tp = type(obj)
    ga = _lookup(tp, "__getattribute__")
    if ga is not None and not _plain_getattribute(ga):
        return _cannot_tell(tp, "overrides __getattribute__, so its attributes are decided at run time")
    static = getattr_static_safe(obj, name, _MISSING)
    if static is _MISSING:
        dyn = _lookup(tp, "__getattr__")
        if dyn is None:
            return _MISSING, None
        return _known_getattr(obj, tp, dyn, name)
    return _bind_static(obj, tp, name, static)


def _module_attr(mod, name):
    """A module's attribute from its __dict__: an attribute not loaded yet (a lazy module's
    __getattr__, a module subclass's own lookup) is unknown, never imported."""
    d = _idict(mod)
    if name in d:
        return d[name], None
    tp = type(mod)
    if tp is not types.ModuleType:
        if _lookup(tp, "__getattr__") is not None or _lookup(tp, "__getattribute__") is not types.ModuleType.__dict__["__getattribute__"]:
            return _cannot_tell(tp, "is a lazy module: .%s is not loaded yet" % name)
    if "__getattr__" in d:
        return None, "cannot tell: module %s loads .%s on first use (module __getattr__)" % (_jsafe_or(d.get("__name__"), "?"), name)
    return _MISSING, None


def _known_getattr(obj, tp, dyn, name):
    """A __getattr__ found on the type: torch modules' and pandas frames' are answered from
    their registries; any other may provide any attribute (cannot tell)."""
    torch = sys.modules.get("torch")
    if torch is not None and dyn is _lookup(torch.nn.Module, "__getattr__"):
        d = _idict(obj)
        for reg in ("_parameters", "_buffers", "_modules"):
            r = d.get(reg)
            if type(r) is dict or _isa(r, dict):
                if name in r:
                    return dict.__getitem__(r, name), None
        return _MISSING, None
    pd = sys.modules.get("pandas")
    if pd is not None and _root(_modof(tp)) == "pandas" and _isa(obj, pd.core.generic.NDFrame):
        try:
            holds = obj._info_axis._can_hold_identifiers_and_holds_name(name)
        except BaseException:
            return _cannot_tell(tp, "may provide .%s at run time" % name)
        if not holds:
            return _MISSING, None
        try:
            return obj[name], None
        except BaseException:
            return _cannot_tell(tp, "may provide .%s at run time" % name)
    return _cannot_tell(tp, "defines __getattr__, so it may provide .%s at run time" % name)


def _code_ok(obj, *code):
    """Whether inspection may run code (descriptors, properties) defined in the modules of
    code on obj: the object's type and the code come from the known containers, or obj is a
    scikit-learn estimator made only of scikit-learn parts."""
    allowed = _TRUSTED_ROOTS
    roots = set([_root(_modof(type(obj)))] + [_root(_modof(c)) for c in code])
    if roots <= allowed:
        return True
    return roots <= (allowed | {"sklearn"}) and _sklearn_only(obj, 0)


def _sklearn_only(est, depth):
    """est is a scikit-learn estimator whose parts (steps, wrapped estimators) are too."""
    base = sys.modules.get("sklearn.base")
    if base is None or depth > 4:
        return False
    BaseEstimator = _idict(base).get("BaseEstimator")
    if BaseEstimator is None or not _isa(est, BaseEstimator) or _root(_modof(type(est))) != "sklearn":
        return False
    for v in list(_idict(est).values()):
        if _isa(v, BaseEstimator) and not _sklearn_only(v, depth + 1):
            return False
        if type(v) in (list, tuple):
            for st in v[:100]:
                parts = st if type(st) in (list, tuple) else (st,)
                for x in parts[:4]:
                    if _isa(x, BaseEstimator) and not _sklearn_only(x, depth + 1):
                        return False
    return True


def _bind_static(obj, tp, name, static):
    """The value of an attribute found statically, when getting it runs no unknown code."""
    if name in _EXPENSIVE_ATTRS and _root(_modof(tp)) == "pandas":
        return None, "not evaluated: %s.%s may be costly" % (_short(tp), name)
    inst = _idict(obj)
    if name in inst and inst[name] is static:
        return static, None  # an instance attribute: no descriptor applies
    st = type(static)
    get = _lookup(st, "__get__")
    if get is None or _isa(static, type):
        return static, None  # a plain class attribute
    is_class = _isa(obj, type)
    inst_arg, owner = (None, obj) if is_class else (obj, tp)
    if st in _BINDING or (st is classmethod and type(getattr_static_safe(static, "__func__")) is types.FunctionType):
        try:
            return st.__get__(static, inst_arg, owner), None
        except BaseException:
            return _cannot_tell(tp, "binds .%s at run time" % name)
    if st in (types.MemberDescriptorType, types.GetSetDescriptorType):
        objclass = getattr_static_safe(static, "__objclass__")
        if is_class or not _code_ok(obj, objclass):
            if st is types.MemberDescriptorType or objclass in (object, type):
                pass  # a __slots__ entry: reading it is C code
            else:
                return None, "not evaluated: %s.%s is read by C code of %s" % (_short(tp), name, _tname(objclass))
        try:
            return st.__get__(static, inst_arg, owner), None
        except AttributeError:
            if st is types.MemberDescriptorType and _lookup(tp, "__getattr__") is None:
                return _MISSING, None  # an unset __slots__ entry
            return _cannot_tell(tp, "may provide .%s at run time" % name)
        except BaseException:
            return _cannot_tell(tp, "may provide .%s at run time" % name)
    if isinstance(static, property):
        fget = static.fget
        if fget is None or is_class or not _code_ok(obj, fget):
            return None, "not evaluated: %s.%s is a property" % (_short(tp), name)
        return _checked_getattr(obj, tp, name)
    if _code_ok(obj, st, static) and not is_class:
        return _checked_getattr(obj, tp, name)
    return None, "not evaluated: %s.%s is a %s descriptor" % (_short(tp), name, _short(st))


def _checked_getattr(obj, tp, name):
    """getattr of code _code_ok allowed; an AttributeError is "missing" only when no
    __getattr__ could answer instead."""
    try:
        with warnings_off():
            return getattr(obj, name), None
    except AttributeError:
        if _lookup(tp, "__getattr__") is None:
            return _MISSING, None
        return _known_getattr(obj, tp, _lookup(tp, "__getattr__"), name)
    except BaseException as e:
        return None, "not evaluated: %s" % _err(e)


def _pandas_attr(obj, name):
    """df.col / s.str: cheap special cases before generic resolution."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return _MISSING, None, False
    if type(obj) is pd.DataFrame:
        try:
            cols = obj.columns
            if name in cols and getattr_static_safe(type(obj), name, _MISSING) is _MISSING:
                col = obj[name]
                return col, None, True
        except BaseException:
            pass
    if type(obj) in (pd.Series, pd.Index) and name in ("str", "dt", "cat"):
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


