"""Tests of the fast dev run (25_devrun.py): the AST transform keeps line numbers exact, the
capped child says which loops were shortened, and a crash is likely only when its line
reads what a shortened loop produced. In-process IPython shell, real forks.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_devrun.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import json
import os
import sys
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]  # IPython's InteractiveShell replaces sys.modules["__main__"]

from test_inspector import M, SH  # noqa: E402  (the module as kernelclient embeds it)


def run(code, cap=3, timeout=5.0, full=20.0):
    """Starts a shadow run group; returns (the full run's result, the capped run's result)."""
    r = json.loads(repr(M.shadow(code, timeout, False, 0, full_timeout_s=full, devrun_cap=cap)))
    out = []
    for tok in (r["token"], r.get("devrun_token")):
        if tok is None:
            out.append(None)
            continue
        deadline = time.monotonic() + full + 10
        res = json.loads(repr(M.shadow_result(tok)))
        while res["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.005)
            res = json.loads(repr(M.shadow_result(tok)))
        out.append(res)
    return out[0], out[1]


class DevRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SH.run_cell("import numpy as np\nitems = list(range(1000))", store_history=True).raise_error()

    def test_no_loops_no_capped_child(self):
        full, capped = run("x = 1\ny = x + undefined_q")
        self.assertIsNone(capped)
        self.assertEqual((full["status"], full["line"]), ("error", 2))

    def test_shortening_invents_a_crash_the_full_run_withdraws(self):
        code = "losses = []\nfor i in range(100):\n    losses.append(i)\nlast = losses[99]"
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "IndexError", 4))
        d = capped["devrun"]
        self.assertTrue(d["shortened"] and d["likely"])
        self.assertEqual(d["reads"], ["losses"])
        self.assertEqual(d["loops"], [{"line": 2, "kind": "for", "header": "i in range(100)", "entries": 1, "ran": 3,
                                       "shortened": True, "total": 100, "last": True}])

    def test_crash_in_first_iteration_is_confirmed_and_lines_exact(self):
        code = "total = 0\n# comment\nfor a, b in zip(items,\n                items):\n    total += a\n    bad = b['x']\n"
        _, capped = run(code)
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "TypeError", 6))
        d = capped["devrun"]
        self.assertFalse(d["shortened"])
        self.assertNotIn("likely", d)
        self.assertEqual(d["loops"][0]["header"], "a, b in zip(items, items)")

    def test_crash_after_loop_reading_other_state_is_confirmed(self):
        code = "acc = []\nfor v in items:\n    acc.append(v)\nw = np.ones((3, 4)) @ np.ones((3, 4))"
        _, capped = run(code)
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "ValueError", 4))
        d = capped["devrun"]
        self.assertTrue(d["shortened"])
        self.assertNotIn("likely", d)

    def test_taint_flows_through_assignments_and_functions(self):
        code = ("def collect(n):\n    out = []\n    k = 0\n    while k < n:\n        out.append(k)\n        k += 1\n    return out\n"
                "hist = collect(50)\nm = max(hist)\nassert m == 49, m\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "AssertionError", 10))
        d = capped["devrun"]
        self.assertTrue(d["likely"])
        self.assertEqual(d["reads"], ["m"])
        self.assertEqual(d["loops"][0], {"line": 4, "kind": "while", "header": "k < n", "entries": 1, "ran": 3, "shortened": True})
        # run again at full size, `hist = collect(50)` would shorten the same loop again
        self.assertEqual(d["full_size"]["verdict"], "unknown", d)
        _, capped = run(code.replace("m = max(hist)\nassert m == 49, m\n", "m = hist[49]\n"))
        self.assertEqual((capped["status"], capped["exception"]), ("error", "IndexError"))
        self.assertEqual(capped["devrun"]["full_size"]["verdict"], "unknown", capped["devrun"])
        self.assertIn("calling a function whose loops were shortened", capped["devrun"]["full_size"]["reason"])

    def test_state_a_called_function_mutates_is_the_loops_product(self):
        code = ("seen = []\ndef step(v):\n    seen.append(v)\n\nfor v in range(40):\n    step(v)\nlast = seen[39]\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "IndexError", 7))
        self.assertTrue(capped["devrun"]["likely"])
        self.assertEqual(capped["devrun"]["reads"], ["seen"])

    # Crash/clean twins that differ only in what a loop produces: a crash on a line that reads
    # the shortened loops' products counts only when it happens again at full sizes.
    CURVE = ("EPOCHS = 20\nbatches = list(range(50))\nlosses = []\nfor epoch in range(EPOCHS):\n"
             "    for b in batches:\n        loss = 0.5\n{per_batch}    {per_epoch}\n"
             "xs = np.arange(1, EPOCHS + 1)\nassert xs.shape == np.asarray(losses).shape, (xs.shape, len(losses))\n")

    def test_per_epoch_list_at_full_size_runs_clean(self):
        code = self.CURVE.format(per_batch="", per_epoch="losses.append(loss)")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "AssertionError", 9))
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "clean", fs)
        self.assertEqual(fs["sizes"], ["losses: 3 in the capped run, 20 at full length"])

    def test_per_batch_list_at_full_size_still_crashes(self):
        code = self.CURVE.format(per_batch="        losses.append(loss)\n", per_epoch="pass")
        full, capped = run(code)
        self.assertEqual((full["status"], full["exception"]), ("error", "AssertionError"))
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "crash", fs)
        self.assertEqual(fs["sizes"], ["losses: 12 in the capped run, 1000 at full length"])

    def test_per_epoch_list_between_two_inner_loops(self):
        # a loss per epoch appended after the training batches and before the validation
        # ones: between the inner loops' iterations the list has an offset of its own
        code = ("EPOCHS = 20\nlosses = []\nfor epoch in range(EPOCHS):\n    for b in range(50):\n        loss = 0.5\n"
                "    losses.append(loss)\n    for v in range(10):\n        acc = 1.0\n"
                "xs = np.arange(1, EPOCHS + 1)\nassert xs.shape == np.asarray(losses).shape, (xs.shape, len(losses))\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "clean", fs)
        self.assertEqual(fs["sizes"], ["losses: 3 in the capped run, 20 at full length"])

    def test_a_module_is_no_product_of_a_loop(self):
        # `with torch.no_grad()` in the loop reads as a call that changes torch; a line after
        # the loop that builds a value from torch alone reads nothing the loop made
        SH.run_cell("import torch", store_history=False).raise_error()
        code = ("acc = []\nfor i in range(30):\n    with torch.no_grad():\n        acc.append(i)\n"
                "t = torch.zeros(3, 4)\nu = t @ torch.zeros(3, 4)\n")
        _, capped = run(code)
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "RuntimeError", 6))
        self.assertFalse(capped["devrun"].get("likely"), capped["devrun"])

    def test_derived_value_is_replayed_at_full_size(self):
        code = ("acc = []\nfor i in range(30):\n    acc.append(i * 2)\narr = np.array(acc)\nv = arr[29]\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        self.assertEqual(capped["devrun"]["full_size"]["verdict"], "clean", capped["devrun"])

    def test_unknown_length_is_never_extrapolated(self):
        code = ("acc = []\nfor v in (i for i in range(30)):\n    acc.append(v)\nlast = acc[29]\n")
        _, capped = run(code)
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "unknown", fs)
        self.assertIn("length of the iterable", fs["reason"])

    def test_reset_per_epoch_is_not_linear(self):
        code = ("for epoch in range(10):\n    cur = []\n    for b in range(40):\n        cur.append(b)\nlast = cur[39]\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "unknown", fs)
        self.assertIn("made inside the loops", fs["reason"])

    def test_library_work_is_shortened_in_the_capped_child_only(self):
        SH.run_cell("import pandas as pd\nfrom sklearn.model_selection import GridSearchCV\n"
                    "from sklearn.ensemble import RandomForestClassifier\n"
                    "Xg = pd.DataFrame(np.random.RandomState(0).rand(200, 6), columns=list('abcdef'))\n"
                    "yg = (Xg.a > .5).astype(int)", store_history=False).raise_error()
        fit = "gs = GridSearchCV(RandomForestClassifier(n_estimators=200), {'max_depth': [2, 3, 4], 'min_samples_leaf': [1, 2]}, cv=5)\ngs.fit(Xg, yg)\n"
        full, capped = run(fit + "p = gs.predict(Xg.drop(columns=['f']))\n")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "ValueError", 3))
        d = capped["devrun"]
        self.assertTrue(d["shortened"])
        self.assertNotIn("likely", d)  # the fitted features are the full run's: confirmed
        self.assertEqual(d["library"], ["GridSearchCV.fit: 1 of 6 candidates, cv 5 -> 2"])
        full, capped = run(fit + "p = gs.predict(Xg)\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertTrue(capped["devrun"]["shortened"])
        self.assertNotIn("library_unsure", capped["devrun"])  # the structure-keeping table alone: it stands
        self.assertNotIn("devrun", full)
        self.assertEqual(SH.user_ns["GridSearchCV"].fit.__name__, "fit")
        self.assertFalse(hasattr(SH.user_ns["GridSearchCV"].fit, "__wrapped__"))  # the kernel is untouched

    def test_clean_library_runs_that_do_not_stand_for_the_full_run(self):
        SH.run_cell("import pandas as pd, warnings\nfrom sklearn.model_selection import GridSearchCV, cross_val_score\n"
                    "from sklearn.linear_model import LogisticRegression\n"
                    "Xu = pd.DataFrame(np.random.RandomState(1).rand(120, 4), columns=list('abcd'))\n"
                    "yu = (Xu.a > .5).astype(int)", store_history=False).raise_error()
        grid = "GridSearchCV(LogisticRegression(), {'C': [0.1, 1, 10]}, cv=4%s)"
        cases = [
            # the skipped candidates are never fitted, and one of them may raise
            ("gs = %s\ngs.fit(Xu, yu)\n" % (grid % ", error_score='raise'"), "error_score='raise'"),
            # the full run's warnings are errors; the shortened run's differ
            ("warnings.simplefilter('error')\ngs = %s\ngs.fit(Xu, yu)\nwarnings.resetwarnings()\n" % (grid % ""),
             "warnings are raised as errors"),
            # a loop over what the shortened work produced: one candidate, not three
            ("gs = %s\ngs.fit(Xu, yu)\nfor p in gs.cv_results_['params']:\n    q = p\n" % (grid % ""),
             "the loop at line 3 started after"),
        ]
        for code, want in cases:
            with self.subTest(want=want):
                full, capped = run(code)
                self.assertEqual((full["status"], capped["status"]), ("ok", "ok"), (full, capped))
                self.assertTrue(capped["devrun"]["library"])
                self.assertTrue(any(want in u for u in capped["devrun"].get("library_unsure", [])), capped["devrun"])
        # a loop that ran before the shortened work does not make it unsure
        full, capped = run("for c in ['a']:\n    Xu[c] = Xu[c] * 1\ngs = %s\ngs.fit(Xu, yu)\n" % (grid % ""))
        self.assertEqual(capped["status"], "ok")
        self.assertNotIn("library_unsure", capped["devrun"])

    def test_full_folds_that_fail_are_not_shortened(self):
        SH.run_cell("from sklearn.model_selection import cross_val_score\nfrom sklearn.linear_model import LogisticRegression\n"
                    "Xs = np.random.RandomState(2).rand(4, 3)\nys = np.array([0, 1, 0, 1])", store_history=False).raise_error()
        # 5 folds of 4 samples raise in the full run; 2 folds would not
        full, capped = run("s = cross_val_score(LogisticRegression(), Xs, ys, cv=5)\n")
        self.assertEqual((full["status"], full["exception"]), ("error", "ValueError"))
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "ValueError", 1))
        self.assertNotIn("library", capped["devrun"])
        # the same for a search: its folds are made before its cv is lowered
        SH.run_cell("from sklearn.model_selection import GridSearchCV", store_history=False).raise_error()
        full, capped = run("g = GridSearchCV(LogisticRegression(), {'C': [1, 10]}, cv=5)\ng.fit(Xs, ys)\n")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "ValueError", 2))
        self.assertNotIn("library", capped["devrun"])

    def test_products_read_through_a_function_are_not_extrapolated(self):
        code = ("acc = []\nfor i in range(30):\n    acc.append(i)\ndef show():\n    return acc[29]\nv = show()\n")
        full, capped = run(code)
        self.assertEqual(full["status"], "ok")
        fs = capped["devrun"]["full_size"]
        self.assertEqual(fs["verdict"], "unknown", fs)

    def test_a_column_set_from_a_loop_is_rechecked_at_full_size(self):
        # `frame["w"] = vals` reads frame but does not make it a product of the loop for
        # itself: vals alone is put at its full size, and the statement runs again
        SH.run_cell("import pandas as pd\nframe = pd.DataFrame({'v': range(50)})", store_history=False).raise_error()
        for stop, status, verdict in (("len(frame)", "ok", "clean"), ("len(frame) - 1", "error", "crash")):
            code = "vals = []\nfor i in range(%s):\n    vals.append(i * 2)\nframe['w'] = vals\n" % stop
            full, capped = run(code)
            self.assertEqual(full["status"], status)
            self.assertEqual((capped["status"], capped["line"]), ("error", 4))
            fs = capped["devrun"]["full_size"]
            self.assertEqual(fs["verdict"], verdict, fs)

    def test_last_item_runs_after_the_cap(self):
        # x[i + 1] at the last i: the capped run meets the full run's crash in the loop's
        # last item, on a line that reads only the item and what the loop does not change
        for code in ("for i in range(len(items)):\n    d = items[i + 1] - items[i]\n",
                     "for j, v in enumerate(items):\n    d = items[j + 1] - v\n",
                     # the list the body appends to is carried over, but what raised is the
                     # subscript inside the argument, which reads only i and items
                     "deltas = []\nfor i in range(len(items)):\n    deltas.append(items[i + 1] - items[i])\n"):
            full, capped = run(code)
            line = code.count("\n")
            self.assertEqual((full["status"], full["exception"], full["line"]), ("error", "IndexError", line))
            self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "IndexError", line), code)
            d = capped["devrun"]
            self.assertFalse(d.get("likely"), d)
            self.assertEqual(d["last_item"]["total"], 1000)
            self.assertTrue(d["loops"][0]["last"])
        # the twin that stops one short runs its last item clean
        full, capped = run("for i in range(len(items) - 1):\n    d = items[i + 1] - items[i]\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertTrue(capped["devrun"]["shortened"])

    def test_last_item_on_carried_state_is_not_confirmed(self):
        # acc[i] at i = 999 fails in the capped run only because the skipped iterations
        # did not append: it reads what the loop carries over, so it is likely, not a crash
        full, capped = run("acc = []\nfor i in range(1000):\n    acc.append(i)\n    v = acc[i]\n")
        self.assertEqual(full["status"], "ok")
        self.assertEqual((capped["status"], capped["exception"]), ("error", "IndexError"))
        d = capped["devrun"]
        self.assertTrue(d["likely"])
        self.assertEqual(d["full_size"]["verdict"], "unknown")
        self.assertIn("acc", d["reads"])

    def test_no_last_item_for_a_loop_that_may_break(self):
        # the full run leaves at i == 10 and never meets i == 999
        full, capped = run("for i in range(1000):\n    if i == 10:\n        break\n    y = 10 // (999 - i)\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertFalse(capped["devrun"]["loops"][0].get("last"))

    def test_last_batch_of_a_data_loader(self):
        SH.run_cell("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                    "loader = DataLoader(TensorDataset(torch.zeros(1050, 3)), batch_size=100, shuffle=True)",
                    store_history=False).raise_error()
        full, capped = run("for (xb,) in loader:\n    z = xb.view(100, 3)\n")
        self.assertEqual((full["status"], full["exception"]), ("error", "RuntimeError"))
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "RuntimeError", 2))
        self.assertFalse(capped["devrun"].get("likely"), capped["devrun"])
        full, capped = run("for (xb,) in loader:\n    z = xb.view(-1, 3)\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))

    def test_slow_iterations_are_cut_before_the_budget_ends(self):
        # one second an iteration, a 3 s budget: the cap of 3 would overrun it, so the loop
        # is cut after 2 (and its last item skipped), and the line after it still answers
        code = "import time\nfor i in range(100):\n    time.sleep(1.0)\nx = undefined_after_loop\n"
        full, capped = run(code, timeout=3.0, full=4.0)
        self.assertEqual(full["status"], "timeout")
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "NameError", 4))
        loop = capped["devrun"]["loops"][0]
        self.assertEqual((loop["ran"], loop.get("last")), (2, None), loop)
        self.assertFalse(capped["devrun"].get("likely"))

    def test_loop_over_a_few_items_runs_whole_while_there_is_time(self):
        # four models, one cheap iteration each: past the cap the loop goes on to its end
        full, capped = run("res = {}\nfor name in ['a', 'b', 'c', 'd']:\n    res[name] = len(name)\nv = res['d']\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertFalse(capped["devrun"]["shortened"], capped["devrun"])
        self.assertEqual(capped["devrun"]["loops"][0]["ran"], 4)
        # slow iterations: two more would not fit in half the budget, so the cap cuts it;
        # the last item still runs, so res['e'] is there as in the full run
        full, capped = run("import time\nres = {}\nfor name in ['a', 'b', 'c', 'd', 'e']:\n    time.sleep(0.4)\n"
                           "    res[name] = 1\nv = res['e']\n", timeout=3.0, full=20.0)
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertTrue(capped["devrun"]["shortened"])
        self.assertEqual(capped["devrun"]["loops"][0]["ran"], 3)
        self.assertTrue(capped["devrun"]["loops"][0]["last"])
        # many items: the cap holds however cheap the iterations are
        full, capped = run("acc = []\nfor i in range(9):\n    acc.append(i)\n")
        self.assertTrue(capped["devrun"]["shortened"])

    # A clean capped run stands for the full run (loops_stand) only when the cut loops go over
    # items of one make and ran their last items, every line of them ran, and the lines
    # after them run clean with what the loops made at its full size.
    def test_clean_capped_run_stands_for_the_full_run(self):
        code = ("EPOCHS = 20\nlosses = []\nfor epoch in range(EPOCHS):\n    for b in range(50):\n        loss = 0.5 * b\n"
                "    losses.append(loss)\nbest = min(losses)\ncurve = list(zip(range(1, EPOCHS + 1), losses))\n"
                "print(f'best {best:.2f}', len(curve))\n")
        full, capped = run(code)
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        d = capped["devrun"]
        self.assertTrue(d["shortened"])
        self.assertTrue(d.get("loops_stand"), d)
        self.assertNotIn("loops_unsure", d)
        # the DataLoader's batches, the last smaller one included
        SH.run_cell("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
                    "loader2 = DataLoader(TensorDataset(torch.zeros(1050, 3)), batch_size=100, shuffle=True)",
                    store_history=False).raise_error()
        full, capped = run("tot = 0\nfor i, (xb,) in enumerate(loader2):\n    tot += xb.view(-1, 3).shape[0]\nprint(tot)\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertTrue(capped["devrun"].get("loops_stand"), capped["devrun"])

    def test_folds_of_a_splitter_have_a_length_and_a_last_fold(self):
        # ten folds of 1005 rows: the first five hold 101 test rows, the last five 100
        SH.run_cell("from sklearn.model_selection import KFold\nXf = np.arange(1005.0)\nkf10 = KFold(10)",
                    store_history=False).raise_error()
        full, capped = run("scores = []\nfor fold, (tr, te) in enumerate(kf10.split(Xf)):\n    scores.append(Xf[te].mean())\n"
                           "res = np.array(scores)\nprint(res.mean())\n")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        loop = capped["devrun"]["loops"][0]
        self.assertEqual((loop["ran"], loop.get("total"), loop.get("last")), (3, 10, True), loop)
        self.assertTrue(capped["devrun"].get("loops_stand"), capped["devrun"])
        # the last fold is the smaller one: a body sized for the first folds fails there
        full, capped = run("for tr, te in kf10.split(Xf):\n    piece = np.zeros(101)\n    piece[:] = Xf[te]\n")
        self.assertEqual((full["status"], full["exception"]), ("error", "ValueError"))
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "ValueError", 3))
        # the splitter's own error is the loop's, at the for line, in both runs
        full, capped = run("for tr, te in KFold(20).split(Xf[:10]):\n    pass\n")
        self.assertEqual((full["exception"], full["line"]), ("ValueError", 1))
        self.assertEqual((capped["exception"], capped["line"]), ("ValueError", 1))
        # a loop that may break takes the splitter as it is: no length, no last fold
        full, capped = run("for tr, te in kf10.split(Xf):\n    if len(te) < 50:\n        break\n")
        self.assertEqual(capped["status"], "ok")
        self.assertFalse(capped["devrun"].get("loops_stand"))
        self.assertIsNone(capped["devrun"]["loops"][0].get("total"))

    def test_clean_capped_runs_that_do_not_stand(self):
        cases = [
            # a branch the first iterations and the last one never took
            ("for epoch in range(20):\n    if epoch == 10:\n        z = 1\n", "line 3 never ran"),
            # a statement after a continue the capped iterations always took
            ("for i in range(30):\n    if i % 10 != 5:\n        continue\n    w = i\n", "line 4 never ran"),
            # items of different makes: the skipped ones may be the ones that fail
            ("vals = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']\nfor v in vals:\n    n = int(v)\n",
             "goes over vals"),
            ("k = 0\nwhile k < 50:\n    k += 1\n", "while loop at line 2"),
            # clean at the capped size, not at the full one: 30 values into 10 slots
            ("acc = []\nfor i in range(30):\n    acc.append(i)\nbuf = np.zeros(10)\nbuf[:len(acc)] = acc\n",
             "line 5 raises ValueError"),
            # a branch after the loops on what they made
            ("acc = []\nfor i in range(30):\n    acc.append(i)\nif len(acc) > 20:\n    print('long')\n",
             "line 4 decides on acc"),
            ("acc = []\nfor i in range(30):\n    acc.append(i)\nassert len(acc) < 20\n", "line 4 tests acc"),
            # a loop that may leave early has no last item
            ("for i in range(100):\n    if i == 50:\n        break\n", "not its last one"),
        ]
        for code, why in cases:
            full, capped = run(code)
            self.assertEqual(capped["status"], "ok", code)
            d = capped["devrun"]
            self.assertTrue(d["shortened"], code)
            self.assertFalse(d.get("loops_stand"), code)
            self.assertIn(why, " ".join(d.get("loops_unsure") or []), (code, d))

    def test_loops_in_a_function_of_an_earlier_cell_are_capped(self):
        # the slow loops live in a function an earlier cell defined; the cell that calls it
        # has no loop of its own
        SH.run_cell("import time\ndef train_epochs(n):\n    hist = []\n    for e in range(n):\n        for b in range(200):\n"
                    "            time.sleep(0.001)\n        hist.append(e)\n    return hist\n"
                    "def run_all(n):\n    return train_epochs(n)\n", store_history=True).raise_error()
        full, capped = run("h = run_all(1000)\nbad = undefined_after_training\n", timeout=3.0, full=1.0)
        self.assertEqual(full["status"], "timeout", full)
        self.assertEqual((capped["status"], capped["exception"], capped["line"]), ("error", "NameError", 2))
        d = capped["devrun"]
        self.assertTrue(d["shortened"])
        self.assertFalse(d.get("likely"), d)
        self.assertEqual([(l["func"], l["line"], l["shortened"]) for l in d["loops"]],
                         [("train_epochs", 4, True), ("train_epochs", 5, True)])
        # what it returns is what the shortened loops made: a crash on it is likely, and
        # not extrapolated through a function
        _, capped = run("h = run_all(1000)\nlast = h[999]\n", timeout=2.0, full=2.0)
        self.assertEqual((capped["status"], capped["exception"]), ("error", "IndexError"))
        self.assertTrue(capped["devrun"]["likely"])
        self.assertEqual(capped["devrun"]["full_size"]["verdict"], "unknown")
        # a clean run with its loops cut there does not stand for the full one
        _, capped = run("h = run_all(1000)\nn = len(h)\n", timeout=2.0, full=2.0)
        self.assertEqual(capped["status"], "ok")
        self.assertFalse(capped["devrun"].get("loops_stand"))
        self.assertIn("which an earlier cell defined", " ".join(capped["devrun"]["loops_unsure"]))
        # the kernel's function keeps its code
        self.assertEqual(SH.user_ns["train_epochs"].__code__.co_filename, SH.user_ns["run_all"].__code__.co_filename)
        self.assertNotIn("_premortem_inspector", SH.user_ns["train_epochs"].__code__.co_consts)

    def test_loop_within_cap_runs_whole_cell(self):
        full, capped = run("s = 0\nfor c in [1, 2]:\n    s += c\nassert s == 3")
        self.assertEqual((full["status"], capped["status"]), ("ok", "ok"))
        self.assertFalse(capped["devrun"]["shortened"])

    def test_peek_stops_at_cap_plus_one(self):
        SH.run_cell("pulled = []\ndef gen():\n    for i in range(10):\n        pulled.append(i)\n        yield i",
                    store_history=False).raise_error()
        _, capped = run("seen = [x for x in []]\nfor x in gen():\n    pass\nprint(len(pulled))\n")
        self.assertEqual(capped["status"], "ok")
        self.assertEqual(capped["stdout"].strip(), "4")  # 3 iterations and one peek
        self.assertEqual(SH.user_ns["pulled"], [])  # the user's generator state is untouched

    def test_siblings_survive_and_a_new_run_kills_both(self):
        r = json.loads(repr(M.shadow("for i in range(10**9):\n    pass", 5.0, False, 0, full_timeout_s=30.0, devrun_cap=3)))
        self.assertIn("devrun_token", r)
        capped = r["devrun_token"]
        deadline = time.monotonic() + 10
        res = json.loads(repr(M.shadow_result(capped)))
        while res["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.005)
            res = json.loads(repr(M.shadow_result(capped)))
        self.assertEqual(res["status"], "ok")  # the capped sibling finished; the full run goes on
        self.assertEqual(json.loads(repr(M.shadow_result(r["token"])))["status"], "running")
        M.shadow("x = 1", 5.0, False, 0, full_timeout_s=0, devrun_cap=0)
        deadline = time.monotonic() + 5
        while json.loads(repr(M.shadow_result(r["token"])))["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(json.loads(repr(M.shadow_result(r["token"])))["status"], "died")


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=1)
