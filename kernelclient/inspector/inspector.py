"""premortem's runtime inspector and shadow runner.

premortem injects this source into the user's Jupyter kernel as the private module
``_premortem_inspector`` (exec'd in a fresh types.ModuleType registered in sys.modules, never
in the user's namespace) and calls it through ``user_expressions`` of silent executes with
empty code. Every call returns an object whose repr and IPython pretty repr are raw JSON, so
the text/plain of the user expression is the JSON of a Go facts type:

``inspect(names, budget_ms=50, values=True, namespace=False)`` -> facts.Inspection
    Facts for names and dotted attribute chains ("df", "df.Age", "model.predict"), resolved
    in get_ipython().user_ns then builtins. Attributes are looked up statically
    (inspect.getattr_static); only descriptors and __getattr__ of trusted libraries
    (pandas, numpy, torch, sklearn, ...) are evaluated. A user property, a user __getattr__ or
    a costly pandas attribute (df.values, df.T) gives exists=true with an "error" saying it was
    not evaluated (so exists=true there means "may exist"). repr() is called only on builtin
    and numpy scalars; len() only on builtin containers and torch datasets/loaders (bounded by
    a SIGALRM deadline, as is dataset[0], whose RNG draws are undone).
    Big data is sampled deterministically (10 contiguous row chunks, 10,000 rows in all, or
    strided element sampling for arrays over 2M elements): ``sampled: true``.
    values=False withholds: min, max, has_nan, has_inf, n_unique, sample, repr (except PIL
    images' mode/size summary), columns' min/max/n_unique/non_numeric_sample, index label
    samples and sklearn classes_. Kept: shapes, dtypes, null counts, element types, dict keys,
    params, fitted state, layers.
    Conventions: Value.type is "module.QualName" ("int" for builtins); Module/Estimator/Layer
    class are bare class names; a groupby's grouping keys are in index {"type": "grouping",
    "name": key or [keys]}; sparse matrices: layout = format ("csr"), size = stored elements;
    PIL images: shape [height, width(, bands)], dtype = mode; Loader.sample_* describe
    dataset[0]'s top-level elements (no batch dimension).
``whoami()`` -> {"vsc_ipynb_file", "session", "cwd", "pid", "version"}
``shadow(code, timeout_s=3.0, trace=False, max_memory=0)`` -> facts.ShadowResult
    Forks the kernel and runs the cell in the child; returns at once (status "running",
    token, fork_ms = kernel busy time of this call) or a final result (skipped; a SyntaxError
    found without forking; a refused/display-only cell magic). At most one child per kernel:
    a new run kills the previous one. A daemon thread reaps the child and keeps the result.
``shadow_result(token)`` / ``shadow_cancel(token)`` -> facts.ShadowResult
``shadow_children()`` -> pids of running children (tests).

Child containment: new session; fds 0-2 on /dev/null; stdout/stderr to bounded buffers;
display publisher, display formatter, displayhook and the kernel session's send neutralized;
input()/getpass refused; shell commands and non-whitelisted magics refused; matplotlib on
Agg; GC off (copy-on-write); RLIMIT_AS = current size + max_memory (default 2 GiB), CPU limit
and alarm past the timeout; an audit hook refusing file writes/deletes/renames/mkdir/chmod,
sockets, subprocesses, exec, fork, kill of other processes; path-taking native writers
(torch.save, DataFrame.to_parquet/to_hdf/..., h5py, cv2, keras, xgboost) refused; and on Linux
x86_64 a seccomp filter that kills the child (SIGSYS -> status refused) on writes, deletes,
renames, connect/bind, exec and fork done by native code. Any refusal makes the status
"refused" even if the cell caught the exception. MemoryError (the cap) -> "died".

Nothing here may raise into the user's session, import a library the user has not imported,
iterate user iterators, draw random numbers, or leave names, history, outputs, execution count
or RNG states changed.
"""

VERSION = "1.0.0"

import builtins
import io
import json
import math
import os
import sys
import threading
import time
import types

import dis as _dis
import inspect as _pyinspect
import linecache as _linecache

_MISSING = object()

# Roots of modules whose descriptors and __getattr__ we trust to be cheap and side-effect free
# (user-defined properties are never evaluated).
_TRUSTED_ROOTS = frozenset(
    [
        "builtins", "pandas", "numpy", "torch", "sklearn", "scipy", "tensorflow", "keras",
        "PIL", "matplotlib", "polars", "xgboost", "lightgbm", "statsmodels", "seaborn", "jax",
        "collections", "functools", "typing", "abc", "enum", "datetime", "pathlib", "re",
        "io", "os", "posixpath", "numbers", "decimal", "fractions", "types", "torchvision",
    ]
)

# Libraries reported in Inspection.imported when present in sys.modules.
_KNOWN_LIBS = (
    "numpy", "pandas", "torch", "sklearn", "scipy", "tensorflow", "keras", "matplotlib",
    "seaborn", "PIL", "statsmodels", "xgboost", "lightgbm", "catboost", "transformers",
    "datasets", "polars", "cv2", "jax", "torchvision", "plotly", "nltk", "spacy", "joblib",
)

# Attributes of pandas objects that are costly to evaluate (copies, type inference over
# every element): reported as existing, not evaluated.
_EXPENSIVE_ATTRS = frozenset(["values", "T", "style", "array", "_values", "flat", "sparse"])

_ROW_SAMPLE = 10000  # rows of a DataFrame/Series used for value facts
_ELEM_SAMPLE = 100000  # elements of an array/tensor used for value facts
_FULL_SCAN = 2000000  # arrays up to this many elements are scanned whole
_MAX_COLUMNS = 5000  # columns listed (names + dtypes)
_STAT_COLUMNS = 200  # columns with null counts / value facts
_MAX_LAYERS = 200
_REPR_LEN = 200


# ---------------------------------------------------------------------------------------------
# JSON plumbing


class _JSON(object):
    """A value whose repr is raw JSON text (what user_expressions' text/plain carries)."""

    __slots__ = ("text",)

    def __init__(self, obj):
        try:
            self.text = json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_json_default)
        except (ValueError, TypeError):
            self.text = json.dumps(_sanitize(obj), separators=(",", ":"), allow_nan=False, default=str)

    def __repr__(self):
        return self.text

    def __str__(self):
        return self.text

    def _repr_pretty_(self, p, cycle):
        p.text(self.text)


def _json_default(o):
    return _jsafe_or(o, "<%s>" % _tname(type(o)))


