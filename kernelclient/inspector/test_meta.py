"""Tests of the meta shadow run (36_meta.py): the child replaces tensors by meta ones that
remember their device, finds shape, stride, dtype and device errors on them, marks the
values it does not have as placeholders, and never makes a CUDA call. In-process IPython
shell, real forks.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_meta.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import json
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import M, SH  # noqa: E402  (the module as kernelclient embeds it)


def run(code, tensors="meta", timeout=20.0):
    r = json.loads(repr(M.shadow(code, timeout, False, 0, tensors=tensors)))
    deadline = time.monotonic() + timeout + 10
    while r["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.005)
        r = json.loads(repr(M.shadow_result(r["token"])))
    return r


SETUP = r'''
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, Dataset
torch.manual_seed(0)
device = torch.device("cuda")
X = torch.randn(64, 8)
y = torch.randint(0, 3, (64,))
Xf = torch.randn(64, 8, dtype=torch.float64)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
out = model(X)
nn.functional.cross_entropy(out, y).backward()
opt.step()
loader = DataLoader(TensorDataset(X, y), batch_size=16)
class Pairs(Dataset):
    def __init__(self, a, b):
        self.a, self.b = a, b
    def __len__(self):
        return len(self.a)
    def __getitem__(self, i):
        return self.a[i], self.b[i]
pairs = Pairs(X, y)
held = {"w": torch.zeros(3, 4), "list": [torch.ones(2)], "tup": (torch.ones(5),)}
arr = np.arange(6.0)
def make_step(net, w):
    def step(xb, scale=torch.ones(1)):
        return net(xb) * scale + w
    return step
step = make_step(nn.Linear(8, 3), torch.zeros(3))
class Consts:
    mean = torch.zeros(8)
'''


class MetaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SH.run_cell(SETUP, store_history=False)

    def crash(self, code, exc, line, msg=None, tensors="meta"):
        r = run(code, tensors)
        self.assertEqual(r["status"], "error", r)
        self.assertEqual((r["exception"], r["line"]), (exc, line), r)
        if msg is not None:
            self.assertIn(msg, r["message"])
        self.assertIn("meta", r, r)
        self.assertEqual(r["meta"]["cuda_calls"], 0, r)
        self.assertFalse(r["meta"].get("value_dependent"), r)
        return r

    def clean(self, code):
        r = run(code)
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual(r["meta"]["cuda_calls"], 0, r)
        return r

    def test_the_kernel_keeps_its_real_tensors(self):
        before = SH.user_ns["X"]
        self.clean("X.add_(1)\nmodel[0].weight.data.zero_()")
        self.assertIs(SH.user_ns["X"], before)
        self.assertNotEqual(type(SH.user_ns["X"]).__name__, "_MetaT")
        self.assertEqual(SH.user_ns["X"].device.type, "cpu")
        self.assertNotEqual(float(SH.user_ns["model"][0].weight.abs().sum()), 0.0)

    def test_shape_error_in_a_training_loop(self):
        code = ("model = model.to(device)\nfor epoch in range(20):\n    for xb, yb in loader:\n"
                "        xb, yb = xb.to(device), yb.to(device)\n        out = model(xb[:, :7])\n"
                "        loss = nn.functional.cross_entropy(out, yb)\n")
        self.crash(code, "RuntimeError", 5, "mat1 and mat2 shapes cannot be multiplied (16x7 and 8x16)")

    def test_clean_training_loop_marks_its_placeholders(self):
        # (the optimizer's state is on the CPU since its first step: no move to the GPU here,
        # which would be the real "found at least two devices" crash)
        code = ("model.train()\nlosses = []\nfor epoch in range(20):\n    for xb, yb in loader:\n"
                "        xb, yb = xb.to('cpu'), yb.to('cpu')\n        loss = nn.functional.cross_entropy(model(xb), yb)\n"
                "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n        losses.append(loss.item())\n"
                "print(f'{sum(losses) / len(losses):.3f}')\n")
        r = self.clean(code)
        m = r["meta"]
        self.assertGreater(m["converted"], 10, m)  # X, y, parameters, optimizer state
        self.assertGreater(m["placeholders"], 0, m)
        self.assertTrue(any(".item()" in k for k in m["placeholder_uses"]), m)

    def test_device_mismatch_is_torchs_own_error(self):
        self.crash("model.to(device)\nxb = X[:4]\nout = model(xb)", "RuntimeError", 3,
                   "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")

    def test_cuda_factories_and_methods_give_the_remembered_device(self):
        code = ("a = torch.zeros(3, 4, device='cuda')\nb = torch.randn(4, 2).cuda()\nc = X.to('cuda:0')\n"
                "assert a.device == torch.device('cuda', 0) and a.is_cuda, a.device\nassert b.device.type == 'cuda'\n"
                "assert c.shape == (64, 8) and c.dtype == torch.float32\nd = a @ b\nassert d.shape == (3, 2)\n"
                "e = d.cpu()\nassert e.device.type == 'cpu'\n")
        self.clean(code)

    def test_cnn_trains_on_meta_tensors(self):
        self.clean("net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),\n"
                   "                    nn.Linear(4 * 4 * 4, 3))\nopt2 = torch.optim.Adam(net.parameters())\n"
                   "loss = nn.functional.cross_entropy(net(X.reshape(8, 1, 8, 8)), y[:8])\nloss.backward()\nopt2.step()\n"
                   "assert net[0].weight.grad.shape == net[0].weight.shape\n")

    def test_view_after_permute_is_the_stride_error(self):
        self.crash("x = X.reshape(8, 8, 8).permute(0, 2, 1)\ny2 = x.view(64, 8)", "RuntimeError", 2,
                   "view size is not compatible with input tensor's size and stride")

    def test_dtype_checks_the_meta_kernels_skip(self):
        for code, msg in (
                ("out = model(X)\nloss = nn.functional.cross_entropy(out, y.float())", "expected scalar type Long but found Float"),
                ("out = model(X)\nloss = model(Xf)", "mat1 and mat2 must have the same dtype"),
                ("w = torch.randn(8, 2)\nz = Xf @ w", "expected scalar type Double but found Float"),
                ("emb = nn.Embedding(10, 4)\nz = emb(X)", "Expected tensor for argument #1 'indices'")):
            with self.subTest(code=code):
                self.crash(code, "RuntimeError", 2, msg)

    def test_conv_error_has_the_real_message(self):
        self.crash("conv = nn.Conv2d(1, 4, 3)\nz = conv(X.reshape(4, 2, 8, 8))", "RuntimeError", 2,
                   "expected input[4, 2, 8, 8] to have 1 channels")

    def test_containers_datasets_and_optimizer_state_are_converted(self):
        code = ("for t in (held['w'], held['list'][0], held['tup'][0], pairs.a, loader.dataset.tensors[0]):\n"
                "    assert type(t).__name__ == '_MetaT', type(t)\n"
                "for group in opt.param_groups:\n    for p in group['params']:\n"
                "        assert type(p).__name__ == '_MetaT' and isinstance(p, nn.Parameter)\n"
                "        assert opt.state[p]['exp_avg'].shape == p.shape\n"
                "assert model[0].weight is opt.param_groups[0]['params'][0]\n"
                "assert model[0].weight.requires_grad and model[0].weight.grad is not None\n"
                "assert type(arr).__name__ == 'ndarray' and arr[5] == 5.0\n")
        self.clean(code)

    def test_closures_defaults_and_class_attributes_are_converted(self):
        code = ("cells = [c.cell_contents for c in step.__closure__]\n"
                "assert type(cells[0].weight).__name__ == '_MetaT', [type(c) for c in cells]\n"
                "assert any(type(c).__name__ == '_MetaT' for c in cells)\n"
                "assert type(step.__defaults__[0]).__name__ == '_MetaT'\n"
                "assert type(Consts.mean).__name__ == '_MetaT'\n"
                "z = step(X - Consts.mean)\nassert z.shape == (64, 3)\n")
        self.clean(code)
        self.crash("z = step(X[:, :5])", "RuntimeError", 1, "mat1 and mat2 shapes cannot be multiplied")

    def test_placeholders(self):
        code = ("v = X.sum().item()\nb = bool(X[0, 0] > 0)\nl = X[:2, :2].tolist()\nn = X.numpy()\n"
                "assert n.shape == (64, 8)\nassert len(l) == 2 and len(l[0]) == 2\n")
        r = self.clean(code)
        kinds = " ".join(r["meta"]["placeholder_uses"])
        for k in (".item() at line 1", "bool() of a tensor at line 2", ".tolist() at line 3", ".numpy() at line 4"):
            self.assertIn(k, kinds)

    def test_deepcopy_of_stand_ins(self):
        # torch's deepcopy asks for the data pointer, which stopped the run (a best-model copy
        # is in most training loops); the copies are stand-ins, parameters stay parameters
        code = ("import copy\nbest = copy.deepcopy(model.state_dict())\nm2 = copy.deepcopy(model)\n"
                "assert isinstance(m2[0].weight, nn.Parameter) and m2[0].weight is not model[0].weight\n"
                "out = m2(X)\nmodel.load_state_dict(best)\n")
        self.clean(code)
        self.crash(code + "out2 = model(X[:, :5])\n", "RuntimeError", 7, "mat1 and mat2 shapes cannot be multiplied")
        self.crash("import copy\nz = copy.deepcopy(model(X))", "RuntimeError", 2,
                   "Only Tensors created explicitly by the user (graph leaves)")

    def test_format_of_a_tensor(self):
        r = self.clean("acc = (model(X).argmax(1) == y).float().mean()\nprint(f'acc {acc:.3f}')\n")
        self.assertIn(".item() at line 2", " ".join(r["meta"]["placeholder_uses"]))
        self.crash("s = f'{X:.3f}'", "TypeError", 1, "unsupported format string passed to Tensor.__format__")

    def test_item_of_many_values_is_the_real_error(self):
        self.crash("v = X.item()", "RuntimeError" if False else "ValueError", 1, "only one element tensors")

    def test_numpy_of_a_cuda_tensor_is_the_real_error(self):
        self.crash("z = X.to(device)\nn = z.numpy()", "TypeError", 2, "can't convert cuda:0 device type tensor to numpy")

    def test_crash_reading_a_placeholder_is_value_dependent(self):
        r = run("acc = (model(X).argmax(1) == y).float().mean().item()\nrate = {0: 'low'}[round(acc)]")
        self.assertEqual(r["status"], "error", r)
        self.assertTrue(r["meta"].get("value_dependent"), r)
        self.assertEqual(r["meta"]["reason"], "depends on tensor values the GPU holds")

    def test_crash_on_a_line_reading_no_placeholder_stays_a_crash(self):
        r = self.crash("v = X.sum().item()\nout = model(X[:, :3])", "RuntimeError", 2)
        self.assertGreater(r["meta"]["placeholders"], 0)

    def test_crash_hanging_on_a_branch_a_placeholder_took_is_value_dependent(self):
        # the comparison on a made-up accuracy is False, so best_state is never saved; for
        # real the branch is taken: the NameError is the meta run's, not the cell's
        code = ("best = 0.0\nfor epoch in range(3):\n    acc = (model(X).argmax(1) == y).float().mean().item()\n"
                "    if acc > best:\n        best = acc\n        best_state = model.state_dict()\n{}\n")
        r = run(code.format("model.load_state_dict(best_state)"))
        self.assertEqual(r["status"], "error", r)
        self.assertEqual(r["exception"], "NameError", r)
        self.assertTrue(r["meta"].get("value_dependent"), r)
        # a name no branch assigns stays a crash; so does a shape error outside the branch
        self.crash(code.format("model.load_state_dict(best_state_dict)"), "NameError", 7)
        self.crash(code.format("out = model(X[:, :3])"), "RuntimeError", 7, "mat1 and mat2 shapes")

    def test_data_dependent_indexing_stops_the_run_unknown(self):
        r = run("sel = X[X[:, 0] > 0]\nz = sel.shape[0]")
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("needs tensor values", r["reason"])
        self.assertEqual(r["meta"]["cuda_calls"], 0)

    def test_cuda_entry_points_raise_and_are_counted(self):
        r = run("import torch\ntorch.cuda.manual_seed(0)\nn = torch.cuda.device_count()\nm = torch.cuda.memory_allocated()")
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("torch.cuda.memory_allocated", r["reason"])
        self.assertEqual(r["meta"]["cuda_calls"], 1, r)

    def test_rnn_zero_hidden_state_and_batch_first_output(self):
        # nn.GRU makes its zero hidden state with device=x.device (a CPU tensor) and, with
        # batch_first, turns its output in place (transpose_): both must meet the stand-ins
        # as the real tensors do
        code = ("rnn = nn.GRU(8, 16, batch_first=True)\nhead = nn.Linear(16, 3)\n"
                "out, h = rnn(X.reshape(8, 8, 8))\nassert out.shape == (8, 8, 16), out.shape\n"
                "logits = head(out).reshape(-1, 3)\nloss = nn.functional.cross_entropy(logits, y)\nloss.backward()\n")
        self.clean(code)

    def test_backward_through_the_graph_a_second_time(self):
        # a hidden state carried across batches: the second backward reaches the first graph,
        # whose saved tensors are freed (meta tensors keep autograd graphs as real ones do)
        code = ("rnn = nn.GRU(8, 16, batch_first=True)\nh = None\nfor step in range(3):\n"
                "    out, h = rnn(X[step * 8:(step + 1) * 8].reshape(2, 4, 8), h)\n{}"
                "    loss = out.sum()\n    loss.backward()\n")
        self.crash(code.format(""), "RuntimeError", 6, "Trying to backward through the graph a second time")
        self.clean(code.format("    h = h.detach()\n"))

    def test_indices_the_cell_made_are_range_checked(self):
        code = ("vocab = {'a': 0, 'b': 1, 'c': 2}\nunk = len(vocab)\nemb = nn.Embedding(N, 4)\n"
                "ids = torch.tensor([[vocab.get(w, unk) for w in 'a b zz'.split()]])\nz = emb(ids)\n")
        self.crash(code.replace("N", "len(vocab)"), "IndexError", 5, "index out of range in self")
        self.clean(code.replace("N", "len(vocab) + 1"))

    def test_value_dependent_ops_stop_the_run_unknown(self):
        for code in ("p = torch.multinomial(torch.softmax(model(X), 1), 1)\n",
                     "oh = nn.functional.one_hot(y)\n",
                     "oh = nn.functional.one_hot(y.to(device))\n"):
            with self.subTest(code=code):
                r = run(code)
                self.assertEqual(r["status"], "refused", r)
                self.assertIn("meta shadow run stopped", r["reason"])
                self.assertEqual(r["meta"]["cuda_calls"], 0)

    def test_packed_sequences(self):
        # the packing kernel reads the lengths' values: real lengths are used, a stand-in's
        # stop the run unknown (before, a meta tensor's missing values read "<= 0": a false crash)
        code = ("from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence\n"
                "gru = nn.GRU(8, 4, batch_first=True)\nseqs = X[:24].reshape(3, 8, 8)\n"
                "p = pack_padded_sequence(seqs, LENGTHS, batch_first=True, enforce_sorted=False)\n"
                "out, h = gru(p)\no, n = pad_packed_sequence(out, batch_first=True)\nassert o.shape == (3, 8, 4), o.shape\n")
        self.clean(code.replace("LENGTHS", "[8, 5, 2]"))
        r = run(code.replace("LENGTHS", "y[:3] + 1"))
        self.assertEqual(r["status"], "refused", r)
        self.assertIn("needs the lengths' values", r["reason"])

    def test_real_mode_runs_real_tensors(self):
        r = run("v = X.sum().item()\nassert v == v", tensors="real")
        self.assertEqual(r["status"], "ok", r)
        self.assertNotIn("meta", r)

    def test_auto_on_a_cpu_kernel_is_real(self):
        r = run("out = model(X[:, :3])", tensors="auto")
        self.assertEqual(r["status"], "error", r)
        self.assertNotIn("meta", r)


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=1)
