# ---------------------------------------------------------------------------------------------
# Shadow runs: meta tensors (facts.ShadowResult.Meta)
#
# A forked child of a kernel that has initialised CUDA cannot use the GPU (torch marks it a
# bad fork), but every tensor's shape, dtype, strides and device live in host memory. In a
# meta run the child replaces the tensors it cannot read (the CUDA ones; every tensor with
# --shadow-tensors meta) by _MetaT: a wrapper around a tensor on torch's "meta" device (shapes
# only, no data, no arithmetic) that remembers the device it stands for. Its
# __torch_dispatch__ runs each operation on the meta tensors, raises torch's own error where
# devices are mixed, and checks the dtypes meta kernels skip. A value the run does not have
# (.item(), bool(), .tolist(), .numpy()) is a placeholder: the run is marked as having used
# one, and a crash on a line that reads one is not a crash but unknown. A guard makes every
# CUDA entry point raise (a refusal) and counts them: the child never touches the GPU.
#
# The parent picks the mode before forking (_meta_pick, from 50_shadow.py); the child calls
# _meta_begin before the cell, _meta_crash on its exception and _meta_report at the end
# (45_child.py; those three are in 37_metarun.py). Nothing here runs in the user's kernel
# but _meta_pick, which only reads.

_META_MAX_OBJECTS = 200000
_META_MAX_DEPTH = 8
_META_BUDGET_S = 2.0
_META_RERUN_NUMEL = 1 << 22  # a failing op is re-run on CPU zeros up to this many elements
_META_TENSORS = ("auto", "meta", "real")
_META_VALUE_REASON = "depends on tensor values the GPU holds"

_meta_mode = [None]  # set in the parent before fork: None (real tensors), "cuda" or "all"
_meta_why = [""]
_meta_cuda_count = [0]  # torch.cuda.device_count() of a kernel that initialised CUDA
_meta_st = {}  # the child's meta state (see _meta_begin, 37_metarun.py)


def _meta_pick(tensors):
    """Parent side, before fork: the tensors mode of the next child. Reads, never initialises
    CUDA. Returns a reason to skip the run, or None."""
    tensors = tensors if tensors in _META_TENSORS else "auto"
    torch = sys.modules.get("torch")
    cuda_on = False
    if torch is not None:
        try:
            cuda_on = bool(torch.cuda.is_initialized())
        except BaseException:
            cuda_on = False
    _meta_mode[0], _meta_why[0], _meta_cuda_count[0] = None, "", 0
    if cuda_on:
        try:
            _meta_cuda_count[0] = int(torch.cuda.device_count())
        except BaseException:
            _meta_cuda_count[0] = 1
    if tensors == "real":
        if cuda_on:
            return "the kernel uses CUDA, which does not survive fork, and --shadow-tensors is real: not shadow-run"
        return None
    if tensors == "meta":
        _meta_mode[0], _meta_why[0] = "all", "meta (every tensor shape-only, as asked)"
    elif cuda_on:
        _meta_mode[0], _meta_why[0] = "cuda", "meta (auto: the kernel has initialised CUDA, so its CUDA tensors are shape-only)"
    return None


class _MetaCudaCall(Exception):
    pass


def _torch_dtype_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(str(dt).replace("torch.", ""), str(dt))


def _meta_mark(kind):
    st = _meta_st
    if st.get("done"):  # describing the crash's facts: no made-up values there
        raise RuntimeError("a meta tensor holds no values")
    st["placeholders"] = st.get("placeholders", 0) + 1
    kinds = st.setdefault("kinds", [])
    line = _meta_cell_line()
    if kind in ("bool()", "comparison", "bool() of a tensor") and line:
        bl = st.setdefault("branch_lines", set())  # lines where a made-up value took a branch
        if len(bl) < 1000:
            bl.add(line)
    entry = "%s at line %d" % (kind, line) if line else kind
    if entry not in kinds and len(kinds) < 8:
        kinds.append(entry)


def _meta_cell_line():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename == CELL_FILENAME:
            return _map(_meta_st.get("lmap"), f.f_lineno)
        f = f.f_back
    return 0


def _meta_stop(what):
    """End the run: what it needs is not in a meta run (an outcome unknown, never a crash)."""
    if _meta_st.get("done"):  # describing the crash's facts: no values, no refusal
        raise RuntimeError("a meta tensor holds no values")
    _meta_st["stopped"] = what
    _refuse("meta run: " + what)