def _sanitize(o):
    if isinstance(o, dict):
        return {str(k): _sanitize(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_sanitize(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def _tname(t):
    """Qualified type name; builtins without the module."""
    try:
        mod = t.__module__
        qn = t.__qualname__
    except BaseException:
        return "?"
    if not isinstance(mod, str) or mod == "builtins":
        return str(qn)
    return "%s.%s" % (mod, qn)


def _short(t):
    try:
        return str(t.__name__)
    except BaseException:
        return "?"


def _root(modname):
    return modname.split(".", 1)[0] if isinstance(modname, str) else ""


def _modof(x):
    """Module name that defined a function, type or descriptor (no user code runs)."""
    for _ in range(4):
        if isinstance(x, property):
            x = x.fget
        elif isinstance(x, (staticmethod, classmethod)):
            x = x.__func__
        elif type(x).__name__ == "cached_property" and hasattr(type(x), "__set_name__"):
            x = getattr_static_safe(x, "func")
        else:
            break
    if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, type)):
        try:
            mod = type.__getattribute__(x, "__module__") if isinstance(x, type) else x.__module__
            return mod if isinstance(mod, str) else None
        except BaseException:
            return None
    if x is None:
        return None
    return _modof(type(x))


def _trusted(obj):
    """Whether obj (a function, descriptor or type) comes from a library we trust."""
    return _root(_modof(obj)) in _TRUSTED_ROOTS


def _lookup(tp, name):
    """name in the class dicts along tp's MRO (not the metaclass), or None."""
    try:
        for k in tp.__mro__:
            d = type.__getattribute__(k, "__dict__")
            if name in d:
                return d[name]
    except BaseException:
        pass
    return None


def _idict(obj):
    """The instance __dict__ of obj, or {} (no user code runs)."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except BaseException:
        return {}
    return d if type(d) is dict else {}


def getattr_static_safe(obj, name, default=None):
    try:
        return _pyinspect.getattr_static(obj, name, default)
    except BaseException:
        return default


def _np():
    return sys.modules.get("numpy")


def _finite(x):
    """x as a finite float, or None."""
    try:
        f = float(x)
    except BaseException:
        return None
    return f if math.isfinite(f) else None


def _jsafe_or(v, default=_MISSING):
    """v as a JSON-safe scalar (bool/int/float/str/None), numpy scalars converted."""
    t = type(v)
    if v is None or t is bool or t is str:
        return v if t is not str or len(v) <= _REPR_LEN else v[:_REPR_LEN] + "..."
    if t is int:
        return v if -(2 ** 63) <= v < 2 ** 63 else float(v)
    if t is float:
        return v if math.isfinite(v) else default
    np = _np()
    if np is not None and isinstance(v, np.generic):
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, np.integer):
            return int(v)
        if isinstance(v, np.floating):
            f = float(v)
            return f if math.isfinite(f) else default
        if isinstance(v, (np.str_,)):
            return _jsafe_or(str(v), default)
    return default


def _label(v):
    """A column/index label as JSON: strings and numbers as such, tuples as lists."""
    j = _jsafe_or(v)
    if j is not _MISSING:
        return j
    if type(v) is tuple:
        return [_label(x) for x in v]
    if type(v) is float:
        return str(v)  # nan label
    if _trusted(type(v)):
        try:
            return str(v)
        except BaseException:
            pass
    return "<%s>" % _tname(type(v))


def _builtin_repr(v):
    """repr only for builtin scalars and numpy scalars (never user code)."""
    t = type(v)
    np = _np()
    if v is None or t in (bool, int, float, complex, str, bytes) or (np is not None and isinstance(v, np.generic)):
        try:
            r = repr(v)
        except BaseException:
            return None
        return r if len(r) <= _REPR_LEN else r[:_REPR_LEN] + "..."
    return None


def _shell():
    ip = sys.modules.get("IPython")
    get = getattr(ip, "get_ipython", None) if ip is not None else None
    if get is None:
        return None
    try:
        return get()
    except BaseException:
        return None


def _user_ns():
    sh = _shell()
    if sh is not None:
        return sh.user_ns
    main = sys.modules.get("__main__")
    return getattr(main, "__dict__", {})


def _redirected():
    """Context that sends stdout/stderr of user code we call (dataset[0]) to a buffer."""
    import contextlib

    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    stack.enter_context(warnings_off())
    return stack


class warnings_off(object):
    """Suppress warnings (a RuntimeWarning printed by our min() would reach the user)."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")
        np = _np()
        self._err = None
        if np is not None:
            try:
                self._err = np.seterr(all="ignore")
            except BaseException:
                self._err = None
        return self

    def __exit__(self, *exc):
        np = _np()
        if np is not None and self._err is not None:
            try:
                np.seterr(**self._err)
            except BaseException:
                pass
        self._cm.__exit__(*exc)
        return False


class _UserCodeTimeout(Exception):
    pass


class _Deadline(object):
    """Interrupts user code we call (len(dataset), dataset[0]) that runs past a deadline.

    A SIGALRM timer in the main thread; the user's handler and timer are restored after.
    Code stuck in C without returning to the interpreter cannot be interrupted.
    """

    def __init__(self, seconds):
        self.seconds = max(0.01, seconds)
        self.armed = False

    def __enter__(self):
        import signal

        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return self

        def _raise(signum, frame):
            raise _UserCodeTimeout("did not finish within %.0f ms" % (self.seconds * 1000))

        try:
            self.old_handler = signal.signal(signal.SIGALRM, _raise)
            self.old_timer = signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.start = time.monotonic()
            self.armed = True
        except BaseException:
            self.armed = False
        return self

    def __exit__(self, *exc):
        import signal

        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old_handler)
            left, interval = self.old_timer
            if left > 0:
                spent = time.monotonic() - self.start
                signal.setitimer(signal.ITIMER_REAL, max(0.001, left - spent), interval)
        return False


def _user_time(ctx):
    """Seconds user code we call may take: what is left of the budget, at least 100 ms."""
    return max(0.1, ctx.deadline - time.perf_counter())


class _RNGGuard(object):
    """Saves and restores random, numpy and torch global RNG states around user code."""

    def __enter__(self):
        self.states = []
        rnd = sys.modules.get("random")
        if rnd is not None:
            self.states.append((rnd.setstate, rnd.getstate()))
        np = _np()
        if np is not None:
            try:
                self.states.append((np.random.set_state, np.random.get_state()))
            except BaseException:
                pass
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                self.states.append((torch.set_rng_state, torch.get_rng_state()))
            except BaseException:
                pass
        return self

    def __exit__(self, *exc):
        for setter, state in self.states:
            try:
                setter(state)
            except BaseException:
                pass
        return False


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
    """isinstance(obj, sys.modules[modname].<attr_path>) without importing anything."""
    mod = sys.modules.get(modname)
    if mod is None:
        return False
    cls = mod
    for a in attr_path.split("."):
        cls = getattr(cls, a, None)
        if cls is None:
            return False
    try:
        return isinstance(obj, cls)
    except BaseException:
        return False


def _mro_has(obj, root, names):
    try:
        for c in type(obj).__mro__:
            if c.__name__ in names and _root(c.__module__) == root:
                return True
    except BaseException:
        pass
    return False


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
    if np is not None:
        if isinstance(obj, np.ndarray):
            return _describe_ndarray(obj, ctx, v)
        if isinstance(obj, np.generic):
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
    if "pandas" in sys.modules:
        pd = sys.modules["pandas"]
        if isinstance(obj, pd.DataFrame):
            return _describe_frame(obj, ctx, v)
        if isinstance(obj, pd.Series):
            return _describe_series(obj, ctx, v)
        if isinstance(obj, pd.Index):
            return _describe_index_value(obj, ctx, v)
        if _is(obj, "pandas.core.groupby.groupby", "BaseGroupBy"):
            return _describe_groupby(obj, ctx, v)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        if isinstance(obj, torch.Tensor):
            return _describe_tensor(obj, ctx, v)
        if isinstance(obj, torch.nn.Module):
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
    if "scipy.sparse" in sys.modules:
        sp = sys.modules["scipy.sparse"]
        try:
            if sp.issparse(obj):
                return _describe_sparse(obj, ctx, v)
        except BaseException:
            pass
    if "PIL.Image" in sys.modules and _is(obj, "PIL.Image", "Image"):
        return _describe_image(obj, ctx, v)
    if "tensorflow" in sys.modules or "keras" in sys.modules:
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
    if isinstance(obj, types.ModuleType):
        v["kind"] = "module"
        d = _idict(obj)
        names = sorted(k for k in d if isinstance(k, str) and not k.startswith("_"))
        v["attributes"] = names[:2000]
        v["attributes_complete"] = len(names) <= 2000 and "__getattr__" not in d
        return v
    if isinstance(obj, type):
        v["kind"] = "class"
        v["callable"] = True
        sig = _signature(obj)
        if sig:
            v["signature"] = sig
        names = set()
        try:
            for c in obj.__mro__:
                if c is object:
                    continue
                names.update(k for k in vars(c) if isinstance(k, str) and not k.startswith("_"))
        except BaseException:
            pass
        names = sorted(names)
        v["attributes"] = names[:500]
        v["attributes_complete"] = len(names) <= 500 and type(obj) is type
        return v
    if callable(obj) and isinstance(
        obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType,
              types.MethodWrapperType, types.MethodDescriptorType, types.WrapperDescriptorType)
    ) or _is(obj, "functools", "partial"):
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
        if isinstance(call, types.FunctionType):
            try:
                v["signature"] = str(_pyinspect.signature(call))
            except BaseException:
                pass
    _attributes(obj, v)
    return v


