"""premortem's runtime inspector and shadow runner.

The module is kept in parts, joined in file-name order into one module (embed.go). The
parts are layers: a part uses only names the parts before it (or itself) define, even in
function bodies, so each can be read knowing only what precedes it
(TestPartsAreLayers checks it). 00_common (JSON plumbing, deadlines, RNG guard, _err),
10_resolve (name resolution), 11_describe and 12_describe_libs (facts per value kind),
13_dispatch (_describe: which of those a value gets), 14_inspect (inspect, whoami),
20_cell (the cell as both sides of a shadow run see it: limits, magics, transform, line
map), 22_devsize, 23_devlib and 25_devrun (the fast dev run), 26_refuse (refusals),
29_seccomp (the fallback's syscall allow-list), 31_sandbox (the child's namespace
sandbox), 32_contain (containment of inherited state, the outcomes the sandbox explains),
33_fallback (the fallback's additions, the scratch cap, the sandbox probe), 33_view (the
fallback's private view of written files), 33_writers (the view for libraries that open
paths in C: sqlite3, PyTables, h5py, cv2, openpyxl), 34_crashkeys (the keys a failing
line's objects hold), 35_crashfacts (facts of what the failing line reads), 36_meta (meta tensors), 40_enter
(entering a sandbox), 41_native (native writers, /dev/null), 42_guards (the child's
guards and audit hook), 43_tracer (the line tracer), 45_child (the child's main),
50_shadow (the shadow runner, kernel side: fork, reap, results), 90_reinject (stopping an
older copy's children). VERSION is a hash of the joined source.

premortem injects this source into the user's Jupyter kernel as the private module
``_premortem_inspector`` (exec'd in a fresh types.ModuleType registered in sys.modules, never
in the user's namespace) and calls it through ``user_expressions`` of silent executes with
empty code. Every call returns an object whose repr and IPython pretty repr are raw JSON, so
the text/plain of the user expression is the JSON of a Go facts type:

``inspect(names, budget_ms=50, values=True, namespace=False)`` -> facts.Inspection
    Facts for names and dotted attribute chains ("df", "df.Age", "model.predict"), resolved
    in get_ipython().user_ns then builtins. Attributes are decided from the type
    (inspect.getattr_static, __slots__, torch modules' and pandas frames' registries); only
    descriptors and properties of the known containers (numpy, pandas, torch, stdlib; and
    scikit-learn's on an estimator made only of scikit-learn parts) are evaluated. A class's
    own __getattr__/__getattribute__, a lazy module's unloaded attribute, a user property or a
    costly pandas attribute (df.values, df.T) gives exists=true with an "error" ("cannot
    tell" / "not evaluated"; so exists=true there means "may exist"), and "dynamic": true on
    the object. repr() is called only on builtin and numpy scalars; len() only on builtin
    containers; no Dataset's __len__ or __getitem__ runs (a TensorDataset is read from its
    tensors, a DataLoader's length from its dataset's and batch size).
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
``shadow(code, timeout_s=3.0, trace=False, max_memory=0, sandbox="auto", full_timeout_s=0, devrun_cap=0)`` -> facts.ShadowResult
    Forks the kernel and runs the cell in the child; returns at once (status "running",
    token, fork_ms = kernel busy time of this call) or a final result (skipped; a SyntaxError
    found without forking; a refused/display-only cell magic). One run group per kernel: a
    new run kills the previous group. With devrun_cap > 0 and loops in the cell, the group
    is two children, the full run (limit max(timeout_s, full_timeout_s)) and a fast dev run
    with every loop capped (25_devrun.py; its token is devrun_token). A daemon thread reaps the child and keeps the result.
``shadow_result(token)`` / ``shadow_cancel(token)`` -> facts.ShadowResult
``shadow_children()`` -> pids of running children (tests).

Child containment: new session; fds 0-2 on /dev/null; stdout/stderr to bounded buffers;
display publisher, display formatter, displayhook and the kernel session's send neutralized;
input()/getpass refused; non-whitelisted magics refused; matplotlib on Agg; GC off
(copy-on-write); oom_score_adj 1000; RLIMIT_AS = current size + max_memory (default 2 GiB),
CPU limit and alarm past the timeout; joblib (so scikit-learn) runs with n_jobs=1. Then one
of two sandboxes (31_sandbox; ShadowResult.sandbox and sandbox_reason say which and why):
- "namespaces" (shadow(..., sandbox="auto") where unshare is allowed): the child enters new
  user (uid/gid mapped to themselves), mount, network and PID namespaces; every writable
  mount is seen through an overlay whose upper layer is a throwaway tmpfs (pseudo
  filesystems and /dev bind-mounted, /dev/shm overlaid); the cell runs in a grandchild that
  is pid 1 of the PID namespace with a fresh /proc, so subprocesses, joblib/DataLoader
  workers and `!cmd` run inside and die with it, and no other process is visible. Writes,
  deletes, renames, caches and checkpoints happen inside and vanish; the network namespace
  is empty (loopback up): a network failure is status "refused", "the cell needs the
  network". No write/socket/process refusals are installed.
- "fallback" (unshare failed: the reason says why; or sandbox="fallback"): an audit hook
  refusing file writes/deletes/renames/mkdir/chmod, sockets, subprocesses, exec, fork and
  calls aimed at other processes; path-taking native writers (torch.save,
  DataFrame.to_parquet/to_hdf/..., h5py, cv2, keras, xgboost) refused; shell commands
  refused; DataLoader num_workers=0; first-import caches (MPLCONFIGDIR when matplotlib has
  none yet, TMPDIR/tempfile, NUMBA_CACHE_DIR) in a scratch directory the child creates and
  the parent removes; and a seccomp allow-list (29_seccomp.py, Linux x86_64; elsewhere the
  fallback refuses to run: status "refused") for native code: calls outside it (writes
  outside the scratch descriptor, namespaces, mounts, hostname, netlink/inet sockets,
  TIOCSTI/TCSETS ioctls, SysV IPC, keys, acct, other processes...) return EPERM and make
  the status "refused", naming the call.
In both, what the kernel had open before the fork is contained before the cell runs:
descriptors open for writing point to private copies (memfd, same offset and flags; large
files reopened read-only, a write then a refusal) or to /dev/null (sockets, pipes, ZMQ,
eventfds), read descriptors get their own offset, and writable MAP_SHARED mappings
(np.memmap r+, mmap'd files, multiprocessing/torch shared memory) become private copies.
Any refusal makes the status "refused" even if the cell caught the exception. MemoryError
(the cap) -> "died".
``sandbox_probe(sandbox="auto")`` -> {"sandbox", "sandbox_reason"}: which sandbox a shadow
run gets in this kernel (forks once to try, cached per kernel process).

Nothing here may raise into the user's session, import a library the user has not imported,
iterate user iterators, draw random numbers, or leave names, history, outputs, execution count
or RNG states changed.
"""

