# ---------------------------------------------------------------------------------------------
# Shadow runs: meta tensors, the child's run (facts.ShadowResult.Meta)
#
# The child's side of a meta run, around the stand-ins of 36_meta.py: before the cell,
# _meta_begin puts the CUDA guard in place and replaces the unreadable tensors the cell can
# reach (_MetaWalk: the namespace, containers, objects' attributes, user functions' closures
# and defaults, user classes' attributes); on the cell's exception _meta_crash decides whether
# the crash hangs on values the run made up (the crash line reads a placeholder, the failing
# operation took one, or the line lies under a branch a placeholder decided); at the end
# _meta_report says what the run was (45_child.py calls all three).

class _MetaWalk(object):
    """Replaces the unreadable tensors reachable from the namespace, in place where the
    container allows it; the same tensor always becomes the same wrapper (optimizer state
    and param_groups keep pointing at the module's parameters)."""

    def __init__(self, torch, cls, every):
        self.torch, self.cls, self.every = torch, cls, every
        self.memo = {}  # id(tensor) -> replacement
        self.seen = set()
        self.keep = []  # keeps walked objects alive so ids stay unique
        self.count = 0
        self.devices = []
        self.deadline = time.monotonic() + _META_BUDGET_S
        self.truncated = False
        import types as _types

        self.FunctionType, self.MethodType = _types.FunctionType, _types.MethodType
        self.skip = (type, _types.ModuleType, _types.FunctionType, _types.BuiltinFunctionType, _types.MethodType,
                     str, bytes, int, float, complex, bool, type(None), range)

    def unreadable(self, t):
        if self.every:
            return t.device.type != "meta"
        return t.device.type not in ("cpu", "meta")

    def tensor(self, t):
        torch = self.torch
        r = self.memo.get(id(t))
        if r is not None:
            return r
        if isinstance(t, self.cls) or not self.unreadable(t) or t.layout != torch.strided or t.is_quantized:
            return t
        m = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")
        dev = t.device
        new = self.cls(m, dev, t.requires_grad)
        if isinstance(t, torch.nn.Parameter):
            new = torch.nn.Parameter(new, t.requires_grad)
        if t.is_leaf and t.grad is not None and isinstance(t.grad, torch.Tensor):
            try:
                new.grad = self.tensor(t.grad)
            except BaseException:
                pass
        self.memo[id(t)] = new
        self.keep.append(t)
        self.count += 1
        if str(dev) not in self.devices:
            self.devices.append(str(dev))
        return new

    def code_object(self, v, depth):
        """The tensors a user's function or class holds: a closure's cells, default
        arguments, class attributes (a model held by a training function's closure or a
        class-level constant). Library code is left alone: its tensors are not the cell's."""
        if id(v) in self.seen or len(self.seen) > _META_MAX_OBJECTS or time.monotonic() > self.deadline:
            return
        if isinstance(v, self.MethodType):
            self.value(v.__self__, depth + 1)
            v = v.__func__
        if getattr(v, "__module__", None) != "__main__":
            return
        self.seen.add(id(v))
        self.keep.append(v)
        try:
            if isinstance(v, type):
                for key, x in list(vars(v).items()):
                    if key.startswith("__") and key.endswith("__"):
                        continue
                    nx = self.value(x, depth + 1)
                    if nx is not x:
                        setattr(v, key, nx)
                return
            for cell in v.__closure__ or ():
                try:
                    x = cell.cell_contents
                except ValueError:  # not yet bound
                    continue
                nx = self.value(x, depth + 1)
                if nx is not x:
                    cell.cell_contents = nx
            if v.__defaults__:
                new = tuple(self.value(x, depth + 1) for x in v.__defaults__)
                if any(a is not b for a, b in zip(new, v.__defaults__)):
                    v.__defaults__ = new
            if v.__kwdefaults__:
                for key, x in list(v.__kwdefaults__.items()):
                    nx = self.value(x, depth + 1)
                    if nx is not x:
                        v.__kwdefaults__[key] = nx
        except BaseException:
            pass

    def value(self, v, depth=0):
        """v, or what replaces it (a new tuple); containers are changed in place."""
        torch = self.torch
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if depth <= _META_MAX_DEPTH and isinstance(v, (type, self.FunctionType, self.MethodType)):
            self.code_object(v, depth)
            return v
        if isinstance(v, self.skip) or depth > _META_MAX_DEPTH:
            return v
        if id(v) in self.seen:
            return self.memo.get(id(v), v)
        if len(self.seen) > _META_MAX_OBJECTS or time.monotonic() > self.deadline:
            self.truncated = True
            return v
        self.seen.add(id(v))
        self.keep.append(v)
        np = _np()
        if np is not None and isinstance(v, np.ndarray):
            return v
        mod = type(v).__module__ or ""
        if mod.startswith(("pandas", "numpy", "sklearn", "scipy", "matplotlib", "IPython", "ipykernel")):
            return v
        try:
            if isinstance(v, list):
                for i, x in enumerate(v):
                    nx = self.value(x, depth + 1)
                    if nx is not x:
                        v[i] = nx
                return v
            if isinstance(v, tuple):
                items = [self.value(x, depth + 1) for x in v]
                if all(a is b for a, b in zip(items, v)):
                    return v
                new = type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
                self.memo[id(v)] = new
                return new
            if isinstance(v, dict):
                items = list(v.items())
                changed = False
                out = []
                for key, x in items:
                    nk = self.value(key, depth + 1) if isinstance(key, torch.Tensor) else key
                    nx = self.value(x, depth + 1)
                    changed = changed or nk is not key or nx is not x
                    out.append((nk, nx))
                if changed:
                    v.clear()
                    for key, x in out:
                        v[key] = x
                return v
            d = getattr(v, "__dict__", None)
            if isinstance(d, dict):
                for key in list(d):
                    x = d[key]
                    nx = self.value(x, depth + 1)
                    if nx is not x:
                        try:
                            object.__setattr__(v, key, nx)
                        except BaseException:
                            d[key] = nx
        except BaseException:
            pass
        return v


