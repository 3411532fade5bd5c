# ---------------------------------------------------------------------------------------------
# Fast dev run of the library's work: one table, one entry per library call
#
# A cell's time often goes into library calls (a grid search, 2,000 boosting rounds, a
# solver on a million rows) while the crash after them depends only on the structure of what
# they produce: the features a model was fitted with, its classes, the output's shape and
# dtype. In the capped child only, the calls listed in _DL_TABLE are patched at the
# class/function level so that they do less work of the same structure: one candidate of a
# search and cv=2, few estimators or boosting rounds, a few solver iterations, 2 folds.
# Rows are never subsampled. The estimator's own parameters are put back after each fit
# (model.n_estimators still says 500; len(model.estimators_) is 3). An exception raised
# inside a shortened call counts only if the call, run again unshortened, raises it too.
# test_devlib.py checks, entry by entry, that the shortened result has the full one's
# structure; docs/fast-dev-run.md lists the table.

# kind "params": fit(self, ...) runs with these parameters lowered (only ever lowered, never
# raised); "skip" names parameters whose truthy value keeps the entry off (warm_start grows
# an existing ensemble; oob_score needs every sample out of bag somewhere).
_DL_FEW = 3
_DL_TABLE = [
    # search spaces
    {"mod": "sklearn.model_selection", "name": "GridSearchCV", "kind": "search"},
    {"mod": "sklearn.model_selection", "name": "RandomizedSearchCV", "kind": "search"},
    # cross validation
    {"mod": "sklearn.model_selection", "name": "cross_val_score", "kind": "cv"},
    {"mod": "sklearn.model_selection", "name": "cross_validate", "kind": "cv"},
    {"mod": "sklearn.model_selection", "name": "cross_val_predict", "kind": "cv"},
    # ensembles and boosting
    {"mod": "sklearn.ensemble", "name": "RandomForestClassifier", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "RandomForestRegressor", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "ExtraTreesClassifier", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "ExtraTreesRegressor", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "GradientBoostingClassifier", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.ensemble", "name": "GradientBoostingRegressor", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.ensemble", "name": "HistGradientBoostingClassifier", "kind": "params", "set": {"max_iter": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.ensemble", "name": "HistGradientBoostingRegressor", "kind": "params", "set": {"max_iter": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.ensemble", "name": "AdaBoostClassifier", "kind": "params", "set": {"n_estimators": 3}},
    {"mod": "sklearn.ensemble", "name": "AdaBoostRegressor", "kind": "params", "set": {"n_estimators": 3}},
    {"mod": "sklearn.ensemble", "name": "BaggingClassifier", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "BaggingRegressor", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start", "oob_score")},
    {"mod": "sklearn.ensemble", "name": "IsolationForest", "kind": "params", "set": {"n_estimators": 3},
     "skip": ("warm_start",)},
    # iterative solvers
    {"mod": "sklearn.linear_model", "name": "LogisticRegression", "kind": "params", "set": {"max_iter": 5},
     "skip": ("warm_start",)},
    {"mod": "sklearn.linear_model", "name": "SGDClassifier", "kind": "params", "set": {"max_iter": 5},
     "skip": ("warm_start",)},
    {"mod": "sklearn.linear_model", "name": "SGDRegressor", "kind": "params", "set": {"max_iter": 5},
     "skip": ("warm_start",)},
    {"mod": "sklearn.linear_model", "name": "Perceptron", "kind": "params", "set": {"max_iter": 5},
     "skip": ("warm_start",)},
    {"mod": "sklearn.neural_network", "name": "MLPClassifier", "kind": "params", "set": {"max_iter": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.neural_network", "name": "MLPRegressor", "kind": "params", "set": {"max_iter": 3},
     "skip": ("warm_start",)},
    {"mod": "sklearn.svm", "name": "LinearSVC", "kind": "params", "set": {"max_iter": 50}},
    {"mod": "sklearn.cluster", "name": "KMeans", "kind": "params", "set": {"max_iter": 3, "n_init": 1}},
    # xgboost: boosting rounds
    {"mod": "xgboost", "name": "XGBClassifier", "kind": "params", "set": {"n_estimators": 3}},
    {"mod": "xgboost", "name": "XGBRegressor", "kind": "params", "set": {"n_estimators": 3}},
    {"mod": "xgboost", "name": "train", "kind": "rounds", "arg": "num_boost_round", "pos": 2, "few": 3},
]

# Calls whose presence in a cell makes a capped child worth forking even without a loop.
_DL_CALLS = frozenset(["fit", "fit_transform", "fit_predict", "cross_val_score", "cross_validate", "cross_val_predict",
                       "train"])

_DL = {"on": False, "records": {}, "crashed_in": None, "depth": 0, "patched": set(), "orig": {}, "unsure": []}


def _dl_note(key):
    _DL["records"][key] = _DL["records"].get(key, 0) + 1


def _dl_unsure(why):
    """Notes that a clean run with this shortening does not stand for the full run: the full
    work has chances to fail that the shortened one skipped (other candidates that raise,
    warnings raised as errors, loops over what the work produced)."""
    if why not in _DL["unsure"] and len(_DL["unsure"]) < 6:
        _DL["unsure"].append(why)


def _dl_warnings_raise():
    """Whether a warning a fit may emit (ConvergenceWarning, FitFailedWarning, a fold's
    UserWarning) is raised as an error: the shortened run hides or skips those warnings."""
    import warnings

    for f in warnings.filters:
        try:
            if f[0] != "error":
                continue
            if issubclass(UserWarning, f[2]) or f[2].__name__ in ("ConvergenceWarning", "FitFailedWarning",
                                                                  "UndefinedMetricWarning"):
                return True
        except BaseException:
            continue
    return False


def _dl_records():
    """What was shortened, one line per call site kind ("GridSearchCV.fit: 1 of 24
    candidates, cv=2 (2 calls)")."""
    out = []
    for k, n in _DL["records"].items():
        out.append(k if n == 1 else "%s (%d calls)" % (k, n))
    return out[:12]


def _dl_guarded(desc, short, full):
    """Runs short(); an exception inside it counts only if full() raises it too (then the
    full call's exception propagates). desc is what was shortened."""
    _DL["depth"] += 1
    if _DL["depth"] == 1 and _dl_warnings_raise():
        _dl_unsure("warnings are raised as errors, and the shortened work does not emit the full work's warnings")
    try:
        try:
            return short()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            first = type(e).__name__
        # Unshortened, inside the same run: a structural error (strings in X, a feature
        # count) raises again at once; a shortening's error does not, and the work goes on.
        _DL["crashed_in"] = None
        try:
            return full()
        except BaseException as e2:
            if type(e2).__name__ != first:
                _DL["crashed_in"] = "%s raised %s when shortened and %s in full" % (desc, first, type(e2).__name__)
            raise
    finally:
        _DL["depth"] -= 1


def _dl_quiet():
    """A context that hides ConvergenceWarning: a solver stopped after a few iterations warns
    where the full run may not."""
    import warnings

    cm = warnings.catch_warnings()
    cm.__enter__()
    try:
        from sklearn.exceptions import ConvergenceWarning

        warnings.simplefilter("ignore", ConvergenceWarning)
    except BaseException:
        pass
    return cm


def _dl_wrap_params(cls, entry):
    orig = cls.__dict__.get("fit") or getattr(cls, "fit")
    lower = entry["set"]
    skip = entry.get("skip", ())
    name = cls.__name__

    def fit(self, *args, **kwargs):
        if not _DL["on"]:
            return orig(self, *args, **kwargs)
        try:
            for s in skip:
                if getattr(self, s, False):
                    return orig(self, *args, **kwargs)
            saved, changed = {}, []
            for p, v in lower.items():
                cur = getattr(self, p, None)
                if isinstance(cur, bool) or not isinstance(cur, int) or cur <= v:
                    continue
                saved[p] = cur
                changed.append("%s %d -> %d" % (p, cur, v))
        except BaseException:
            return orig(self, *args, **kwargs)
        if not saved:
            return orig(self, *args, **kwargs)

        def short():
            for p in saved:
                setattr(self, p, lower[p])
            cm = _dl_quiet()
            try:
                return orig(self, *args, **kwargs)
            finally:
                cm.__exit__(None, None, None)
                for p, v in saved.items():
                    setattr(self, p, v)  # the user's object keeps its parameters

        if _DL["depth"] == 0:
            _dl_note("%s.fit: %s" % (name, ", ".join(changed)))
        return _dl_guarded(name + ".fit", short, lambda: orig(self, *args, **kwargs))

    fit.__wrapped__ = orig
    fit.__name__ = getattr(orig, "__name__", "fit")
    fit.__doc__ = getattr(orig, "__doc__", None)
    cls.fit = fit


def _dl_cv_short(cv):
    """2 folds for an int or default cv (5); other splitters are kept."""
    if cv is None:
        return 2, "cv 5 -> 2"
    if isinstance(cv, int) and not isinstance(cv, bool) and cv > 2:
        return 2, "cv %d -> 2" % cv
    return cv, ""


def _dl_wrap_search(cls, entry):
    orig = cls.__dict__.get("fit") or getattr(cls, "fit")
    name = cls.__name__

    def fit(self, *args, **kwargs):
        if not _DL["on"]:
            return orig(self, *args, **kwargs)
        saved, what = {}, []
        try:
            if hasattr(self, "param_grid"):
                from sklearn.model_selection import ParameterGrid

                grid = ParameterGrid(self.param_grid)
                n = len(grid)
                if n > 1:
                    saved["param_grid"] = self.param_grid
                    first = {k: [v] for k, v in grid[0].items()}
                    what.append("1 of %d candidates" % n)
            elif hasattr(self, "n_iter") and isinstance(self.n_iter, int) and self.n_iter > 1:
                saved["n_iter"] = self.n_iter
                what.append("1 of %d candidates" % self.n_iter)
            cv, how = _dl_cv_short(getattr(self, "cv", None))
            if how and not _dl_full_splits_ok(self.cv, getattr(self, "estimator", None), args, kwargs):
                saved = {}  # the full run's folds fail: unshortened, it raises at once
            elif how:
                saved["cv"] = self.cv
                what.append(how)
        except BaseException:
            return orig(self, *args, **kwargs)
        if not saved:
            return orig(self, *args, **kwargs)
        if ("param_grid" in saved or "n_iter" in saved) and getattr(self, "error_score", None) == "raise":
            _dl_unsure("%s has error_score='raise' and the candidates it skipped were never fitted" % name)

        def short():
            if "param_grid" in saved:
                self.param_grid = first
            if "n_iter" in saved:
                self.n_iter = 1
            if "cv" in saved:
                self.cv = 2
            try:
                return orig(self, *args, **kwargs)
            finally:
                for p, v in saved.items():
                    setattr(self, p, v)

        if _DL["depth"] == 0:
            _dl_note("%s.fit: %s" % (name, ", ".join(what)))
        return _dl_guarded(name + ".fit", short, lambda: orig(self, *args, **kwargs))

    fit.__wrapped__ = orig
    fit.__name__ = "fit"
    cls.fit = fit


def _dl_wrap_func(fn, entry):
    name = getattr(fn, "__name__", entry["name"])

    def wrapper(*args, **kwargs):
        if not _DL["on"]:
            return fn(*args, **kwargs)
        kw = dict(kwargs)
        a0 = args
        how = ""
        try:
            if entry["kind"] == "cv":
                kw["cv"], how = _dl_cv_short(kwargs.get("cv"))
                if how and not _dl_full_splits_ok(kwargs.get("cv"), args[0] if args else kwargs.get("estimator"),
                                                  args[1:], kwargs):
                    how = ""  # the full run's folds fail: it raises at once
            else:  # rounds
                arg, pos, few = entry["arg"], entry["pos"], entry["few"]
                a = list(args)
                cur = kwargs.get(arg, a[pos] if len(a) > pos else None)
                if isinstance(cur, int) and not isinstance(cur, bool) and cur > few:
                    how = "%s %d -> %d" % (arg, cur, few)
                    if len(a) > pos:
                        a[pos] = few
                        args = tuple(a)
                    else:
                        kw[arg] = few
        except BaseException:
            how = ""
        if not how:
            return fn(*args, **kwargs)
        if _DL["depth"] == 0:
            _dl_note("%s: %s" % (name, how))
        folds = kwargs.get("cv") or 5

        def short():
            r = fn(*args, **kw)
            if entry["kind"] == "cv" and entry["name"] != "cross_val_predict":
                r = _dl_pad_folds(r, folds)  # per-fold results keep the full run's length
            return r

        return _dl_guarded(name, short, lambda: fn(*a0, **kwargs))

    wrapper.__wrapped__ = fn
    wrapper.__name__ = name
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    return wrapper


def _dl_full_splits_ok(cv, est, args, kwargs):
    """Whether the full run's folds can be made (the split only, no fit: a few index arrays).
    A cv of 5 on 3 samples, or on groups it cannot split, raises in the full run; the
    shortened run's 2 folds would not."""
    try:
        from sklearn.base import is_classifier
        from sklearn.model_selection import check_cv

        X = args[0] if len(args) > 0 else kwargs.get("X")
        y = args[1] if len(args) > 1 else kwargs.get("y")
        groups = kwargs.get("groups")
        if X is None:
            return True
        splitter = check_cv(5 if cv is None else cv, y, classifier=is_classifier(est))
        for _ in splitter.split(X, y, groups):
            pass
        return True
    except BaseException:
        return False


def _dl_pad_folds(r, folds):
    """Per-fold scores of 2 folds repeated to the full run's number of folds (same shape and
    dtype as the full run's; the values are the 2 folds')."""
    import numpy

    def pad(a):
        if isinstance(a, numpy.ndarray) and a.ndim >= 1 and a.shape[0] == 2:
            return numpy.resize(a, (folds,) + a.shape[1:])
        if isinstance(a, list) and len(a) == 2:
            return [a[i % 2] for i in range(folds)]
        return a

    if isinstance(r, dict):
        return {k: pad(v) for k, v in r.items()}
    return pad(r)


def _dl_patch_module(modname, ns):
    """Patches the table's entries of modname (already imported) once."""
    mod = sys.modules.get(modname)
    if mod is None:
        return
    for entry in _DL_TABLE:
        key = (entry["mod"], entry["name"])
        if entry["mod"] != modname or key in _DL["patched"]:
            continue
        obj = getattr(mod, entry["name"], None)
        if obj is None:
            continue
        _DL["patched"].add(key)
        try:
            if entry["kind"] == "params":
                _dl_wrap_params(obj, entry)
            elif entry["kind"] == "search":
                _dl_wrap_search(obj, entry)
            else:
                w = _dl_wrap_func(obj, entry)
                _DL["orig"][id(obj)] = (obj, w)
                setattr(mod, entry["name"], w)
                home = sys.modules.get(getattr(obj, "__module__", "") or "")
                if home is not None and getattr(home, entry["name"], None) is obj:
                    setattr(home, entry["name"], w)  # cross_val_score calls cross_validate there
        except BaseException:
            continue
    # functions the user's namespace holds (from sklearn.model_selection import cross_val_score)
    if ns is not None and _DL["orig"]:
        try:
            for k, v in list(ns.items()):
                pair = _DL["orig"].get(id(v))
                if pair is not None and pair[0] is v:
                    ns[k] = pair[1]
        except BaseException:
            pass


def _dl_begin(ns):
    """In the capped child only: shorten the table's library calls from here on."""
    _DL.update(on=True, records={}, crashed_in=None, depth=0, unsure=[])
    mods = sorted(set(e["mod"] for e in _DL_TABLE))
    for m in mods:
        _dl_patch_module(m, ns)
    pending = [m for m in mods if m not in sys.modules]
    if not pending:
        return
    import builtins

    real = builtins.__import__

    def _import(name, *a, **kw):
        mod = real(name, *a, **kw)
        try:
            if pending and (name.split(".")[0] in ("sklearn", "xgboost")):
                for m in list(pending):
                    if m in sys.modules:
                        pending.remove(m)
                        _dl_patch_module(m, ns)
                        # from sklearn.model_selection import cross_val_score binds after
                        # this returns: hand back the patched attribute through the module
        except BaseException:
            pass
        return mod

    builtins.__import__ = _import


def _dl_cell_calls(calls):
    """Whether a cell's calls may reach the table (worth a capped child without a loop)."""
    return bool(_DL_CALLS.intersection(calls))