def _signature(obj):
    try:
        return str(_pyinspect.signature(obj))
    except BaseException:
        return None


def _attributes(obj, v):
    names = set()
    inst = _idict(obj)
    complete = True
    if isinstance(inst, dict):
        names.update(k for k in inst if isinstance(k, str) and not k.startswith("_"))
    try:
        for c in type(obj).__mro__:
            if c is object:
                continue
            names.update(k for k in vars(c) if isinstance(k, str) and not k.startswith("_"))
    except BaseException:
        complete = False
    tp = type(obj)
    if _lookup(tp, "__getattr__") is not None:
        complete = False
    ga = _lookup(tp, "__getattribute__")
    if ga is not None and ga is not object.__getattribute__:
        complete = False
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


def _err(e):
    if isinstance(e, _UserCodeTimeout):
        return str(e)
    try:
        msg = str(e) if type(e).__module__ in ("builtins",) or _trusted(type(e)) else ""
    except BaseException:
        msg = ""
    return ("%s: %s" % (type(e).__name__, msg[:200])) if msg else type(e).__name__


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
            c["n_unique"] = int(s.nunique())
        except BaseException:
            pass
    return c


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


def _describe_module(m, ctx, v):
    torch = sys.modules["torch"]
    Module = torch.nn.Module
    v["kind"] = "nn_module"
    v["callable"] = True
    mod = {"class": _short(type(m)), "parameters": 0}
    try:
        total = 0
        first = None
        for p in Module.parameters(m):
            total += int(p.numel())
            if first is None:
                first = p
        mod["parameters"] = total
        if first is not None:
            mod["dtype"] = str(first.dtype)
            v["device"] = str(first.device)
            v["dtype"] = str(first.dtype)
    except BaseException as e:
        v["error"] = "parameters: %s" % _err(e)
    tr = _idict(m).get("training")
    if type(tr) is bool:
        mod["training"] = tr
    layers = []
    truncated = False
    last = None
    try:
        for name, sub in Module.named_modules(m):
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


def _safe_len(obj, ctx):
    try:
        with _Deadline(_user_time(ctx)), _redirected():
            n = len(obj)
        return int(n), None
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return None, "len(): %s" % _err(e)


def _first_sample(ds, loader, ctx):
    """dataset[0]'s element shapes/dtypes, RNG states and output protected."""
    if _is(ds, "torch.utils.data", "IterableDataset"):
        return
    if _lookup(type(ds), "__getitem__") is None or ctx.over():
        return
    try:
        with _RNGGuard(), _Deadline(_user_time(ctx)), _redirected():
            sample = ds[0]
        shapes, dtypes, tps = _sample_facts(sample)
        loader["sample_shapes"] = shapes
        loader["sample_dtypes"] = dtypes
        loader["sample_types"] = tps
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        loader.setdefault("_error", "dataset[0]: %s" % _err(e))


def _describe_loader(dl, ctx, v):
    v["kind"] = "dataloader"
    d = _idict(dl)
    loader = {}
    bs = d.get("batch_size")
    if type(bs) is int:
        loader["batch_size"] = bs
    ds = d.get("dataset")
    n, err = _safe_len(dl, ctx)
    if n is not None:
        loader["len"] = n
        v["len"] = n
    if ds is not None:
        dn, _ = _safe_len(ds, ctx)
        if dn is not None:
            loader["dataset_len"] = dn
        _first_sample(ds, loader, ctx)
    e = loader.pop("_error", None) or err
    if e:
        v["error"] = e
    v["loader"] = loader
    return v


def _describe_dataset(ds, ctx, v):
    v["kind"] = "dataset"
    loader = {}
    n, err = _safe_len(ds, ctx)
    if n is not None:
        loader["len"] = n
        loader["dataset_len"] = n
        v["len"] = n
    _first_sample(ds, loader, ctx)
    e = loader.pop("_error", None) or err
    if e:
        v["error"] = e
    v["loader"] = loader
    return v


_EST_METHODS = (
    "fit", "partial_fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
    "transform", "inverse_transform", "fit_transform", "fit_predict", "score", "score_samples",
    "get_feature_names_out",
)


def _estimator(est, ctx, depth):
    e = {"class": _short(type(est)), "fitted": False}
    if not (sys.modules.get("sklearn.base") and _is(est, "sklearn.base", "BaseEstimator")):
        e["class"] = "passthrough" if est in (None, "passthrough") else ("drop" if est == "drop" else _short(type(est)))
        return e
    try:
        params = est.get_params(deep=False)
        safe = {}
        for k, val in params.items():
            j = _jsafe_or(val)
            if j is not _MISSING:
                safe[str(k)] = j
            elif type(val) in (list, tuple) and all(_jsafe_or(x) is not _MISSING for x in val) and len(val) <= 20:
                safe[str(k)] = [_jsafe_or(x) for x in val]
        if safe:
            e["params"] = safe
    except BaseException:
        pass
    steps = None
    try:
        d = _idict(est)
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
        e["fitted"] = _fitted(est, steps)
        try:
            n = getattr(est, "n_features_in_", None)
            if n is not None and _jsafe_or(n) is not _MISSING:
                e["n_features_in"] = int(n)
        except BaseException:
            pass
        try:
            names = getattr(est, "feature_names_in_", None)
            if names is not None:
                e["feature_names_in"] = [str(x) for x in list(names)[:1000]]
        except BaseException:
            pass
        if ctx.values:
            try:
                cl = getattr(est, "classes_", None)
                if cl is not None:
                    lst = list(cl)[:100]
                    e["classes"] = [_label(x) for x in lst]
            except BaseException:
                pass
        methods = []
        for m in _EST_METHODS:
            try:
                if hasattr(est, m):
                    methods.append(m)
            except BaseException:
                pass
        e["methods"] = methods
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


def _fitted(est, steps):
    val = sys.modules.get("sklearn.utils.validation")
    if type(est).__name__ == "Pipeline" and steps:
        last = steps[-1][1]
        if last is None or last == "passthrough":
            return all(_fitted(s[1], None) for s in steps[:-1] if s[1] not in (None, "passthrough"))
        return _fitted(last, None)
    if val is None or not hasattr(val, "check_is_fitted"):
        return False
    try:
        val.check_is_fitted(est)
        return True
    except BaseException:
        return False


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


# ---------------------------------------------------------------------------------------------
# Public calls: inspect, whoami


def _namespace(sh, ns):
    hidden = getattr(sh, "user_ns_hidden", {}) if sh is not None else {}
    out = []
    for k in list(ns.keys()):
        if not isinstance(k, str) or k.startswith("_"):
            continue
        if k in hidden and ns.get(k) is hidden.get(k):
            continue
        if k in ("In", "Out", "exit", "quit", "get_ipython"):
            continue
        out.append(k)
    out.sort()
    return out


