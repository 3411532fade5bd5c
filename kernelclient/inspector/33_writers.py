# ---------------------------------------------------------------------------------------------
# Shadow runs: the fallback's private view, continued (33_view.py) for libraries whose C code
# opens paths itself: sqlite3, PyTables (pandas to_hdf/HDFStore/read_hdf), h5py, cv2.
#
# The seccomp filter lets only the scratch directory's descriptor open for writing, and a C
# library opens its path with AT_FDCWD: handing it the scratch copy's path would be refused
# like the real one. So each is given what it can work on without a path: an in-memory
# database or file image loaded from what the view shows at the path (the real file, copied
# on write, or the child's own earlier write), written back through the view (so accounted by
# the scratch cap) when the library would have written the file. A read-only open of a file
# the child never wrote is the library's own (reads are allowed). Anything below these entry
# points that still opens a path for writing meets the filter: unknown, with the call named.


def _view_bytes(v, f):
    """What the view shows at f, or None when nothing is there."""
    if v.lookup(f) is None:
        return None
    with open(f, "rb") as fh:
        return fh.read()


def _view_writers():
    """Patch the libraries above (now, or at their first import in the cell)."""
    v = _view[0]
    later = {"sqlite3": lambda m: _view_sqlite(v, m), "tables": lambda m: _view_tables(v, m),
             "h5py": lambda m: _view_h5py(v, m), "cv2": lambda m: _view_cv2(v, m),
             "openpyxl.worksheet._writer": _view_openpyxl}
    for name in list(later):
        mod = sys.modules.get(name)
        if mod is not None:
            try:
                later.pop(name)(mod)
            except BaseException:
                pass
    if later:
        sys.meta_path.insert(0, _PostImport(later))


def _view_sqlite(v, sq):
    """sqlite3.connect(path): an in-memory database deserialized from the view's file, serialized
    back to it at each commit and at close (pandas to_sql/read_sql go through the connection)."""
    orig = sq.connect
    base = sq.Connection
    if not hasattr(base, "serialize"):
        return  # before Python 3.11: the filter refuses the connect, as before
    import weakref

    open_cons = weakref.WeakSet()  # connections of the view: a new one sees what they committed

    class _ViewConnection(base):
        _premortem_path = None

        def _premortem_flush(self):
            if self._premortem_path is not None:
                try:
                    data = self.serialize()
                except sq.OperationalError:
                    data = b""  # no pages yet: sqlite's file is empty too
                with open(self._premortem_path, "wb") as fh:
                    fh.write(data)

        def commit(self):
            base.commit(self)
            self._premortem_flush()

        def close(self):
            try:
                if self._premortem_path is not None:
                    if self.in_transaction:
                        base.rollback(self)  # what close without commit does to the file
                    self._premortem_flush()
            finally:
                self._premortem_path = None
                base.close(self)

        def __exit__(self, *exc):
            out = base.__exit__(self, *exc)  # commit or rollback
            self._premortem_flush()
            return out

    def connect(database, *a, **k):
        names = ("timeout", "detect_types", "isolation_level", "check_same_thread", "factory",
                 "cached_statements", "uri")
        k.update(zip(names, a))
        path, ro = database, False
        if k.get("uri") and isinstance(database, str) and database.startswith("file:"):
            path, _, query = database[5:].partition("?")
            opts = dict(o.partition("=")[::2] for o in query.split("&") if o)
            if opts.get("mode") == "memory" or opts.get("vfs") or path in ("", ":memory:"):
                return orig(database, **k)
            ro = opts.get("mode") == "ro" or opts.get("immutable") == "1"
            if path.startswith("//"):
                path = path[2:] if path.startswith("///") else path  # file://host/path: sqlite's own rule
            from urllib.parse import unquote

            path = unquote(path)
        f = v.full(path) if _path_like(path) and os.fspath(path) not in ("", ":memory:", b"", b":memory:") else None
        if f is None or k.get("factory", base) is not base:
            return orig(database, **k)
        for other in list(open_cons):
            if other._premortem_path == f and not other.in_transaction:
                other._premortem_flush()  # autocommitted statements (DDL) are on disk for sqlite too
        data = _view_bytes(v, f)
        if data is None and (ro or not v.isdir(os.path.dirname(f))):
            raise sq.OperationalError("unable to open database file")
        k["factory"], k["uri"] = _ViewConnection, False
        con = orig(":memory:", **k)
        if data:
            if data[18:20] == b"\x02\x02":
                data = data[:18] + b"\x01\x01" + data[20:]  # WAL: a memory database is in rollback mode
            con.deserialize(data)
        if not ro:
            con._premortem_path = f
            open_cons.add(con)
            if data is None:
                con._premortem_flush()  # connect creates the (empty) file
        return con

    sq.connect = connect
    dbapi = sys.modules.get("sqlite3.dbapi2")
    if dbapi is not None and getattr(dbapi, "connect", None) is orig:
        dbapi.connect = connect