def _meta_define(torch):
    """Builds the placeholder and wrapper classes (torch is imported by now)."""
    from torch.utils._pytree import tree_map

    class _PhNum(object):
        """A number the run does not have: arithmetic gives placeholders, never computes."""

        __slots__ = ()

        def _op(self, *a):
            return _PH_FLOAT

        __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _op
        __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _op
        __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = _op

        def __round__(self, n=None):
            return _PH_FLOAT if n is not None else _PH_INT

    class _PhFloat(_PhNum, float):
        __slots__ = ()

        def __repr__(self):
            return "<value on the GPU>"

        def __format__(self, spec):
            try:
                return float.__format__(float("nan"), spec)
            except BaseException:
                return "nan"

        def __bool__(self):
            _meta_mark("bool()")
            return False

        def __lt__(self, o):
            _meta_mark("comparison")
            return False

        __le__ = __gt__ = __ge__ = __lt__

        def __int__(self):
            return _PH_INT

        def __float__(self):
            return self

        def __hash__(self):
            return id(self)

        def __eq__(self, o):
            return o is self

    class _PhInt(_PhNum, int):
        __slots__ = ()
        __repr__ = _PhFloat.__repr__
        __format__ = _PhFloat.__format__
        __bool__ = _PhFloat.__bool__
        __lt__ = __le__ = __gt__ = __ge__ = _PhFloat.__lt__
        __hash__ = _PhFloat.__hash__
        __eq__ = _PhFloat.__eq__

        def __index__(self):
            _meta_mark("an index")
            return 1

    global _PH_FLOAT, _PH_INT
    _PH_FLOAT, _PH_INT = _PhFloat(1.0), _PhInt(1)
    np = _np()

    _PhArray = None
    if np is not None:
        class _PhArray(np.ndarray):
            """.numpy() of a meta tensor: the shape and dtype, values made up (marked)."""

    cpu = torch.device("cpu")
    _base_data = torch._C._TensorBase.data

    class _MetaT(torch.Tensor):
        """A tensor known by shape, dtype, strides and device only (see the top of the file)."""

        @staticmethod
        def __new__(cls, m, dev, requires_grad=False, ph=False):
            # torch's C++ device checks above the dispatcher (an RNN's "Input and hidden
            # tensors are not at the same device") see the wrapper's own device: a stand-in
            # for a CPU tensor is a CPU wrapper, so it meets the CPU tensors the cell makes
            # (nn.GRU's zero hidden state, device=x.device) as the real one would. Others
            # stay "meta" wrappers: C++ code given a CUDA tensor could call into CUDA.
            r = torch.Tensor._make_wrapper_subclass(cls, m.size(), strides=m.stride(), storage_offset=m.storage_offset(),
                                                    dtype=m.dtype, layout=m.layout,
                                                    device="cpu" if dev.type == "cpu" else "meta",
                                                    requires_grad=requires_grad)
            r._pm_m, r._pm_dev, r._pm_ph = m, dev, ph
            return r

        @property
        def device(self):
            return self._pm_dev

        @property
        def is_cuda(self):
            return self._pm_dev.type == "cuda"

        @property
        def is_meta(self):
            return False

        @property
        def data(self):
            return _base_data.__get__(self)

        @data.setter
        def data(self, v):
            # Module._apply swaps parameters' data in place (model.to(device)): the device
            # must follow
            _base_data.__set__(self, v)
            if isinstance(v, _MetaT):
                self._pm_m, self._pm_dev, self._pm_ph = v._pm_m, v._pm_dev, v._pm_ph

        def get_device(self):
            return self._pm_dev.index if self._pm_dev.type == "cuda" and self._pm_dev.index is not None else (
                0 if self._pm_dev.type == "cuda" else -1)

        def __repr__(self, *a, **k):
            return "tensor(<%s values on %s>, size=%s, dtype=%s)" % (
                "no", self._pm_dev, list(self.shape), self.dtype)

        __str__ = __repr__

        def _real_check(self, fn):
            """Raises what the real tensor would (wrong element count...), from CPU zeros."""
            if self.numel() <= _META_RERUN_NUMEL:
                fn(torch.zeros(self.shape, dtype=self.dtype))

        def item(self):
            self._real_check(lambda z: z.item())
            _meta_mark(".item()")
            return _PH_INT if not self.dtype.is_floating_point and self.dtype != torch.bool else _PH_FLOAT

        def __bool__(self):
            self._real_check(bool)
            _meta_mark("bool() of a tensor")
            return False

        def __float__(self):
            self._real_check(float)
            _meta_mark("float() of a tensor")
            return _PH_FLOAT

        def __int__(self):
            self._real_check(int)
            _meta_mark("int() of a tensor")
            return _PH_INT

        def __index__(self):
            self._real_check(lambda z: z.__index__())
            _meta_mark("a tensor used as an index")
            return 1

        def __format__(self, spec):
            # torch formats a 0-dim tensor as its .item() only when type(self) is Tensor:
            # f"{acc:.3f}" must give the placeholder, not object's TypeError
            if self.dim() == 0:
                return self.item().__format__(spec)
            if spec:
                raise TypeError("unsupported format string passed to Tensor.__format__")
            return self.__repr__()

        def tolist(self):
            _meta_mark(".tolist()")
            if self.numel() > 1000000:
                _meta_stop(".tolist() of %d values the run does not have" % self.numel())

            def build(shape):
                if not shape:
                    return _PH_FLOAT if self.dtype.is_floating_point else _PH_INT
                return [build(shape[1:]) for _ in range(shape[0])]

            return build(list(self.shape))

        def numpy(self, *a, **k):
            if self._pm_dev.type != "cpu":
                raise TypeError("can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                                "to host memory first." % self._pm_dev)
            if self.requires_grad:
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
            _meta_mark(".numpy()")
            return _meta_array(self)

        def __array__(self, dtype=None):
            a = self.numpy()
            return a.astype(dtype) if dtype is not None else a

        def __deepcopy__(self, memo):
            # torch's own asks for data_ptr() (best = copy.deepcopy(model.state_dict()) stopped
            # the run); a copy of a stand-in is a stand-in, made as torch makes one
            r = memo.get(id(self))
            if r is not None:
                return r
            if not self.is_leaf:
                raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                                   "protocol at the moment")
            with torch.no_grad():
                new = self.clone()
            new._pm_ph = self._pm_ph
            if self.requires_grad:
                new.requires_grad_(True)
            if getattr(self, "_is_param", False):
                new._is_param = True
            memo[id(self)] = new
            if self.grad is not None:
                new.grad = self.grad.__deepcopy__(memo) if isinstance(self.grad, _MetaT) else self.grad.clone()
            return new

        def data_ptr(self):
            _meta_stop("the data pointer of a meta tensor")

        # the dispatch below wraps every result: the Python __torch_function__ layer would
        # only add a second pass per operation
        __torch_function__ = torch._C._disabled_torch_function_impl

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return _meta_dispatch(func, args, kwargs or {})

    def _meta_array(t):
        if np is None:
            _meta_stop(".numpy() without numpy")
        dt = str(t.dtype).replace("torch.", "")
        try:
            a = np.zeros(tuple(t.shape), dtype=dt if dt != "bfloat16" else "float32")
        except BaseException:
            _meta_stop(".numpy() of a %s tensor" % dt)
        return a.view(_PhArray) if _PhArray is not None else a

    def _meta_dispatch(func, args, kwargs):
        devs = []
        ph = [False]
        mine = {}  # id(meta tensor) -> the wrapper holding it: what an in-place or out= op returns

        def un(x):
            if isinstance(x, _MetaT):
                if x._pm_dev not in devs:
                    devs.append(x._pm_dev)
                ph[0] = ph[0] or x._pm_ph
                mine[id(x._pm_m)] = x
                return x._pm_m
            if isinstance(x, torch.Tensor):
                if x.device.type == "meta":
                    return x
                if x.dim() > 0 and x.device not in devs:  # a 0-dim CPU tensor mixes with any device
                    devs.append(x.device)
                return x.to("meta")
            if isinstance(x, _PhNum):
                ph[0] = True
            return x

        a = [type(x)(un(y) for y in x) if type(x) in (list, tuple) else un(x) for x in args]
        k = {n: un(x) for n, x in kwargs.items()} if kwargs else {}
        if len(devs) > 1:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, %s and %s!"
                               % (devs[0], devs[1]))
        dev = devs[0] if devs else cpu
        kd = k.get("device")
        if kd is not None:
            kd = torch.device(kd)
            if kd.type != "meta":
                dev = kd if kd.type != "cuda" or kd.index is not None else torch.device("cuda", 0)
                k["device"] = torch.device("meta")
        name = str(getattr(func, "__name__", func))
        if name in ("gru.data", "lstm.data", "rnn_tanh.data", "rnn_relu.data") and len(args) >= 2 and (
                isinstance(args[1], torch.Tensor) and not isinstance(args[1], _MetaT)):
            a[1] = args[1]  # a packed sequence's batch sizes: real, read by the kernel
        if name.split(".")[0] == "_pack_padded_sequence" and len(args) >= 2:
            # its kernel reads the lengths' values, even from a meta tensor (which has none:
            # it found "an element in 'lengths' that is <= 0"): real lengths stay real
            lengths = args[1]
            if isinstance(lengths, _MetaT) or not isinstance(lengths, torch.Tensor) or lengths.device.type != "cpu":
                _meta_mark("aten::_pack_padded_sequence")
                _meta_stop("aten::_pack_padded_sequence needs the lengths' values (%s)" % _META_VALUE_REASON)
            a[1] = lengths
        _meta_dtype_checks(name, a)
        _meta_index_checks(name, args)
        try:
            if name.startswith("convolution_backward"):
                out = _meta_conv_backward(a)  # torch 1.13 has no meta kernel for it
            else:
                out = func(*a, **k)
        except NotImplementedError as e:
            # a meta kernel torch does not have: the run cannot follow the cell (never a crash)
            if True:
                op = name.split(".")[0]
                if op in ("_local_scalar_dense", "nonzero", "index", "index_put", "masked_select", "unique", "_unique2", "unique_dim",
                          "bincount", "histc", "repeat_interleave", "equal", "allclose", "is_nonzero",
                          "index_put_", "_index_put_impl_", "masked_scatter_", "multinomial"):
                    _meta_mark("aten::" + op)
                    _meta_stop("aten::%s needs tensor values the run does not have (%s)" % (op, _META_VALUE_REASON))
                _meta_stop("torch has no shape-only (meta) version of aten::%s" % op)
            raise
        except BaseException as e:
            if ph[0]:
                _meta_st["value_exc"] = id(e)
            _meta_real_error(func, args, kwargs, e)
            raise
        st = _meta_st
        st["ops"] = st.get("ops", 0) + 1

        def wr(x):
            if isinstance(x, torch.Tensor) and not isinstance(x, _MetaT):
                w = mine.get(id(x))
                if w is not None:
                    return _meta_sync(w, x)
                if x.device.type != "meta":  # made from real values (a packed sequence's batch sizes)
                    return x
                return _MetaT(x, dev, False, ph[0])
            return x

        if isinstance(out, torch.Tensor):
            return wr(out)
        if type(out) in (list, tuple):
            return type(out)(wr(x) for x in out)
        return tree_map(wr, out)

    def _meta_sync(w, m):
        """w, an argument an in-place or out= op changed (its meta tensor m): torch's C++
        code goes on with w itself (nn.GRU's output.transpose_(0, 1) with batch_first), so
        w's own sizes and strides must follow m's, or the next view sees the old ones."""
        if w.size() != m.size() or w.stride() != m.stride() or w.storage_offset() != m.storage_offset():
            from torch.utils._mode_utils import no_dispatch

            with no_dispatch():
                torch.Tensor.as_strided_(w, m.size(), m.stride(), m.storage_offset())
        return w

    def _meta_conv_backward(a):
        """(grad_input, grad_weight, grad_bias) shaped like input, weight and bias_sizes."""
        grad_out, inp, weight, bias_sizes = a[0], a[1], a[2], a[3]
        mask = a[-1] if len(a) > 4 else (True, True, True)
        gi = torch.empty_like(inp, device="meta") if mask[0] else None
        gw = torch.empty_like(weight, device="meta") if mask[1] else None
        gb = torch.empty(list(bias_sizes), dtype=grad_out.dtype, device="meta") if mask[2] and bias_sizes is not None else None
        return gi, gw, gb

    def _meta_dtype_checks(name, a):
        """The dtype checks meta kernels skip and real ones make (measured on torch 1.13 CPU)."""
        op = name.split(".")[0]
        ts = [x for x in a if isinstance(x, torch.Tensor)]
        if op in ("mm", "bmm", "mv", "dot", "matmul") and len(ts) >= 2 and ts[0].dtype != ts[1].dtype:
            raise RuntimeError("expected scalar type %s but found %s" % (_torch_dtype_name(ts[0].dtype),
                                                                         _torch_dtype_name(ts[1].dtype)))
        if op in ("addmm", "baddbmm", "addmv", "addbmm") and len(ts) >= 3 and len(set(t.dtype for t in ts[:3])) > 1:
            if op == "addmm" and ts[1].dtype != ts[2].dtype:
                raise RuntimeError("mat1 and mat2 must have the same dtype")
            raise RuntimeError("expected scalar type %s but found %s" % (_torch_dtype_name(ts[1].dtype),
                                                                         _torch_dtype_name(
                                                                             [t.dtype for t in ts[:3] if t.dtype != ts[1].dtype][0])))
        if op in ("nll_loss_forward", "nll_loss2d_forward", "nll_loss", "nll_loss2d") and len(ts) >= 2 and ts[1].dtype != torch.long:
            raise RuntimeError("expected scalar type Long but found %s" % _torch_dtype_name(ts[1].dtype))
        if op == "binary_cross_entropy" and len(ts) >= 2 and ts[0].dtype != ts[1].dtype:
            raise RuntimeError("Found dtype %s but expected %s" % (_torch_dtype_name(ts[1].dtype), _torch_dtype_name(ts[0].dtype)))

    def _meta_index_checks(name, args):
        """An index range a meta kernel never checks: where the indices are real (made by the
        cell from a vocabulary, say), their values are known and the real IndexError is due.
        Indices on meta tensors are not checked (their values are what the run lacks)."""
        op = name.split(".")[0]
        if op == "embedding" and len(args) >= 2:
            src, idx, dim = args[0], args[1], 0
        elif op == "index_select" and len(args) >= 3 and isinstance(args[1], int):
            src, idx, dim = args[0], args[2], args[1]
        else:
            return
        if not isinstance(src, torch.Tensor) or not isinstance(idx, torch.Tensor) or isinstance(idx, _MetaT):
            return
        if idx.device.type != "cpu" or idx.numel() == 0 or idx.dtype.is_floating_point or idx.dtype == torch.bool:
            return
        n = src.size(dim)
        if int(idx.max()) >= n or int(idx.min()) < 0:
            raise IndexError("index out of range in self")

    def _meta_real_error(func, args, kwargs, e):
        """A meta kernel's message can differ from the real one (conv: "Invalid channel
        dimensions"): the same op on CPU zeros of the same shapes gives torch's own."""
        if not isinstance(e, RuntimeError):
            return
        total = [0]

        def z(x):
            if isinstance(x, torch.Tensor):
                total[0] += x.numel()
                if total[0] > _META_RERUN_NUMEL:
                    raise OverflowError
                return torch.zeros(x.shape, dtype=x.dtype)
            return x

        try:
            with torch.no_grad():
                k = dict(kwargs)
                if "device" in k:
                    k["device"] = cpu
                func(*tree_map(z, args), **tree_map(z, k))
        except OverflowError:
            return
        except RuntimeError as real:
            if str(real) != str(e):
                e.args = (str(real),) + tuple(e.args[1:])
        except BaseException:
            return

    return _MetaT, _PhNum, (_PhArray,) if _PhArray is not None else ()


