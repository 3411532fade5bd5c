"""Tests of the fast dev run's library table (23_devlib.py): entry by entry, the shortened
call's result has the full call's structure (fitted features and their names, classes,
output shapes and dtypes, per-fold result lengths), the user's parameters are put back, the
evidence says what was shortened, and an exception only the shortened call raises is not
raised. In-process: the table's patches are switched on and off around the calls.

Run with Debian's Python: /usr/bin/python3 kernelclient/inspector/test_devlib.py
(`go test ./kernelclient/inspector/` runs it too).
"""

import os
import sys
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
THIS = sys.modules[__name__]

from test_inspector import M, SH, has  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def data(n=120, k=5, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(rng.rand(n, k), columns=["f%d" % i for i in range(k)])
    y = np.array(["c%d" % (i % classes) for i in range(n)])
    return X, y


def structure(est, X):
    """What later lines depend on: fitted features, classes, output shapes and dtypes."""
    out = {"n_features_in_": getattr(est, "n_features_in_", None),
           "feature_names_in_": list(getattr(est, "feature_names_in_", None) if getattr(est, "feature_names_in_", None)
                                     is not None else [])}
    if hasattr(est, "classes_"):
        out["classes_"] = list(est.classes_)
    for m in ("predict", "predict_proba", "decision_function", "transform", "score_samples"):
        if hasattr(est, m):
            try:
                r = np.asarray(getattr(est, m)(X))
            except Exception as e:  # noqa: BLE001 (some estimators lack a method for their settings)
                r = type(e).__name__
            out[m] = r if isinstance(r, str) else (r.shape, str(r.dtype))
    return out


class DevLibTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import sklearn.model_selection  # noqa: F401
        import sklearn.ensemble  # noqa: F401
        import sklearn.linear_model  # noqa: F401
        import sklearn.neural_network  # noqa: F401
        import sklearn.svm  # noqa: F401
        import sklearn.cluster  # noqa: F401
        if has("xgboost"):
            import xgboost  # noqa: F401
        M._dl_begin(SH.user_ns)
        M._DL["on"] = False

    def shortened(self, call):
        """call() with the table on; returns (result, what was shortened)."""
        M._DL.update(on=True, records={}, crashed_in=None, depth=0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return call(), M._dl_records()
        finally:
            M._DL["on"] = False

    def full(self, call):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()

    def test_every_params_entry_keeps_the_structure(self):
        X, y = data()
        yr = X["f0"].to_numpy() * 3
        for e in M._DL_TABLE:
            if e["kind"] != "params":
                continue
            if not has(e["mod"]):
                continue
            cls = getattr(sys.modules[e["mod"]] if e["mod"] in sys.modules else __import__(e["mod"], fromlist=["x"]),
                          e["name"])
            with self.subTest(entry=e["name"]):
                big = {p: v * 10 + 7 for p, v in e["set"].items()}
                target = y if "Classifier" in e["name"] or e["name"] in ("LogisticRegression", "Perceptron", "LinearSVC") else yr
                if e["name"] == "XGBClassifier":
                    target = (X["f0"] > .5).astype(int)
                full_est = self.full(lambda: cls(**big).fit(X, target))
                short_est, rec = self.shortened(lambda: cls(**big).fit(X, target))
                self.assertEqual(structure(short_est, X), structure(full_est, X))
                self.assertEqual({p: getattr(short_est, p) for p in big}, big)  # parameters put back
                self.assertEqual(len(rec), 1, rec)
                self.assertTrue(rec[0].startswith(e["name"] + ".fit: "), rec)

    def test_search_one_candidate_cv2_same_structure(self):
        from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
        from sklearn.linear_model import LogisticRegression
        from sklearn.ensemble import RandomForestClassifier

        X, y = data()
        grid = {"C": [0.01, 0.1, 1, 10], "fit_intercept": [True, False], "tol": [1e-4, 1e-3, 1e-2]}
        mk = lambda: GridSearchCV(LogisticRegression(max_iter=200), grid, cv=5)
        full = self.full(lambda: mk().fit(X, y))
        short, rec = self.shortened(lambda: mk().fit(X, y))
        self.assertEqual(structure(short.best_estimator_, X), structure(full.best_estimator_, X))
        self.assertEqual(structure(short, X), structure(full, X))
        self.assertEqual(sorted(short.best_params_), sorted(full.best_params_))
        self.assertEqual(short.param_grid, grid)
        self.assertEqual(rec, ["GridSearchCV.fit: 1 of 24 candidates, cv 5 -> 2"])

        mk = lambda: RandomizedSearchCV(RandomForestClassifier(n_estimators=50), {"max_depth": [2, 3, 4, 5]}, n_iter=4,
                                        random_state=0)
        full = self.full(lambda: mk().fit(X, y))
        short, rec = self.shortened(lambda: mk().fit(X, y))
        self.assertEqual(structure(short, X), structure(full, X))
        self.assertEqual(rec, ["RandomizedSearchCV.fit: 1 of 4 candidates, cv 5 -> 2"])  # nested fits not listed
        self.assertEqual(short.n_iter, 4)

    def test_cross_val_two_folds_same_structure(self):
        from sklearn import model_selection as ms
        from sklearn.linear_model import LogisticRegression

        X, y = data()
        for name in ("cross_val_score", "cross_validate", "cross_val_predict"):
            with self.subTest(fn=name):
                fn = getattr(ms, name)
                self.assertTrue(hasattr(fn, "__wrapped__"), name)
                full = self.full(lambda: fn.__wrapped__(LogisticRegression(), X, y, cv=4))
                short, rec = self.shortened(lambda: fn(LogisticRegression(), X, y, cv=4))
                if isinstance(full, dict):
                    self.assertEqual({k: (v.shape, str(v.dtype)) for k, v in short.items()},
                                     {k: (v.shape, str(v.dtype)) for k, v in full.items()})
                else:
                    self.assertEqual((short.shape, str(short.dtype)), (full.shape, str(full.dtype)))
                self.assertEqual(rec, ["%s: cv 4 -> 2" % name])

    def test_xgboost_train_rounds(self):
        if not has("xgboost"):
            self.skipTest("no xgboost")
        import xgboost

        X, y = data()
        d = xgboost.DMatrix(X, label=(X["f0"] > .5).astype(int))
        full = self.full(lambda: xgboost.train({"objective": "binary:logistic"}, d, num_boost_round=40))
        short, rec = self.shortened(lambda: xgboost.train({"objective": "binary:logistic"}, d, num_boost_round=40))
        self.assertEqual((short.num_features(), short.feature_names), (full.num_features(), full.feature_names))
        self.assertEqual(short.predict(d).shape, full.predict(d).shape)
        self.assertEqual(rec, ["train: num_boost_round 40 -> 3"])

    def test_the_users_bound_name_is_patched(self):
        SH.run_cell("from sklearn.model_selection import cross_val_score as cvs_user", store_history=False).raise_error()
        M._dl_patch_module("sklearn.model_selection", SH.user_ns)
        self.assertTrue(hasattr(SH.user_ns["cvs_user"], "__wrapped__"))

    def test_an_error_only_the_shortened_call_raises_is_not_raised(self):
        from sklearn.model_selection import GridSearchCV
        from sklearn.neighbors import KNeighborsClassifier

        X, y = data(n=100)
        # 60 neighbours: the 80-row training folds of cv=5 have enough, cv=2's 50 do not
        mk = lambda: GridSearchCV(KNeighborsClassifier(), {"n_neighbors": [60, 61]}, cv=5)
        short, rec = self.shortened(lambda: mk().fit(X, y))
        self.assertEqual(short.best_estimator_.n_features_in_, 5)
        self.assertIsNone(M._DL["crashed_in"])

    def test_a_structural_error_is_raised_when_the_full_call_raises_it(self):
        from sklearn.ensemble import RandomForestClassifier

        X, y = data()
        X = X.assign(s="text")
        with self.assertRaises(ValueError):
            self.shortened(lambda: RandomForestClassifier(n_estimators=100).fit(X, y))
        self.assertIsNone(M._DL["crashed_in"])  # the same error in full: it counts

    def test_unlisted_and_small_settings_are_left_alone(self):
        from sklearn.ensemble import RandomForestClassifier

        X, y = data()
        _, rec = self.shortened(lambda: RandomForestClassifier(n_estimators=2).fit(X, y))
        self.assertEqual(rec, [])
        _, rec = self.shortened(lambda: RandomForestClassifier(n_estimators=50, oob_score=True).fit(X, y))
        self.assertEqual(rec, [])


if __name__ == "__main__":
    unittest.main(module=THIS, verbosity=1)
