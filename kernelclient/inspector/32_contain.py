# Shadow runs: the child's sandbox, continued from 31_sandbox. This part holds what both
# sandboxes do with the state the child inherited from the kernel (descriptors open for
# writing, shared mappings) and the outcomes the sandbox explains (a cell that needs the
# network, a cell that filled the throwaway filesystem).

# ---------------------------------------------------------------------------------------------
# What the kernel had open


def _survey_fds():
    """Inherited descriptors: (fd, path, access flags, offset, stat, cloexec), read in C before
    any namespace is entered (paths are the kernel's)."""
    import fcntl
    import stat

    out = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for name in names:
        try:
            fd = int(name)
            st = os.fstat(fd)
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            cloexec = fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
        except (ValueError, OSError):
            continue  # the listdir's own descriptor, already closed
        try:
            path = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            path = ""
        off = None
        if stat.S_ISREG(st.st_mode):
            try:
                off = os.lseek(fd, 0, os.SEEK_CUR)
            except OSError:
                off = None
        out.append((fd, path, fl, off, st, cloexec))
    return out


def _contain(box, survey, mark=lambda name: None):
    """Before the cell runs: nothing the kernel had open stays reachable for writing."""
    import fcntl
    import stat

    keep = set((0, 1, 2))
    keep.update(_keep_fds)
    null = None
    for fd, path, fl, off, st, cloexec in survey:
        if fd in keep:
            continue
        try:
            os.fstat(fd)
        except OSError:
            continue
        acc = fl & os.O_ACCMODE
        mode = st.st_mode
        new = None
        try:
            if stat.S_ISREG(mode):
                new = _private_file(box, fd, path, fl, off, st)
            elif stat.S_ISDIR(mode):
                if box.kind == "namespaces" and path.startswith("/") and not path.endswith(" (deleted)"):
                    new = os.open(path, os.O_RDONLY | os.O_DIRECTORY)  # openat() through it stays in the overlay
            elif stat.S_ISCHR(mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) in (3, 5, 8, 9):
                pass  # /dev/null, /dev/zero, /dev/random, /dev/urandom
            elif acc != os.O_RDONLY or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or not stat.S_IFMT(mode):
                # (a read-only terminal still takes tcsetattr and TIOCSTI: any other
                # character device is a sink too)
                # sockets (ZMQ, heartbeat), pipes, ttys, eventfd/epoll (anonymous inodes):
                # a sink whose writes succeed and vanish
                if null is None:
                    null = os.open(os.devnull, os.O_RDWR)
                new = os.dup(null)
            elif stat.S_ISFIFO(mode):
                if null is None:
                    null = os.open(os.devnull, os.O_RDWR)
                new = os.dup(null)  # reading the kernel's pipe would steal its data
        except OSError:
            if null is None:
                null = os.open(os.devnull, os.O_RDWR)
            new = os.dup(null)
        if new is not None and new != fd:
            os.dup2(new, fd, inheritable=not cloexec)
            os.close(new)
    if null is not None:
        os.close(null)
    mark("fds")
    _private_maps(box)
    mark("maps")


_keep_fds = set()  # the result pipe


def _private_file(box, fd, path, fl, off, st):
    """A regular file: a copy for writable descriptors (memfd, same offset and append flag),
    an own open file description for read-only ones (the kernel's offset must not move)."""
    import fcntl

    acc = fl & os.O_ACCMODE
    reopen = "/proc/self/fd/%d" % fd
    if box.kind == "namespaces" and path.startswith("/") and not path.endswith(" (deleted)") and os.path.exists(path):
        reopen = path  # through the overlay: an fchmod/ftruncate copies up, never the host file
    if acc == os.O_RDONLY or st.st_size > _SMALL_FILE:
        new = os.open(reopen, os.O_RDONLY)
        if acc != os.O_RDONLY:
            box.sealed[fd] = path  # a write fails (EBADF) and is reported as a refusal
    else:
        src = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY)
        try:
            new = os.memfd_create("premortem-copy", 0)
            left, pos = st.st_size, 0
            while left > 0:
                n = os.sendfile(new, src, pos, left)
                if n <= 0:
                    break
                pos += n
                left -= n
        finally:
            os.close(src)
        if fl & os.O_APPEND:
            fcntl.fcntl(new, fcntl.F_SETFL, os.O_APPEND)
    if off is not None:
        os.lseek(new, off, os.SEEK_SET)
    return new


def _shared_writable_maps():
    """/proc/self/maps lines of the writable shared mappings. Linux 6.11's PROCMAP_QUERY
    ioctl asks the kernel for just those (under a millisecond); reading the whole text costs
    10-40 ms in a kernel with torch loaded (thousands of mappings), the fallback."""
    import ctypes
    import fcntl

    class Query(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint64) for n in ("size", "query_flags", "query_addr", "vma_start", "vma_end",
                                                    "vma_flags", "vma_page_size", "vma_offset", "inode")] + \
                   [(n, ctypes.c_uint32) for n in ("dev_major", "dev_minor", "vma_name_size", "build_id_size")] + \
                   [(n, ctypes.c_uint64) for n in ("vma_name_addr", "build_id_addr")]

    out = []
    try:
        fd = os.open("/proc/self/maps", os.O_RDONLY)
    except OSError:
        return out
    try:
        name = ctypes.create_string_buffer(4096)
        q, addr = Query(), 0
        while True:
            q.size, q.query_flags, q.query_addr = ctypes.sizeof(Query), 0x02 | 0x08 | 0x10, addr  # WRITABLE|SHARED|NEXT
            q.vma_name_size, q.vma_name_addr, q.build_id_size, q.build_id_addr = 4096, ctypes.addressof(name), 0, 0
            try:
                fcntl.ioctl(fd, 0xC0686611, q)  # PROCMAP_QUERY
            except OSError as e:
                if e.errno == _errno.ENOENT:
                    return out  # no more
                break  # ENOTTY/EINVAL: an older kernel
            perms = "rw-s"
            out.append("%x-%x %s %08x 00:00 %d %s" % (q.vma_start, q.vma_end, perms, q.vma_offset, q.inode,
                                                        name.value.decode("utf-8", "replace")))
            addr = q.vma_end
    finally:
        os.close(fd)
    import re

    try:
        with open("/proc/self/maps", "rb") as f:
            data = f.read()
    except OSError:
        return []
    return [m.group(0).decode("utf-8", "replace")
            for m in re.finditer(rb"^[0-9a-f]+-[0-9a-f]+ .w.s.*$", data, re.M)]


