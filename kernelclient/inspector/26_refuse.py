# ---------------------------------------------------------------------------------------------
# Shadow runs: refusals (what the child will not do: the exception, the record, the flags)


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


def _path_like(f):
    return isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")