def _imported(ns):
    roots = set()
    for val in list(ns.values()):
        try:
            if isinstance(val, types.ModuleType):
                roots.add(_root(val.__name__))
            elif isinstance(val, (types.FunctionType, type, types.BuiltinFunctionType)):
                mod = _modof(val)
                if isinstance(mod, str) and mod != "__main__":
                    roots.add(_root(mod))
        except BaseException:
            pass
    roots.update(m for m in _KNOWN_LIBS if m in sys.modules)
    roots.discard("builtins")
    roots.discard("")
    return sorted(r for r in roots if r in sys.modules)


def inspect(names, budget_ms=50, values=True, namespace=False):
    """Facts for names and attribute chains (facts.Inspection JSON)."""
    start = time.perf_counter()
    try:
        budget = float(budget_ms) if budget_ms else 50.0
    except BaseException:
        budget = 50.0
    ctx = _Ctx(bool(values), start + budget / 1000.0)
    sh = _shell()
    ns = _user_ns()
    out = {}
    for name in list(names or []):
        name = str(name)
        try:
            out[name] = _inspect_one(ns, name, ctx)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            out[name] = {"name": name, "exists": True, "error": "inspector: %s" % _err(e)}
    res = {"values": out, "inspector_version": VERSION}
    try:
        res["execution_count"] = int(getattr(sh, "execution_count", 0) or 0)
    except BaseException:
        res["execution_count"] = 0
    if namespace:
        try:
            res["namespace"] = _namespace(sh, ns)
        except BaseException:
            pass
    try:
        res["imported"] = _imported(ns)
    except BaseException:
        pass
    if ctx.exceeded:
        res["budget_exceeded"] = True
    res["elapsed_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
    return _JSON(res)


def _inspect_one(ns, name, ctx):
    obj, note = _resolve(ns, name)
    if obj is _MISSING:
        v = {"name": name, "exists": False}
        if note:
            v["error"] = note
        return v
    if note is not None:
        return {"name": name, "exists": True, "error": note}
    if ctx.over():
        # Out of budget: the cheap part only.
        return {"name": name, "exists": True, "type": _tname(type(obj)), "error": "budget exceeded"}
    v = {"name": name, "exists": True}
    v.update(_describe(obj, ctx))
    return v


def whoami():
    """Which notebook this kernel serves, its cwd and pid."""
    ns = _user_ns()

    def s(x):
        return x if isinstance(x, str) else None

    return _JSON(
        {
            "vsc_ipynb_file": s(ns.get("__vsc_ipynb_file__")),
            "session": s(ns.get("__session__")),
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "version": VERSION,
        }
    )


# ---------------------------------------------------------------------------------------------
# Shadow runs: parent side

CELL_FILENAME = "<premortem-cell>"
_MAX_RESULTS = 32
_DEFAULT_MAX_MEMORY = 2 << 30
_OUT_LIMIT = 8192
_TRACE_LINES = 200
_TRACE_NAMES = 20

_lock = threading.Lock()
_results = {}  # token -> result dict (facts.ShadowResult)
_order = []  # tokens, oldest first
_children = {}  # token -> _Child
_counter = [0]


class _Child(object):
    __slots__ = ("token", "pid", "rfd", "deadline", "timeout", "cancelled", "started", "max_memory")

    def __init__(self, token, pid, rfd, timeout, max_memory):
        self.token = token
        self.pid = pid
        self.rfd = rfd
        self.started = time.monotonic()
        self.timeout = timeout
        self.deadline = self.started + timeout
        self.cancelled = None
        self.max_memory = max_memory


def _store(res):
    with _lock:
        tok = res["token"]
        if tok not in _results:
            _order.append(tok)
        _results[tok] = res
        while len(_order) > _MAX_RESULTS:
            old = _order.pop(0)
            if old not in _children:
                _results.pop(old, None)
            else:
                _order.append(old)
                break


def _new_token():
    _counter[0] += 1
    return "%d-%d-%s" % (os.getpid(), _counter[0], os.urandom(4).hex())


def _final(token, status, reason=None, **kw):
    res = {"token": token, "status": status}
    if reason:
        res["reason"] = reason
    res.update(kw)
    return res


def _meminfo_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except BaseException:
        return None
    return None


def _statm():
    """(virtual size, rss) of this process in bytes, or (None, None)."""
    try:
        with open("/proc/self/statm") as f:
            parts = f.read().split()
        page = os.sysconf("SC_PAGE_SIZE")
        return int(parts[0]) * page, int(parts[1]) * page
    except BaseException:
        return None, None


def _skip_reason():
    if not hasattr(os, "fork") or os.name == "nt":
        return "shadow runs need fork(), not available on Windows"
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return "the kernel uses CUDA, which does not survive fork: not shadow-run"
        except BaseException:
            pass
    _, rss = _statm()
    avail = _meminfo_available()
    if rss is not None and avail is not None and rss > avail:
        return "the kernel's memory (%d MiB) is larger than what is free (%d MiB): not shadow-run" % (
            rss >> 20, avail >> 20)
    return None


# Cell magics handled before IPython's transformer (so line numbers stay those of the cell).
_CELL_MAGIC_RUN = frozenset(["time", "timeit", "capture", "prun"])
_CELL_MAGIC_DISPLAY = frozenset(["html", "HTML", "markdown", "latex", "svg", "javascript", "js", "md"])
# Line magics the child runs (or ignores as harmless); anything else is refused.
_LINE_MAGIC_NOOP = frozenset(["matplotlib", "autoreload", "aimport", "xmode", "pdb", "config_inline",
                              "colors", "autocall", "automagic", "precision", "doctest_mode",
                              "notebook", "qtconsole", "pprint", "autosave"])
_LINE_MAGIC_RUN = frozenset(["config", "load_ext", "reload_ext", "env", "who", "whos", "who_ls",
                             "pwd", "cd", "reset", "reset_selective", "history", "lsmagic",
                             "pinfo", "pinfo2", "psearch", "pdoc", "pdef", "psource", "pfile",
                             "magic", "page", "pylab", "xdel", "dhist", "set_env", "unalias",
                             "alias_magic", "tb", "run"])
_LINE_MAGIC_ONCE = frozenset(["time", "timeit", "prun"])


def _prepare(code):
    """Split off a cell magic; returns (body, status_dict_or_None).

    The magic line is replaced by an empty line (or the %%timeit setup statement) so the body's
    line numbers are the cell's.
    """
    lines = code.split("\n")
    k = 0
    while k < len(lines) - 1 and not lines[k].strip():
        k += 1  # IPython drops leading blank lines before looking for a cell magic
    first = lines[k].strip() if lines else ""
    if not first.startswith("%%"):
        return code, None
    parts = first[2:].split(None, 1)
    magic = parts[0] if parts else ""
    rest = parts[1] if len(parts) > 1 else ""
    if magic in _CELL_MAGIC_DISPLAY:
        return None, {"status": "ok", "reason": "%%%%%s cell only displays" % magic}
    if magic in _CELL_MAGIC_RUN:
        setup = ""
        if magic == "timeit":
            toks = rest.split()
            i = 0
            while i < len(toks) and toks[i].startswith("-"):
                if toks[i] in ("-n", "-r", "-p") and i + 1 < len(toks):
                    i += 1
                i += 1
            setup = " ".join(toks[i:])
        return "\n".join(lines[:k] + [setup] + lines[k + 1:]), None
    return None, {"status": "refused", "refused": "%%%%%s cell magic" % magic,
                  "reason": "the %%%%%s cell magic is not run in a shadow run; outcome unknown" % magic}


def _line_map(orig, transformed):
    """Maps 1-based lines of the transformed cell to lines of the original cell."""
    a = orig.split("\n")
    b = transformed.rstrip("\n").split("\n")
    while a and not a[-1].strip():
        a.pop()
    while b and not b[-1].strip():
        b.pop()
    if len(a) == len(b):
        return None
    import difflib

    m = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            m[j + 1] = min(i1 + (j - j1), max(i1, i2 - 1)) + 1
    return m


def shadow(code, timeout_s=3.0, trace=False, max_memory=0):
    """Fork the kernel and run code in the child; returns at once (facts.ShadowResult JSON)."""
    t0 = time.perf_counter()
    token = _new_token()
    sh = _shell()
    try:
        count = int(getattr(sh, "execution_count", 0) or 0)
    except BaseException:
        count = 0
    try:
        res = _start(token, str(code), float(timeout_s or 3.0), bool(trace), int(max_memory or 0), sh, count, t0)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        res = _final(token, "skipped", "shadow run could not start: %s" % _err(e))
    res.setdefault("execution_count", count)
    res.setdefault("fork_ms", round((time.perf_counter() - t0) * 1000.0, 3))
    if res.get("status") != "running":
        _store(dict(res))
    return _JSON(res)


def _start(token, code, timeout, trace, max_memory, sh, count, t0):
    reason = _skip_reason()
    if reason:
        return _final(token, "skipped", reason)
    _kill_running("cancelled: a newer shadow run started")
    body, early = _prepare(code)
    if early is not None:
        early["token"] = token
        return early
    transformed = body
    if sh is not None and hasattr(sh, "transform_cell"):
        transformed = sh.transform_cell(body)
    lmap = _line_map(code, transformed)
    flags = 0
    comp = getattr(sh, "compile", None)
    try:
        flags = int(getattr(comp, "flags", 0)) & ~0x2000  # no PyCF_ALLOW_TOP_LEVEL_AWAIT
    except BaseException:
        flags = 0
    is_async = False
    try:
        cell_code = compile(transformed, CELL_FILENAME, "exec", flags, True)
    except SyntaxError as e:
        try:
            import ast

            cell_code = compile(transformed, CELL_FILENAME, "exec", flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, True)
            is_async = True
        except SyntaxError:
            line = _map(lmap, e.lineno or 0)
            return _final(token, "error", None, exception=type(e).__name__, message=str(e.msg)[:2000],
                          line=line, frames=[{"file": CELL_FILENAME, "line": line, "func": "<cell>",
                                              "in_cell": True, "text": _orig_line(code, line)}])
    if max_memory <= 0:
        max_memory = _DEFAULT_MAX_MEMORY
    rnd = sys.modules.get("random")
    rstate = rnd.getstate() if rnd is not None else None
    import signal

    rfd, wfd = os.pipe()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    tf = time.perf_counter()
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(rfd)
        os.close(wfd)
        raise
    if pid == 0:  # child: never returns
        try:
            os.close(rfd)
            _child_main(wfd, code, cell_code, lmap, timeout, trace, max_memory, rstate, old_mask, is_async, sh)
        finally:
            os._exit(70)
    fork_ms = (time.perf_counter() - tf) * 1000.0
    try:  # register and start reaping before signals are unblocked: a KeyboardInterrupt must
        # not leave the child unreaped
        os.close(wfd)
        child = _Child(token, pid, rfd, timeout, max_memory)
        with _lock:
            _children[token] = child
        res = _final(token, "running")
        res["execution_count"] = count
        res["fork_syscall_ms"] = round(fork_ms, 3)
        res["fork_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
        _store(dict(res))  # before the reaper can store the outcome
        th = threading.Thread(target=_reap, args=(child,), name="premortem-shadow-reaper", daemon=True)
        th.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    return res


def _map(lmap, line):
    if not line:
        return 0
    if lmap is None:
        return line
    return lmap.get(line, line)


def _orig_line(code, line):
    lines = code.split("\n")
    if 1 <= line <= len(lines):
        return lines[line - 1].strip()[:300]
    return ""


def _kill(pid):
    import signal

    for fn in (os.killpg, os.kill):
        try:
            fn(pid, signal.SIGKILL)
        except BaseException:
            pass


def _kill_running(why):
    with _lock:
        running = list(_children.values())
    for c in running:
        c.cancelled = why
        _kill(c.pid)


def _reap(child):
    """Parent-side thread: drain the child's pipe, enforce the deadline, reap, store."""
    import select

    chunks = []
    timed_out = False
    status = None
    pidfd = None
    try:
        pidfd = os.pidfd_open(child.pid)
    except BaseException:
        pidfd = None
    eof = False
    try:
        while True:
            if status is None:
                try:
                    wpid, st = os.waitpid(child.pid, os.WNOHANG)
                    if wpid == child.pid:
                        status = st
                except ChildProcessError:
                    status = -1
            if status is not None and eof:
                break
            now = time.monotonic()
            if now >= child.deadline and status is None:
                timed_out = True
                _kill(child.pid)
                child.deadline = now + 3600.0
            watch = [] if eof else [child.rfd]
            if pidfd is not None and status is None:
                watch.append(pidfd)
            wait = max(0.0, min(child.deadline - now, 1.0))
            if status is not None and not eof:
                wait = 0.2  # exited: drain what is left
            if pidfd is None and status is None:
                wait = min(wait, 0.01)
            if watch:
                r, _, _ = select.select(watch, [], [], wait)
            else:
                r = []
                time.sleep(wait)
            if child.rfd in r:
                data = os.read(child.rfd, 1 << 16)
                if data:
                    chunks.append(data)
                else:
                    eof = True
            elif status is not None and not r and not eof:
                eof = True  # exited, nothing more to read (a grandchild may hold the pipe)
            if timed_out and status is not None:
                break
    except BaseException as e:
        _kill(child.pid)
        try:
            os.waitpid(child.pid, 0)
        except BaseException:
            pass
        status = status if status is not None else -1
        chunks = [json.dumps({"status": "died", "reason": "shadow reaper failed: %s" % _err(e)}).encode()]
    finally:
        for fd in (child.rfd, pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except BaseException:
                    pass
        with _lock:
            _children.pop(child.token, None)
    elapsed = (time.monotonic() - child.started) * 1000.0
    res = _outcome(child, b"".join(chunks), status, timed_out, elapsed)
    with _lock:
        prev = _results.get(child.token, {})
    for k in ("fork_ms", "execution_count"):
        if k in prev:
            res.setdefault(k, prev[k])
    _store(res)


def _outcome(child, data, status, timed_out, elapsed):
    import signal

    token = child.token
    if child.cancelled:
        return _final(token, "died", child.cancelled, elapsed_ms=round(elapsed, 3))
    if timed_out:
        return _final(token, "timeout", "the cell ran longer than %g s in the shadow run and was stopped; outcome unknown"
                      % child.timeout, elapsed_ms=round(elapsed, 3))
    res = None
    if data:
        try:
            res = json.loads(data.decode("utf-8", "replace"))
        except BaseException:
            res = None
    if isinstance(res, dict) and res.get("status"):
        res["token"] = token
        return res
    why = "the shadow run died without reporting"
    if status is not None and status >= 0 and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except BaseException:
            name = str(sig)
        if sig == getattr(signal, "SIGSYS", -1):
            what = "a file write, delete, rename, socket or process launch from native code"
            return _final(token, "refused", "the cell tried a side effect a shadow run does not allow (%s); outcome unknown"
                          % what, refused=what, elapsed_ms=round(elapsed, 3))
        if sig == getattr(signal, "SIGXCPU", -1):
            return _final(token, "timeout", "the cell used more CPU time than the shadow run allows", elapsed_ms=round(elapsed, 3))
        why = "the shadow run was killed by %s%s" % (name, " (out of memory?)" if sig == signal.SIGKILL else "")
    elif status is not None and status >= 0 and os.WIFEXITED(status):
        why = "the shadow run exited with status %d without reporting" % os.WEXITSTATUS(status)
    return _final(token, "died", why, elapsed_ms=round(elapsed, 3))


def shadow_result(token):
    """The stored outcome of a shadow run (status running while the child works)."""
    with _lock:
        res = _results.get(str(token))
    if res is None:
        return _JSON(_final(str(token), "died", "unknown shadow token (the kernel restarted or the result expired)"))
    return _JSON(dict(res))


def shadow_cancel(token):
    """Kill a running shadow child; returns its (final or running) result."""
    with _lock:
        c = _children.get(str(token))
    if c is not None:
        c.cancelled = "cancelled"
        _kill(c.pid)
    return shadow_result(token)


def shadow_children():
    """Pids of running shadow children (for tests)."""
    with _lock:
        return _JSON(sorted(c.pid for c in _children.values()))


# ---------------------------------------------------------------------------------------------
# Shadow runs: child side


class ShadowRefusal(BaseException):
    """Raised in the child when the cell attempts a side effect premortem refuses.

    A BaseException so that `except Exception` in user code does not swallow it.
    """


_refusals = []
# O_TMPFILE is not listed: it contains O_DIRECTORY's bit and requires O_WRONLY/O_RDWR anyway.
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_REFUSED_EVENTS = {
    "os.remove": "delete", "os.rmdir": "delete", "os.rename": "rename", "os.mkdir": "mkdir",
    "os.chmod": "chmod", "os.chown": "chown", "os.link": "link", "os.symlink": "symlink",
    "os.truncate": "truncate", "os.utime": "utime", "os.chflags": "chflags", "os.lchflags": "chflags",
    "os.mkfifo": "mkfifo", "os.mknod": "mknod", "os.setxattr": "setxattr", "os.removexattr": "removexattr",
    "shutil.rmtree": "delete", "shutil.move": "move", "shutil.copyfile": "copy", "shutil.copymode": "copy",
    "shutil.copystat": "copy", "shutil.copytree": "copy", "shutil.chown": "chown",
    "shutil.make_archive": "archive", "shutil.unpack_archive": "unpack",
    "socket.connect": "socket", "socket.bind": "socket", "socket.sendto": "socket", "socket.sendmsg": "socket",
    "subprocess.Popen": "subprocess", "os.system": "os.system", "os.exec": "exec", "os.posix_spawn": "spawn",
    "os.spawn": "spawn", "os.fork": "fork", "os.forkpty": "fork", "pty.spawn": "spawn", "os.startfile": "startfile",
    "webbrowser.open": "webbrowser", "os.kill": "kill", "os.killpg": "kill",
}


def _refuse(what):
    if len(_refusals) < 20:
        _refusals.append(what)
    raise ShadowRefusal("premortem shadow run refused: %s" % what)


def _arg(a):
    try:
        if isinstance(a, bytes):
            a = a.decode("utf-8", "replace")
        if isinstance(a, (str, int)):
            s = str(a)
        elif hasattr(a, "__fspath__"):
            s = str(os.fspath(a))
        else:
            s = "<%s>" % _short(type(a))
    except BaseException:
        s = "?"
    return s if len(s) <= 120 else s[:120] + "..."


def _audit(event, args):
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if isinstance(path, int):
            return
        write = False
        if isinstance(mode, str):
            write = any(ch in mode for ch in "wax+")
        elif isinstance(flags, int):
            write = bool(flags & _WRITE_FLAGS)
        if write:
            p = _arg(path)
            if p in (os.devnull, "/dev/null"):
                return
            m = mode if isinstance(mode, str) else "flags=%#x" % (flags or 0)
            _refuse("open(%r, %r)" % (p, m))
        return
    what = _REFUSED_EVENTS.get(event)
    if what is None:
        if event == "sqlite3.connect":
            db = _arg(args[0]) if args else ""
            if db not in (":memory:", ""):
                _refuse("sqlite3.connect(%r)" % db)
        return
    if event in ("os.kill", "os.killpg") and args and args[0] in (os.getpid(), 0):
        return
    n = 2 if event in ("os.rename", "os.link", "os.symlink", "shutil.move", "shutil.copyfile", "shutil.copytree",
                       "subprocess.Popen") else 1
    shown = ", ".join(repr(_arg(a)) for a in list(args)[:n])
    _refuse("%s(%s)" % (event, shown))


def _path_like(f):
    return isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")


def _patch_native_writers():
    """Writers that open files in C (not seen by the audit hook): refuse path arguments."""
    def wrap(owner, name, label, argpos=0, kw="path"):
        orig = getattr(owner, name, None)
        if orig is None:
            return

        def guarded(*a, **k):
            target = a[argpos] if len(a) > argpos else k.get(kw)
            if _path_like(target):
                _refuse("%s(%r)" % (label, _arg(target)))
            return orig(*a, **k)

        try:
            setattr(owner, name, guarded)
        except BaseException:
            pass

    torch = sys.modules.get("torch")
    if torch is not None:
        wrap(torch, "save", "torch.save", 1, "f")
        jit = getattr(torch, "jit", None)
        if jit is not None:
            wrap(jit, "save", "torch.jit.save", 1, "f")
        onnx = sys.modules.get("torch.onnx")
        if onnx is not None:
            wrap(onnx, "export", "torch.onnx.export", 2, "f")
    pd = sys.modules.get("pandas")
    if pd is not None:
        for meth in ("to_parquet", "to_feather", "to_hdf", "to_orc"):
            wrap(pd.DataFrame, meth, "DataFrame." + meth, 1, "path")
        wrap(pd.Series, "to_hdf", "Series.to_hdf", 1, "path_or_buf")
    h5 = sys.modules.get("h5py")
    if h5 is not None:
        orig = h5.File

        class _File(orig):
            def __init__(self, name, mode="r", *a, **k):
                if mode not in ("r",) and _path_like(name):
                    _refuse("h5py.File(%r, %r)" % (_arg(name), mode))
                orig.__init__(self, name, mode, *a, **k)

        h5.File = _File
    cv2 = sys.modules.get("cv2")
    if cv2 is not None:
        wrap(cv2, "imwrite", "cv2.imwrite", 0, "filename")
        if hasattr(cv2, "VideoWriter"):
            def _vw(*a, **k):
                _refuse("cv2.VideoWriter")
            cv2.VideoWriter = _vw
    for modname, cls in (("keras", "Model"), ("tensorflow", "keras.Model")):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        owner = mod
        for part in cls.split("."):
            owner = getattr(owner, part, None)
            if owner is None:
                break
        if owner is not None:
            wrap(owner, "save", "Model.save", 1, "filepath")
            wrap(owner, "save_weights", "Model.save_weights", 1, "filepath")
    for modname, cls, meth in (("xgboost", "Booster", "save_model"), ("lightgbm", "Booster", "save_model")):
        mod = sys.modules.get(modname)
        owner = getattr(mod, cls, None) if mod is not None else None
        if owner is not None:
            wrap(owner, meth, "%s.%s" % (cls, meth), 1, "fname")


class _CappedText(io.StringIO):
    """stdout/stderr of the child: bounded so a print loop cannot eat memory."""

    def write(self, s):
        if self.tell() < _OUT_LIMIT * 4:
            return io.StringIO.write(self, s)
        return len(s)

    def isatty(self):
        return False


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


def _install_child_guards(sh, out, err):
    import signal

    sys.stdout = out
    sys.stderr = err
    sys.stdin = io.StringIO("")
    sys.dont_write_bytecode = True

    def _no_input(*a, **k):
        _refuse("input()")

    builtins.input = _no_input
    gp = sys.modules.get("getpass")
    if gp is not None:
        gp.getpass = _no_input
    if sh is not None:
        _guard_shell(sh)
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        try:
            plt.switch_backend("agg")
        except BaseException:
            pass
    _patch_native_writers()
    _devnull_without_syscall()
    plat = sys.modules.get("platform")
    if plat is not None and hasattr(plat, "_Processor"):
        # platform.uname().processor runs `uname -p` (pandas asks on import); on Linux it
        # reads "unknown", reported as ""
        try:
            plat._Processor.from_subprocess = staticmethod(lambda: "")
        except BaseException:
            pass
    # joblib probes named semaphores (a file in /dev/shm) when first imported; process
    # pools are refused in a shadow run anyway.
    os.environ["JOBLIB_MULTIPROCESSING"] = "0"
    sys.addaudithook(_audit)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except BaseException:
        pass


_displays = [0]


def _count_display(*a, **k):
    _displays[0] += 1


def _guard_shell(sh):
    """Output to buffers, never the kernel's sockets; magics and shell commands screened."""
    pub = getattr(sh, "display_pub", None)
    if pub is not None:
        # Instance attributes shadow the methods that would send display_data on IOPub.
        try:
            pub.publish = _count_display
            pub.clear_output = lambda *a, **k: None
        except BaseException:
            pass
    try:
        fmt = sh.display_formatter

        def _format(obj, include=None, exclude=None):
            return {"text/plain": "<%s>" % _short(type(obj))}, {}

        fmt.format = _format
    except BaseException:
        pass
    kernel = getattr(sh, "kernel", None)
    session = getattr(kernel, "session", None)
    if session is not None:
        try:
            session.send = lambda *a, **k: None
        except BaseException:
            pass
    sys.displayhook = lambda value: None

    def _system(cmd, *a, **k):
        _refuse("shell command !%s" % _arg(cmd))

    for name in ("system", "system_raw", "system_piped", "getoutput"):
        try:
            setattr(sh, name, _system)
        except BaseException:
            pass
    orig_line = sh.run_line_magic
    orig_cell = sh.run_cell_magic

    def run_line_magic(magic_name, line, _stack_depth=1):
        if magic_name in _LINE_MAGIC_NOOP:
            return None
        if magic_name in _LINE_MAGIC_ONCE:
            return _run_once(line, magic_name, sys._getframe(1))
        if magic_name in _LINE_MAGIC_RUN:
            return orig_line(magic_name, line, _stack_depth + 1)
        _refuse("%%%s magic" % magic_name)

    def run_cell_magic(magic_name, line, cell):
        _refuse("%%%%%s cell magic" % magic_name)

    def run_cell(*a, **k):
        _refuse("run_cell()")

    sh.run_line_magic = run_line_magic
    sh.run_cell_magic = run_cell_magic
    sh.run_cell = run_cell
    sh.magic = lambda *a, **k: _refuse("magic()")


def _run_once(line, magic, caller):
    """%time/%timeit/%prun STMT: run STMT once where the magic stood (same line number)."""
    import ast

    toks = line.split()
    i = 0
    while i < len(toks) and toks[i].startswith("-"):
        if toks[i] in ("-n", "-r", "-p", "-l", "-T", "-D", "-s") and i + 1 < len(toks):
            i += 1
        i += 1
    stmt = " ".join(toks[i:]) if i else line
    lineno = caller.f_lineno if caller.f_code.co_filename == CELL_FILENAME else 1
    tree = ast.parse(stmt, CELL_FILENAME, "exec")
    ast.increment_lineno(tree, lineno - 1)
    g, l = caller.f_globals, caller.f_locals
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        expr = ast.Expression(tree.body[0].value)
        val = eval(compile(expr, CELL_FILENAME, "eval"), g, l)
        return val if magic == "time" else None
    exec(compile(tree, CELL_FILENAME, "exec"), g, l)
    return None


# x86_64 syscall numbers the native-code backstop (seccomp) denies outright.
_SC_DENY = (
    85, 87, 263, 82, 264, 316, 83, 258, 84, 86, 265, 88, 266, 90, 91, 268, 92, 93, 94, 260, 76, 77,
    132, 235, 280, 261, 133, 259, 188, 189, 190, 197, 198, 199, 49, 46, 59, 322, 57, 58, 101,
    310, 311, 165, 166, 161, 155, 425, 426, 427, 304, 169, 167, 168, 175, 176, 313,
)  # creat unlink unlinkat rename renameat renameat2 mkdir mkdirat rmdir link linkat symlink
# symlinkat chmod fchmod fchmodat chown fchown lchown fchownat truncate ftruncate utime utimes
# utimensat futimesat mknod mknodat setxattr lsetxattr fsetxattr removexattr lremovexattr
# fremovexattr bind sendmsg execve execveat fork vfork ptrace process_vm_readv/writev
# mount umount2 chroot pivot_root io_uring_* open_by_handle_at reboot swapon swapoff
# init_module delete_module finit_module
_SC_OPEN = ((2, 1), (257, 2))  # open(path, flags), openat(dirfd, path, flags): deny write flags
_SC_KILL = (62, 200, 234)  # kill, tkill, tgkill: only this process
_SC_ENOSYS = (435, 437)  # clone3, openat2: glibc falls back to clone / callers to openat


def _seccomp_backstop():
    """Kill the child (SIGSYS) on file writes, deletes, renames, sockets and exec done by
    native code the audit hook cannot see (C++ writers, ctypes). Linux x86_64 only.

    Python-level side effects are refused earlier by the audit hook with a precise message;
    this filter is the last line for everything else. Returns whether it is installed.
    """
    import ctypes
    import platform

    if not sys.platform.startswith("linux") or platform.machine() != "x86_64":
        return False
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    allow, kill, errno_ = 0x7FFF0000, 0x80000000, 0x00050000
    arg = lambda i, high=False: 16 + 8 * i + (4 if high else 0)  # noqa: E731
    pid = os.getpid()
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, 0xC000003E), (ret, 0, 0, allow), (ld, 0, 0, 0)]
    for nr in _SC_DENY:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, kill)]
    for nr in _SC_ENOSYS:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, errno_ | 38)]
    for nr, i in _SC_OPEN:
        prog += [(jeq, 0, 4, nr), (ld, 0, 0, arg(i)), (jset, 0, 1, _WRITE_FLAGS), (ret, 0, 0, kill), (ret, 0, 0, allow)]
    for nr in _SC_KILL:
        prog += [(jeq, 0, 5, nr), (ld, 0, 0, arg(0)), (jeq, 2, 0, pid), (jeq, 1, 0, 0), (ret, 0, 0, kill),
                 (ret, 0, 0, allow)]
    # connect (42): an IPv4/IPv6 address (addrlen 16 or 28) kills; anything else (AF_UNIX:
    # glibc's nscd lookups when a library asks for a user name) just fails with EACCES
    prog += [(jeq, 0, 5, 42), (ld, 0, 0, arg(2)), (jeq, 2, 0, 16), (jeq, 1, 0, 28), (ret, 0, 0, errno_ | 13),
             (ret, 0, 0, kill)]
    # clone (56): threads only
    prog += [(jeq, 0, 4, 56), (ld, 0, 0, arg(0)), (jset, 1, 0, 0x10000), (ret, 0, 0, kill), (ret, 0, 0, allow)]
    # sendto (44): only without a destination address (connected sockets: connect is denied)
    prog += [(jeq, 0, 6, 44), (ld, 0, 0, arg(4)), (jeq, 0, 2, 0), (ld, 0, 0, arg(4, True)), (jeq, 1, 0, 0),
             (ret, 0, 0, kill), (ret, 0, 0, allow)]
    prog.append((ret, 0, 0, allow))

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    arr = (Filter * len(prog))(*[Filter(*x) for x in prog])
    fprog = Prog(len(prog), ctypes.cast(arr, ctypes.POINTER(Filter)))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    return libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0  # PR_SET_SECCOMP, FILTER