def _private_maps(box):
    """Writable MAP_SHARED mappings become private: file-backed ones are mapped again
    MAP_PRIVATE from the same file (copy-on-write from the page cache, which holds the
    kernel's unflushed writes), anonymous/shm ones are copied into private memory."""
    import ctypes

    lines = _shared_writable_maps()
    if not lines:
        return
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mmap.restype = ctypes.c_void_p
    lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    PROT_READ, PROT_WRITE, MAP_PRIVATE, MAP_FIXED, MAP_ANON = 1, 2, 2, 0x10, 0x20
    failed = ctypes.c_void_p(-1).value
    copied = 0
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 5 or len(parts[1]) < 4 or parts[1][3] != "s" or parts[1][1] != "w":
            continue
        a, b = (int(x, 16) for x in parts[0].split("-"))
        size = b - a
        offset = int(parts[2], 16)
        inode = int(parts[4])
        path = parts[5].strip() if len(parts) > 5 else ""
        prot = PROT_READ | PROT_WRITE
        done = False
        if inode and path.startswith("/") and not path.endswith("(deleted)") and not path.startswith("/dev/"):
            try:
                fd = os.open("/proc/self/map_files/%x-%x" % (a, b), os.O_RDONLY)
            except OSError:
                try:
                    fd = os.open(path, os.O_RDONLY)
                except OSError:
                    fd = -1
            if fd >= 0:
                try:
                    if os.fstat(fd).st_ino == inode or box.kind == "namespaces":
                        done = lib.mmap(a, size, prot, MAP_PRIVATE | MAP_FIXED, fd, offset) == a
                finally:
                    os.close(fd)
        if not done and copied + size <= _SHM_COPY_LIMIT:
            tmp = lib.mmap(None, size, prot, MAP_PRIVATE | MAP_ANON, -1, 0)
            if tmp not in (None, failed):
                ctypes.memmove(tmp, a, size)
                if lib.mmap(a, size, prot, MAP_PRIVATE | MAP_FIXED | MAP_ANON, -1, 0) == a:
                    ctypes.memmove(a, tmp, size)
                    done = True
                    copied += size
                lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
                lib.munmap(tmp, size)
        if not done:
            lib.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            lib.mprotect(a, size, PROT_READ)  # a write now faults: the child dies, nothing leaks


# ---------------------------------------------------------------------------------------------
# Outcomes the sandbox explains


def _net_error(e):
    """The exception (or one it was raised from) is a network failure."""
    seen = 0
    while e is not None and seen < 8:
        seen += 1
        import socket

        if isinstance(e, socket.gaierror):
            return e
        if isinstance(e, OSError) and e.errno in _NET_ERRNOS:
            return e
        if isinstance(e, (socket.timeout, ConnectionError)):
            return e
        name = type(e).__name__
        mod = type(e).__module__ or ""
        if (mod.startswith("urllib") and name == "URLError") or (
                mod.startswith(("requests", "urllib3", "httpx", "aiohttp")) and (
                "Connection" in name or "NewConnection" in name or "MaxRetry" in name or "ConnectError" in name)):
            return e
        e = e.__cause__ or e.__context__
    return None


def _sandbox_outcome(box, e):
    """A refusal result when the exception is the sandbox's doing, else None."""
    if box is None:
        return None
    if box.kind == "namespaces" and _net_error(e) is not None:
        return {"status": "refused", "refused": "network access",
                "reason": "the cell needs the network (%s: %s), which a shadow run does not have; outcome unknown"
                          % (type(e).__name__, str(e)[:200])}
    if isinstance(e, OSError) and e.errno == _errno.EBADF and box.sealed:
        what = "a write to %s, a large file the kernel had open" % ", ".join(sorted(set(box.sealed.values())))[:200]
        return {"status": "refused", "refused": what,
                "reason": "the cell tried %s (not copied into the sandbox); outcome unknown" % what}
    if isinstance(e, OSError) and e.errno == _errno.EROFS and box.ro_mounts:
        what = "a write under %s, which the sandbox cannot overlay" % ", ".join(box.ro_mounts)[:200]
        return {"status": "refused", "refused": what, "reason": "the cell tried %s; outcome unknown" % what}
    if isinstance(e, OSError) and (e.errno == _errno.ENOSPC or (e.errno == _errno.EFBIG and box.kind != "namespaces")) \
            and box.scratch_bytes:
        return _scratch_full_result(box)
    return None


def _scratch_full_result(box):
    """The refusal for a cell that filled the sandbox's scratch space (the namespace sandbox's
    tmpfs, or the fallback's capped tree)."""
    mb = (box.scratch_bytes or 0) >> 20
    where = "a quarter of its memory cap" if box.kind == "namespaces" else \
        "a quarter of its memory cap or of the free disk, whichever is less"
    return {"status": "refused", "refused": "writing more than the sandbox holds",
            "reason": "the shadow run's scratch space is full (%d MB, %s): the cell wrote more than a "
                      "shadow run may keep; outcome unknown" % (mb, where)}