def _meta_begin(ns, code="", lmap=None):
    """Child side, before the cell: the CUDA guard always (torch loaded), the meta tensors in
    a meta run. Never raises."""
    st = _meta_st
    st.clear()
    st["lmap"], st["code"] = lmap, code
    torch = sys.modules.get("torch")
    mode = _meta_mode[0]
    if torch is None:
        if mode is not None:
            st["mode"] = mode
        return
    if mode is None and getattr(getattr(torch, "version", None), "cuda", None) is None:
        return  # real tensors on a CPU build of torch: nothing can reach a GPU
    try:
        cls, phnum, pharr = _meta_define(torch)
        st["cls"], st["ph_types"] = cls, (phnum,) + pharr
        _meta_guard_cuda(torch, mode is not None)
        _meta_patch_devices(torch, mode is not None)
    except BaseException as e:
        st["error"] = "the meta tensors and the CUDA guard could not be set up: %s" % _err(e)
        if mode is not None:
            st["mode"] = mode
            _meta_stop(st["error"])
        return
    if mode is None:
        return
    st["mode"] = mode
    t0 = time.perf_counter()
    try:
        w = _MetaWalk(torch, cls, mode == "all")
        for name in list(ns):
            if name.startswith("__") or name in ("In", "Out", "_ih", "_oh", "_dh", "exit", "quit", "get_ipython"):
                continue
            v = ns[name]
            nv = w.value(v)
            if nv is not v:
                ns[name] = nv
        st["converted"], st["devices"], st["truncated"] = w.count, w.devices, w.truncated
    except BaseException as e:
        st["error"] = "converting the tensors failed: %s" % _err(e)
    st["convert_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)


def _meta_crash(e):
    """Child side: whether the cell's exception e reads a value the meta run made up."""
    st = _meta_st
    if "cls" not in st or "mode" not in st:
        return
    st["done"] = True
    try:
        msg = str(e)
    except BaseException:
        msg = ""
    import re

    # The word, as torch names the device ("from meta tensor", "at meta"): not a substring
    # of a user's own name ('metadata', 'meta_score') a helper's KeyError carries.
    word = re.compile(r"\bmeta\b")
    if word.search(msg) and not word.search(st.get("code") or ""):
        # torch's own code met a stand-in where it needs the real tensor ("Can not infer
        # total number of classes from meta tensor", an RNN's "... at meta and ... at cpu"):
        # the run says nothing of the real one, so the outcome is unknown, never this error
        st["artifact"] = msg.splitlines()[0][:300] if msg else type(e).__name__
        return
    dep = st.get("value_exc") == id(e)
    if not dep and st.get("placeholders"):
        try:
            frame, lineno = _cell_frame(e.__traceback__)  # 34_crashkeys.py
            if frame is not None:
                code = st.get("code") or ""
                lines = _src_lines(code)
                ln = _map(st.get("lmap"), lineno)
                text = lines[ln - 1] if 1 <= ln <= len(lines) else ""
                for n in _cf_names(text):  # 35_crashfacts.py
                    v = _cf_value(frame, n)
                    if v is not _MISSING and _meta_is_ph(v):
                        dep = True
                        break
        except BaseException:
            pass
    if not dep and st.get("branch_lines"):
        try:
            frame, lineno = _cell_frame(e.__traceback__)
            if frame is not None:
                dep = _meta_branch_dep(st.get("code") or "", _map(st.get("lmap"), lineno), st["branch_lines"])
        except BaseException:
            pass
    st["value_dependent"] = dep


def _meta_branch_dep(code, ln, branch_lines):
    """Whether crash line ln hangs on a branch a made-up value took: it lies in the body of
    an if/while whose test read a placeholder (a comparison gives False, so the real run may
    take the other way), or it reads a name such a body assigns (a best checkpoint saved
    under `if acc > best_acc:` never is on meta tensors)."""
    import ast

    try:
        tree = ast.parse(code)
    except BaseException:
        return False
    lines = _src_lines(code)
    text = lines[ln - 1] if 1 <= ln <= len(lines) else ""
    reads = set(_cf_names(text))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        test = node.test
        if not any(l in branch_lines for l in range(test.lineno, (test.end_lineno or test.lineno) + 1)):
            continue
        if node.body[0].lineno <= ln <= (node.end_lineno or node.lineno):
            return True
        for sub in node.body + node.orelse:
            for n in ast.walk(sub):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in reads:
                    return True
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in reads:
                    return True
                if isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) in reads:
                    return True
    return False