VERSION = "@VERSION@"  # replaced by a hash of the source when embedded (embed.go)

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


def _src_lines(code):
    """The cell's lines as Python numbers them in a traceback: a line ends at "\n",
    "\r\n" or a lone "\r" (str.splitlines would also split at form feeds and other
    characters the tokenizer does not end a line at)."""
    return code.replace("\r\n", "\n").replace("\r", "\n").split("\n")

# Roots of modules whose code inspection may run to read a value: the known containers
# (numpy, pandas, torch, the builtins) and the standard library's plain types. Their
# properties, descriptors and C-level sizes are cheap and side-effect free; nothing of any
# other library (statsmodels, scikit-learn, ...) or of the user runs, except scikit-learn's
# own code on an estimator made only of scikit-learn parts (_sklearn_only).
_TRUSTED_ROOTS = frozenset(
    [
        "builtins", "pandas", "numpy", "torch", "collections", "functools", "typing", "abc",
        "enum", "datetime", "pathlib", "re", "io", "os", "posixpath", "numbers", "decimal",
        "fractions", "types",
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
        for k in type.__getattribute__(tp, "__mro__"):
            d = type.__getattribute__(k, "__dict__")
            if name in d:
                return d[name]
    except BaseException:
        pass
    return None


def _idict(obj):
    """The instance __dict__ of obj, or {} (no user code runs: a class that defines its own
    __dict__ attribute, a property say, is not asked)."""
    try:
        slot = None
        for k in type.__getattribute__(type(obj), "__mro__"):
            kd = type.__getattribute__(k, "__dict__")
            if "__dict__" in kd:
                slot = kd["__dict__"]
                break
        if type(slot) not in (types.GetSetDescriptorType, types.MemberDescriptorType):
            return {}
        d = object.__getattribute__(obj, "__dict__")
    except BaseException:
        return {}
    return d if type(d) is dict else {}


def _isa(obj, cls):
    """isinstance(obj, cls) by the object's real type: isinstance would read obj.__class__,
    which runs a class's own __getattribute__ or a __class__ property."""
    try:
        return issubclass(type(obj), cls)
    except BaseException:
        return False


def _static_get(obj, name, default=None):
    """obj.name when it is a module's or a class's plain entry (nothing loaded, nothing run)."""
    if _isa(obj, types.ModuleType):
        return _idict(obj).get(name, default)
    v = getattr_static_safe(obj, name, default)
    if v is default or _lookup(type(v), "__get__") is None or isinstance(v, type):
        return v
    return default


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
    if np is not None and _isa(v, np.generic):
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
    if v is None or t in (bool, int, float, complex, str, bytes) or (np is not None and _isa(v, np.generic)):
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


def _err(e):
    if isinstance(e, _UserCodeTimeout):
        return str(e)
    try:
        msg = str(e) if type(e).__module__ in ("builtins",) or _trusted(type(e)) else ""
    except BaseException:
        msg = ""
    return ("%s: %s" % (type(e).__name__, msg[:200])) if msg else type(e).__name__
