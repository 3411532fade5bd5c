"""Tests that inspection decides from types and never runs the objects' code (StaticTest:
no __len__, __getattr__, property or __repr__ of the user's runs, no RNG moves, "cannot tell"
is not "missing", a lazy submodule is not imported). In-process IPython shell.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_static.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import SH, has, inspect, module_source  # noqa: E402  (the module as kernelclient embeds it)


STATIC_SETUP = r'''
import io, random as _random, types as _types
class Counted:
    calls = 0
    def __init__(self):
        self.fh = io.BytesIO(b"x" * 1000)
    def __len__(self):
        Counted.calls += 1
        return 3
    def __getitem__(self, i):
        Counted.calls += 1
        return self.fh.read(123)
    def __iter__(self):
        Counted.calls += 1
        return iter([1])
    def __repr__(self):
        Counted.calls += 1
        return "Counted"
    def __array__(self, dtype=None):
        Counted.calls += 1
        raise RuntimeError
    @property
    def prop(self):
        Counted.calls += 1
        return 1
    def __getattr__(self, name):
        Counted.calls += 1
        return 1
counted = Counted()
class Delegating:
    """Like statsmodels' ResultsWrapper: attributes come from __getattribute__."""
    def __init__(self, inner):
        object.__setattr__(self, "_inner", inner)
    def __getattribute__(self, name):
        Counted.calls += 1
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            return getattr(object.__getattribute__(self, "_inner"), name)
deleg = Delegating(_types.SimpleNamespace(params=[1.0]))
class Slotted:
    __slots__ = ("a", "b")
slotted = Slotted()
slotted.a = 1
lazy = _types.ModuleType("lazy_mod")
def _lazy_getattr(name):
    Counted.calls += 1
    raise AttributeError(name)
lazy.__getattr__ = _lazy_getattr
lazy.loaded = 1
rng_py = _random.Random(7)
'''


class StaticTest(unittest.TestCase):
    """Inspection decides from types and never runs the objects' code (issue 22, 24)."""

    @classmethod
    def setUpClass(cls):
        SH.run_cell(STATIC_SETUP, store_history=True).raise_error()
        if has("numpy"):
            SH.run_cell("import numpy as np\nrng_np = np.random.default_rng(3)", store_history=True).raise_error()
        if has("torch"):
            SH.run_cell(r'''
import torch
rng_t = torch.Generator().manual_seed(5)
class CountedDS(torch.utils.data.Dataset):
    def __len__(self):
        Counted.calls += 1
        return 10
    def __getitem__(self, i):
        Counted.calls += 1
        counted.fh.read(123)
        return torch.zeros(3)
cds = CountedDS()
cdl = torch.utils.data.DataLoader(cds, batch_size=4, shuffle=True, generator=rng_t)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 3)
    @property
    def extra(self):
        Counted.calls += 1
        return 1
    def parameters(self, recurse=True):
        Counted.calls += 1
        return super().parameters(recurse)
    def named_modules(self, *a, **k):
        Counted.calls += 1
        return super().named_modules(*a, **k)
cnet = Net()
''', store_history=True).raise_error()
        if has("sklearn"):
            SH.run_cell(r'''
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import Pipeline as _Pipe
from sklearn.preprocessing import StandardScaler as _SS
class MyEst(BaseEstimator, ClassifierMixin):
    def __init__(self, k=1):
        self.k = k
    @property
    def predict_proba(self):
        Counted.calls += 1
        raise AttributeError("no")
    def __getattr__(self, name):
        Counted.calls += 1
        raise AttributeError(name)
    def fit(self, X, y):
        self.coef_ = 1
        return self
    def predict(self, X):
        return X
