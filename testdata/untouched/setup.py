# Bound in a real kernel by the tests that assert premortem never runs the user's code in
# the user's kernel (kernelclient TestShadowParentUntouched, judge TestCheckParentUntouched).
# Every hook below bumps calls[...] in the kernel; the RNGs and the file offset are
# snapshotted in _untouched_before. check.py compares them afterwards.
import os, random, tempfile, types
import numpy as np
import pandas as pd
import torch

calls = {}


def _bump(what):
    calls[what] = calls.get(what, 0) + 1


class Counted:
    def __len__(self):
        _bump("len")
        return 3

    @property
    def prop(self):
        _bump("property")
        return 1

    def __getattr__(self, name):
        _bump("getattr")
        raise AttributeError(name)

    def __repr__(self):
        _bump("repr")
        return "Counted()"

    def __iter__(self):
        _bump("iter")
        return iter([1, 2, 3])

    def __array__(self, dtype=None):
        _bump("array")
        return np.zeros(3)

    def __getitem__(self, i):
        _bump("getitem")
        return fh.read(1)


def _module_getattr(name):
    _bump("module_getattr")
    raise AttributeError(name)


ds = Counted()
lazy = types.ModuleType("lazy")
lazy.__getattr__ = _module_getattr
_untouched_path = os.path.join(tempfile.mkdtemp(), "data.txt")
with open(_untouched_path, "w") as _f:
    _f.write("x" * 1000)
fh = open(_untouched_path)
fh.read(10)
gen = np.random.default_rng(0)
tgen = torch.Generator().manual_seed(0)
rr = random.Random(0)
df = pd.DataFrame({"Age": [1, 2, 3]})
_untouched_before = {
    "gen": gen.bit_generator.state,
    "tgen": tgen.get_state().clone(),
    "rr": rr.getstate(),
    "offset": os.lseek(fh.fileno(), 0, os.SEEK_CUR),
    "tell": fh.tell(),
}