def _meta_report(res):
    """Child side, at the end: res["meta"] (facts.MetaRun) when the run used meta tensors,
    the CUDA calls the guard stopped in every run; a refusal of the meta run's own says so."""
    st = _meta_st
    calls = st.get("cuda_calls", 0)
    if "mode" not in st:
        if calls:
            res["cuda_calls"] = calls
        return res
    m = {"tensors": "meta", "why": _meta_why[0], "converted": st.get("converted", 0), "created": st.get("created", 0),
         "cuda_calls": calls}
    for k in ("devices", "convert_ms", "error", "stopped", "ops"):
        if st.get(k):
            m[k] = st[k]
    if st.get("truncated"):
        m["truncated"] = True
    if st.get("placeholders"):
        m["placeholders"] = st["placeholders"]
        m["placeholder_uses"] = st.get("kinds", [])
    if res.get("status") == "error" and st.get("artifact"):
        what = "torch needed the real tensor behind a shape-only one (%s)" % st["artifact"]
        m["stopped"] = what
        res = {"status": "refused", "refused": "meta run: " + what,
               "reason": "the meta shadow run stopped: %s; outcome unknown" % what}
    if res.get("status") == "error" and st.get("value_dependent"):
        m["value_dependent"] = True
        m["reason"] = _META_VALUE_REASON
    if res.get("status") == "refused" and st.get("stopped"):
        res["reason"] = "the meta shadow run stopped: %s; outcome unknown" % st["stopped"]
    res["meta"] = m
    return res