def _view_tables(v, tb):
    """tables.open_file(path, mode): HDF5's in-memory driver on the view's file image, the image
    written back at flush and close (pandas HDFStore, to_hdf and read_hdf open through here)."""
    orig = tb.open_file
    images = {}  # id(File) -> the view path its image goes back to

    def open_file(filename, mode="r", title="", root_uep="/", filters=None, **kw):
        f = v.full(filename) if _path_like(filename) and "driver" not in kw else None
        if f is None or (mode == "r" and (not v.dirty or v.lookup(f) is None or v.lookup(f)[0] == "real")):
            return orig(filename, mode, title, root_uep, filters, **kw)  # reads of the real file are its own
        data = _view_bytes(v, f) if mode != "w" else None
        if data is None and mode in ("r", "r+"):
            raise v._enoent(os.fspath(filename))
        if mode != "r" and not v.isdir(os.path.dirname(f)):
            raise v._enoent(os.fspath(filename))
        kw.update(driver="H5FD_CORE", driver_core_backing_store=0)
        if data:
            kw["driver_core_image"] = data
        name = os.fsencode(os.fspath(filename))
        _sc_quiet.update((name, os.fsencode(f)))  # HDF5 probes the name even with an image
        try:
            h = orig(filename, mode if data or mode == "r" else "w", title, root_uep, filters, **kw)
        finally:
            _sc_quiet.clear()
        if mode != "r":
            images[id(h)] = f
            if not data:
                put(h)  # the file exists from the open on, as with the disk driver
        return h

    busy = set()

    def put(h):
        f = images.get(id(h))
        if f is not None and h.isopen and id(h) not in busy:
            busy.add(id(h))  # get_file_image flushes first
            try:
                data = h.get_file_image()
            finally:
                busy.discard(id(h))
            with open(f, "wb") as fh:
                fh.write(data)

    cls = tb.File
    o_flush, o_close = cls.flush, cls.close

    def flush(self):
        o_flush(self)
        put(self)

    def close(self):
        if id(self) in images and self.isopen and self._open_count <= 1:
            try:
                o_flush(self)
                put(self)
            finally:
                images.pop(id(self), None)
        return o_close(self)

    cls.flush, cls.close = flush, close
    tb.open_file = open_file
    fmod = sys.modules.get("tables.file")
    if fmod is not None and getattr(fmod, "open_file", None) is orig:
        fmod.open_file = open_file


def _view_h5py(v, h5):
    """h5py.File(path, mode): HDF5 on a file object of the view (h5py's fileobj driver)."""
    orig = h5.File
    modes = {"r": "rb", "r+": "r+b", "w": "w+b", "w-": "x+b", "x": "x+b"}

    class File(orig):
        def __init__(self, name, mode="r", *a, **k):
            f = v.full(name) if _path_like(name) and not k.get("driver") else None
            if f is not None and (mode != "r" or (v.dirty and v.lookup(f) is not None and v.lookup(f)[0] == "upper")):
                m = modes.get(mode) or ("r+b" if v.lookup(f) is not None else "w+b")
                if mode == "r" and v.lookup(f) is None:
                    raise v._enoent(os.fspath(name))
                fh = open(name, m)
                try:
                    orig.__init__(self, fh, mode if mode != "a" else ("r+" if m == "r+b" else "w"), *a, **k)
                except BaseException:
                    fh.close()
                    raise
                self._premortem_fh = fh
                return
            orig.__init__(self, name, mode, *a, **k)

        def close(self):
            try:
                orig.close(self)
            finally:
                fh = self.__dict__.pop("_premortem_fh", None)
                if fh is not None:
                    fh.close()

    File.__name__ = File.__qualname__ = "File"
    File.__module__ = orig.__module__
    h5.File = File


def _view_cv2(v, cv2):
    """cv2.imwrite/imread(path): encoded or decoded in memory, the bytes through the view."""
    o_write, o_read = cv2.imwrite, cv2.imread

    def imwrite(filename, img, params=None):
        f = v.full(filename) if _path_like(filename) else None
        if f is None:
            return o_write(filename, img, params) if params is not None else o_write(filename, img)
        ok, buf = cv2.imencode(os.path.splitext(os.fspath(filename))[1], img, params if params is not None else [])
        if not ok:
            return False
        try:
            with open(filename, "wb") as fh:
                fh.write(buf.tobytes())
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return False  # cv2's own answer for a path it cannot create
        return True

    def imread(filename, flags=1):
        f = v.full(filename) if _path_like(filename) and v.dirty else None
        if f is None or (v.lookup(f) is not None and v.lookup(f)[0] == "real"):
            return o_read(filename, flags)
        data = _view_bytes(v, f)
        if data is None:
            return None  # cv2's answer for a missing file
        import numpy

        return cv2.imdecode(numpy.frombuffer(data, numpy.uint8), flags)

    cv2.imwrite, cv2.imread = imwrite, imread


def _view_openpyxl(w):
    """openpyxl's worksheet writer streams each sheet to a temporary file that lxml opens in C:
    lxml is given a file object of the scratch directory (or the view) instead."""
    orig = w.xmlfile

    class _OnFile(object):
        def __init__(self, out, a, k):
            self.out, self.a, self.k = out, a, k

        def __enter__(self):
            self.fh = open(self.out, "wb")
            self.cm = orig(self.fh, *self.a, **self.k)
            return self.cm.__enter__()

        def __exit__(self, *exc):
            try:
                return self.cm.__exit__(*exc)
            finally:
                self.fh.close()

    def xmlfile(out, *a, **k):
        return _OnFile(out, a, k) if _path_like(out) else orig(out, *a, **k)

    w.xmlfile = xmlfile