def _meta_is_ph(v, depth=0):
    """Whether v is (or shallowly holds) a value the meta run made up."""
    st = _meta_st
    if isinstance(v, st["ph_types"]):
        return True
    if isinstance(v, st["cls"]):
        return bool(v._pm_ph)
    if depth < 2 and isinstance(v, (list, tuple)):
        return any(_meta_is_ph(x, depth + 1) for x in list(v)[:50])
    if depth < 2 and isinstance(v, dict):
        return any(_meta_is_ph(x, depth + 1) for x in list(v.values())[:50])
    return False


def _meta_guard_cuda(torch, fake):
    """Every CUDA entry point raises a refusal and is counted; with fake devices the answers
    a cell asks before choosing its device are the kernel's (read before fork)."""
    st = _meta_st
    st["cuda_calls"] = 0

    def refuser(label):
        def refuse(*a, **k):
            st["cuda_calls"] += 1
            if len(st.setdefault("cuda_names", [])) < 5 and label not in st["cuda_names"]:
                st["cuda_names"].append(label)
            _refuse("CUDA call %s (a shadow run never touches the GPU)" % label)

        return refuse

    C = torch._C
    for n in list(dir(C)):
        if n.startswith("_cuda_") and callable(getattr(C, n, None)):
            try:
                setattr(C, n, refuser("torch._C." + n))
            except BaseException:
                pass
    cuda = torch.cuda
    count = _meta_cuda_count[0] if fake else 0
    answers = {
        "is_available": lambda: count > 0, "device_count": lambda: count, "is_initialized": lambda: False,
        "current_device": lambda: 0, "manual_seed": lambda *a, **k: None, "manual_seed_all": lambda *a, **k: None,
        "seed": lambda: None, "seed_all": lambda: None, "empty_cache": lambda: None, "synchronize": lambda *a, **k: None,
        "set_device": lambda *a, **k: None, "ipc_collect": lambda: None,
    }
    import types as _types

    for n in list(dir(cuda)):
        f = getattr(cuda, n, None)
        if not isinstance(f, _types.FunctionType) or n.startswith("_"):
            continue
        try:
            setattr(cuda, n, answers[n] if n in answers else refuser("torch.cuda." + n))
        except BaseException:
            pass
    try:
        cuda._lazy_init = refuser("torch.cuda._lazy_init")
    except BaseException:
        pass


