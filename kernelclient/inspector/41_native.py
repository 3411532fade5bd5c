# ---------------------------------------------------------------------------------------------
# Shadow runs: native writers (in the fallback, writers that open files in C refuse paths;
# open(os.devnull) is served without a syscall the seccomp filter would refuse)


_VIEW_NATIVE = frozenset(["torch.save", "torch.jit.save", "DataFrame.to_parquet", "DataFrame.to_feather",
                          "DataFrame.to_orc", "DataFrame.to_hdf", "Series.to_hdf", "cv2.imwrite"])


def _patch_native_writers(view=False):
    """Writers that open files in C (not seen by the audit hook): refuse path arguments,
    but for those the private view gives a file object instead (_view_native_io)."""
    def wrap(owner, name, label, argpos=0, kw="path"):
        orig = getattr(owner, name, None)
        if orig is None or (view and label in _VIEW_NATIVE):
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
    if h5 is not None and not view:  # the view emulates h5py.File (33_writers.py)
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