myest = MyEst()
mypipe = _Pipe([("s", _SS()), ("m", MyEst())])
''', store_history=True).raise_error()

    def names(self):
        out = ["counted", "counted.prop", "counted.nothing", "deleg", "deleg.params", "deleg.nope",
               "slotted", "slotted.a", "slotted.b", "slotted.c", "lazy", "lazy.loaded", "lazy.unloaded", "rng_py"]
        if has("numpy"):
            out += ["rng_np", "rng_np.normal"]
        if has("torch"):
            out += ["rng_t", "cds", "cdl", "cnet", "cnet.fc", "cnet.extra", "cnet.nope"]
        if has("sklearn"):
            out += ["myest", "myest.predict_proba", "myest.coef_", "mypipe", "mypipe.predict_proba"]
        return out

    def test_no_user_code_runs(self):
        before = SH.user_ns["Counted"].calls
        fh = SH.user_ns["counted"].fh
        pos = fh.tell()
        inspect(self.names(), namespace=True)
        inspect(self.names(), values=False)
        self.assertEqual(SH.user_ns["Counted"].calls, before,
                         "a __len__, __getitem__, __iter__, __repr__, __array__, property or __getattr__ ran")
        self.assertEqual(fh.tell(), pos, "a file handle moved")

    def test_rngs_unchanged(self):
        ns = SH.user_ns
        states = [ns["rng_py"].getstate()]
        if has("numpy"):
            states.append(repr(ns["rng_np"].bit_generator.state))
        if has("torch"):
            states.append(ns["rng_t"].get_state().tolist())
        inspect(self.names())
        after = [ns["rng_py"].getstate()]
        if has("numpy"):
            after.append(repr(ns["rng_np"].bit_generator.state))
        if has("torch"):
            after.append(ns["rng_t"].get_state().tolist())
        self.assertEqual(states, after)

    def test_cannot_tell_is_not_missing(self):
        vals = inspect(self.names())["values"]
        for name in ("counted.nothing", "deleg.params", "deleg.nope", "lazy.unloaded", "counted.prop"):
            self.assertTrue(vals[name]["exists"], name + " must be 'cannot tell', not missing")
            self.assertIn("not", vals[name]["error"], name)
        self.assertTrue(vals["deleg"].get("dynamic"))
        self.assertFalse(vals["deleg"].get("attributes_complete"))
        self.assertTrue(vals["counted"].get("dynamic"))
        self.assertTrue(vals["lazy"].get("dynamic"))
        self.assertEqual(vals["lazy.loaded"]["repr"], "1")
        self.assertEqual(vals["slotted.a"]["kind"], "int")
        self.assertFalse(vals["slotted.b"]["exists"], "an unset __slots__ entry is certainly missing")
        self.assertFalse(vals["slotted.c"]["exists"])
        if has("torch"):
            self.assertEqual(vals["cnet.fc"]["kind"], "nn_module")
            self.assertFalse(vals["cnet.nope"]["exists"], "torch's __getattr__ is read from its registries")
            self.assertTrue(vals["cnet.extra"]["exists"])
            self.assertEqual(vals["cnet"]["module"]["parameters"], 9)
            self.assertEqual(vals["cds"]["kind"], "dataset")
            self.assertNotIn("len", vals["cds"])
        if has("sklearn"):
            self.assertTrue(vals["myest.predict_proba"]["exists"])
            self.assertIn("predict_proba", vals["myest"]["estimator"]["methods"])
            self.assertFalse(vals["myest"]["estimator"]["fitted"])
            self.assertTrue(vals["mypipe.predict_proba"]["exists"], "a user step decides: cannot tell")

    @unittest.skipUnless(has("scipy"), "scipy missing")
    def test_lazy_submodule_not_imported(self):
        code = r'''
import sys, types, json
from IPython.core.interactiveshell import InteractiveShell
sh = InteractiveShell.instance()
m = types.ModuleType("_premortem_inspector")
exec(compile(%r, "<premortem-inspector>", "exec"), m.__dict__)
sh.run_cell("import scipy")
before = set(sys.modules)
r = json.loads(repr(m.inspect(["scipy.stats", "scipy.stats.norm.cdf", "scipy"], 50, True, True)))
print(json.dumps([len(set(sys.modules) - before), r["values"]["scipy.stats.norm.cdf"]["exists"]]))
''' % module_source()
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(code)
        try:
            out = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=120)
        finally:
            os.unlink(f.name)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout.strip().splitlines()[-1]), [0, True])


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=2)