_null_fd = [None]


def _is_devnull(p):
    try:
        if not (isinstance(p, (str, bytes)) or hasattr(p, "__fspath__")):
            return False
        return os.fspath(p) in (os.devnull, "/dev/null", b"/dev/null")
    except BaseException:
        return False


def _devnull_without_syscall():
    """open(os.devnull, "w") (libraries silencing output, subprocess plumbing) must not reach
    the seccomp filter, which cannot see paths: hand out duplicates of a descriptor opened
    before the filter."""
    _null_fd[0] = os.open(os.devnull, os.O_RDWR)
    orig_os_open, orig_io_open = os.open, io.open

    def os_open(path, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is None and _is_devnull(path):
            return os.dup(_null_fd[0])
        return orig_os_open(path, flags, mode, dir_fd=dir_fd)

    def io_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
        if opener is None and _is_devnull(file):
            file, closefd = os.dup(_null_fd[0]), True
        return orig_io_open(file, mode, buffering, encoding, errors, newline, closefd, opener)

    os.open = os_open
    io.open = io_open
    builtins.open = io_open


def _limits(timeout, max_memory):
    import resource
    import signal

    vsize, _ = _statm()
    if vsize is not None and max_memory > 0:
        cap = vsize + max_memory
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except BaseException:
            pass
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        used = resource.getrusage(resource.RUSAGE_SELF)
        base = int(used.ru_utime + used.ru_stime)
        resource.setrlimit(resource.RLIMIT_CPU, (base + int(timeout) + 2, base + int(timeout) + 4))
    except BaseException:
        pass
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(int(timeout) + 3)
    except BaseException:
        pass


def _is_memory_error(e):
    if isinstance(e, MemoryError):
        return True
    try:
        msg = str(e)
    except BaseException:
        return False
    return type(e).__name__ == "RuntimeError" and ("can't allocate memory" in msg or "not enough memory" in msg
                                                  or "std::bad_alloc" in msg)


def _frames(tb, code, lmap):
    frames = []
    started = False
    line = 0
    while tb is not None:
        f = tb.tb_frame
        fn = f.f_code.co_filename
        in_cell = fn == CELL_FILENAME
        if in_cell:
            started = True
        if started and fn != "<premortem-inspector>":
            ln = tb.tb_lineno
            if in_cell:
                ln = _map(lmap, ln)
                line = ln
                text = _orig_line(code, ln)
            else:
                try:
                    text = _linecache.getline(fn, ln).strip()[:300]
                except BaseException:
                    text = ""
            fr = {"file": fn, "line": int(ln or 0), "func": f.f_code.co_name if not (in_cell and f.f_code.co_name == "<module>") else "<cell>",
                  "in_cell": in_cell}
            if text:
                fr["text"] = text
            frames.append(fr)
        tb = tb.tb_next
    if len(frames) > 30:
        frames = frames[:5] + frames[-25:]
    return frames, line


def _child_main(wfd, code, cell_code, lmap, timeout, trace, max_memory, rstate, old_mask, is_async, sh):
    import signal

    t0 = time.perf_counter()
    # A collection would write to every tracked object's header, copying the whole heap
    # page by page (copy-on-write); the child is short-lived and memory-capped.
    import gc

    gc.disable()
    parent = os.getppid()
    try:
        os.setsid()
    except BaseException:
        pass
    if sys.platform.startswith("linux"):
        try:  # die with the kernel (a restart must not leave a looping child behind)
            import ctypes

            ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
            if os.getppid() != parent:
                os._exit(0)
        except BaseException:
            pass
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    except BaseException:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
    except BaseException:
        pass
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except BaseException:
        pass
    phases = {"setup": time.perf_counter()}
    _limits(timeout, max_memory)
    phases["limits"] = time.perf_counter()
    if rstate is not None:
        try:
            sys.modules["random"].setstate(rstate)  # fork re-seeds random in the child
        except BaseException:
            pass
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.get_num_threads() > 1:
                torch.set_num_threads(1)  # OpenMP pools do not survive fork
        except BaseException:
            pass
    out, err = _CappedText(), _CappedText()
    res = {"status": "ok"}
    tracer = None
    try:
        phases["rng"] = time.perf_counter()
        _install_child_guards(sh, out, err)
        phases["guards"] = time.perf_counter()
        ns = sh.user_ns if sh is not None else _user_ns()
        try:
            res["sandbox"] = "seccomp" if _seccomp_backstop() else "audit"
        except BaseException:
            res["sandbox"] = "audit"
        if trace:
            tracer = _Tracer(cell_code, lmap)
            sys.settrace(tracer.global_trace)
        try:
            if is_async:
                import asyncio

                try:
                    asyncio.events._set_running_loop(None)
                except BaseException:
                    pass
                coro = eval(cell_code, ns)
                if coro is not None:
                    loop = asyncio.new_event_loop()
                    loop.run_until_complete(coro)
            else:
                exec(cell_code, ns)
        finally:
            sys.settrace(None)
    except ShadowRefusal:
        pass
    except BaseException as e:
        if _is_memory_error(e):
            res = {"status": "died", "reason": "the cell needed more memory than the shadow run allows (%d MiB extra); outcome unknown"
                   % (max_memory >> 20)}
        else:
            frames, line = _frames(e.__traceback__, code, lmap)
            try:
                msg = str(e)
            except BaseException:
                msg = "<str() of the exception failed>"
            res = {"status": "error", "exception": type(e).__name__, "message": msg[:2000], "line": line,
                   "frames": frames}
    if _refusals:
        res = {"status": "refused", "refused": _refusals[0],
               "reason": "the cell tried a side effect a shadow run does not allow (%s); outcome unknown" % _refusals[0]}
    if tracer is not None:
        res["trace"] = tracer.states
        if tracer.truncated:
            res["trace_truncated"] = True
    for key, buf in (("stdout", out), ("stderr", err)):
        s = buf.getvalue()
        if s:
            res[key] = s if len(s) <= _OUT_LIMIT else s[:_OUT_LIMIT] + "\n...[truncated]"
    phases["run"] = time.perf_counter()
    res["elapsed_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
    prev = t0
    for k in list(phases):
        phases[k], prev = round((phases[k] - prev) * 1000.0, 3), phases[k]
    res["child_phases_ms"] = phases
    try:
        data = json.dumps(res, separators=(",", ":"), allow_nan=False, default=str).encode()
    except BaseException:
        data = json.dumps(_sanitize(res), default=str).encode()
    view = memoryview(data)
    while view:
        n = os.write(wfd, view)
        view = view[n:]
    os._exit(0)


# A re-injected module replaces this one: stop the old one's children so none is orphaned.
_previous = sys.modules.get(__name__)
if _previous is not None and _previous is not sys.modules.get("__main__"):
    _old_kill = getattr(_previous, "_kill_running", None)
    if callable(_old_kill):
        try:
            _old_kill("cancelled: the inspector was re-injected")
        except BaseException:
            pass
del _previous