def _meta_target(torch, a, k):
    """The device a .to()/.cuda()/factory call asks for, or None."""
    d = k.get("device")
    if d is None:
        for x in a:
            if isinstance(x, (str, torch.device)):
                d = x
                break
    if d is None:
        return None
    try:
        return torch.device(d)
    except BaseException:
        return None


def _meta_patch_devices(torch, fake):
    """.cuda(), .to('cuda'), Module.cuda() and factories with device='cuda': a tensor on the
    remembered device (fake), or a refusal (real tensors: the child never touches the GPU)."""
    cls = _meta_st["cls"]
    T = torch.Tensor
    orig_to, orig_cuda = T.to, T.cuda

    def target(self, a, k):
        if a and isinstance(a[0], torch.Tensor):
            return a[0].device
        return _meta_target(torch, a, k)

    def to(self, *a, **k):
        dev = target(self, a, k)
        if dev is None or dev.type != "cuda":
            return orig_to(self, *a, **k)
        if not fake:
            _refuse("CUDA tensor (%s), which a shadow run on real tensors never makes" % dev)
        if dev.index is None:
            dev = torch.device("cuda", 0)
        rest = [x.dtype if isinstance(x, torch.Tensor) else x for x in a[:2] if isinstance(x, (torch.dtype, torch.Tensor))]
        kw = {n: v for n, v in k.items() if n in ("dtype", "memory_format") and v is not None}
        if isinstance(self, cls):
            if self._pm_dev == dev and not rest and not kw:
                return self
            base = self._pm_m
        else:
            _meta_st["created"] = _meta_st.get("created", 0) + 1
            base = torch.empty_strided(self.size(), self.stride(), dtype=self.dtype, device="meta")
        if rest or kw:
            base = orig_to(base, *rest, **kw)
        return cls(base, dev, self.requires_grad, isinstance(self, cls) and self._pm_ph)

    def cuda_(self, device=None, non_blocking=False, memory_format=None):
        if isinstance(device, (str, torch.device)):
            return to(self, torch.device(device))
        return to(self, torch.device("cuda", device if isinstance(device, int) else 0))

    def on_cuda(t, dev):
        return to(t, dev)

    T.to = to
    T.cuda = cuda_
    _orig_apply = torch.nn.Module.cuda

    def module_cuda(self, device=None):
        dev = torch.device("cuda", device if isinstance(device, int) else 0)
        return self.to(dev)

    torch.nn.Module.cuda = module_cuda
    for name in ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
                 "linspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                 "randint_like", "randperm", "from_numpy", "empty_strided", "logspace", "normal"):
        orig = getattr(torch, name, None)
        if orig is None:
            continue

        def factory(*a, _orig=orig, **k):
            dev = k.get("device")
            try:
                dev = torch.device(dev) if dev is not None else None
            except BaseException:
                dev = None
            if dev is None or dev.type != "cuda":
                return _orig(*a, **k)
            k["device"] = "cpu"
            return on_cuda(_orig(*a, **k), dev)

        setattr(torch, name, factory)
    del _orig_apply
