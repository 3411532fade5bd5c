"""Runs a Python kernel the way Docker's default seccomp profile does: unshare and clone
with namespace flags fail with EPERM, clone3 with ENOSYS (glibc then uses clone). Used as
LaunchOptions.Python by the fallback's integration tests:
    no-namespaces.py PYTHON ARGS...  (execs PYTHON ARGS... under the filter)
"""
import ctypes
import os
import sys

NS_FLAGS = 0x7E020080  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
prog = [
    (LD, 0, 0, 4), (JEQ, 1, 0, 0xC000003E), (RET, 0, 0, ALLOW),  # x86_64 only
    (LD, 0, 0, 0),
    (JEQ, 0, 1, 272), (RET, 0, 0, EPERM),  # unshare
    (JEQ, 0, 1, 435), (RET, 0, 0, ENOSYS),  # clone3
    (JEQ, 0, 3, 56), (LD, 0, 0, 16), (JSET, 0, 1, NS_FLAGS), (RET, 0, 0, EPERM),  # clone + ns flags
    (RET, 0, 0, ALLOW),
]


class Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]


arr = (Filter * len(prog))(*[Filter(*x) for x in prog])
fprog = Prog(len(prog), ctypes.cast(arr, ctypes.POINTER(Filter)))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("no-namespaces.py: seccomp refused: %s" % os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
