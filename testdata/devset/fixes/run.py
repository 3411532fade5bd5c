"""Measures premortem's quick fixes on crash cases written as txtar files, as a new user would
try them: apply the fix `premortem fix` offers as verified, run the notebook in a fresh
interpreter and check that the cell does what it meant to.

usage: /usr/bin/python3 run.py PREMORTEM CASE.txtar... [--jobs N]

A case holds ran1.py, ran2.py, ... (the executed cells, run in that order), crash.py (the
target, which raises when run after them), fixed_crash.py and fixed_ranK.py (a human's fix,
used only to prove the case) and intent.py (run after the target: it asserts what the target
was meant to compute, and fails on a non-fix that deletes or guards the crashing line).

For each case the notebook (ran cells with execution counts, the target without) goes through
`premortem check`-then-fix (`premortem fix -o`); the fixed notebook's cells, in order, then
intent.py run in one namespace in a fresh /usr/bin/python3. Outcomes: no crash predicted;
crash predicted, no verified fix; verified fix works (everything ran and intent.py passed);
verified fix fails (a bug: no fix offered as verified may fail). Prints a line per case, the
rate per exception kind and the totals.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

RUNNER = r'''
import json, sys, traceback
import types
cells = json.load(open(sys.argv[1]))
# A module registered as __main__, as in a kernel: pickling a class a cell defines works.
main = types.ModuleType("__main__")
sys.modules["__main__"] = main
ns = main.__dict__
for i, src in enumerate(cells):
    try:
        exec(compile(src, "<cell %d>" % (i + 1), "exec"), ns)
    except BaseException as e:  # noqa: BLE001
        print(json.dumps({"cell": i, "ename": type(e).__name__, "evalue": str(e).split("\n")[0][:200]}))
        sys.exit(0)
print(json.dumps({"cell": -1}))
'''


def parse(path):
    parts = re.split(r"^-- (\S+) --\n", open(path).read(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def ran_cells(d):
    names = sorted((k for k in d if re.fullmatch(r"ran\d+\.py", k)), key=lambda k: int(k[3:-3]))
    return [d[k] for k in names]


def cell(src, n):
    return {"cell_type": "code", "execution_count": n, "metadata": {}, "outputs": [],
            "source": src.rstrip("\n")}


def execute(cells, cwd):
    """Runs cells in one namespace in a fresh interpreter; returns (cell index or -1, ename, evalue)."""
    p = os.path.join(cwd, ".cells.json")
    json.dump(cells, open(p, "w"))
    env = dict(os.environ, MPLBACKEND="Agg")
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", RUNNER, p], cwd=cwd, capture_output=True, text=True,
                             timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return 0, "Timeout", "the run took over 300 s"
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{\"cell\"")]
    if not lines:
        return 0, "NoResult", out.stderr.strip()[-200:]
    r = json.loads(lines[-1])
    return r["cell"], r.get("ename", ""), r.get("evalue", "")


def measure(binary, case):
    d = parse(case)
    ran = ran_cells(d)
    row = {"id": os.path.basename(case)[:-len(".txtar")]}
    with tempfile.TemporaryDirectory() as tmp:
        at, ename, evalue = execute(ran + [d["crash.py"]], tmp)
        row["exception"] = ename
        if at != len(ran):
            row["outcome"] = "case broken: cell %d raised %s %s" % (at + 1, ename, evalue) if at >= 0 else \
                "case broken: the target runs clean"
            return row
    with tempfile.TemporaryDirectory() as tmp:
        nb = {"cells": [cell(s, i + 1) for i, s in enumerate(ran)] + [cell(d["crash.py"], None)],
              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
              "nbformat": 4, "nbformat_minor": 5}
        src, dst = os.path.join(tmp, "case.ipynb"), os.path.join(tmp, "fixed.ipynb")
        json.dump(nb, open(src, "w"))
        t0 = time.monotonic()
        out = subprocess.run([binary, "fix", "--quiet", "-o", dst, src], cwd=tmp, capture_output=True, text=True,
                             timeout=900)
        row["seconds"] = time.monotonic() - t0
        m = re.search(r"(\d+) will crash, (\d+) fixed", out.stdout)
        if not m:
            row["outcome"] = "error: " + (out.stderr.strip() or out.stdout.strip())[-200:]
            return row
        if m.group(1) == "0":
            row["outcome"] = "no crash predicted"
            return row
        t = re.search(r"^  fix: (.*)$", out.stdout, flags=re.M)
        if m.group(2) == "0" or not os.path.exists(dst):
            row["outcome"] = "no verified fix"
            return row
        row["title"] = t.group(1) if t else ""
        fixed = json.load(open(dst))
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in fixed["cells"] if c["cell_type"] == "code"]
        at, ename, evalue = execute(cells + [d["intent.py"]], tmp)
        if at < 0:
            row["outcome"] = "verified fix works"
        elif at == len(cells):
            row["outcome"] = "verified fix fails: intent.py raised %s %s" % (ename, evalue)
        else:
            row["outcome"] = "verified fix fails: cell %d raised %s %s" % (at + 1, ename, evalue)
    return row


def main():
    args = sys.argv[1:]
    jobs = 1
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    binary, cases = os.path.abspath(args[0]), args[1:]
    rows = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for row in pool.map(lambda c: measure(binary, c), cases):
            rows.append(row)
            print("%-28s %-20s %5.0fs  %s%s" % (row["id"], row.get("exception", ""), row.get("seconds", 0),
                                                 row["outcome"], "  [%s]" % row["title"] if row.get("title") else ""),
                  flush=True)
    measured = [r for r in rows if not r["outcome"].startswith(("case broken", "error"))]
    pred = [r for r in measured if r["outcome"] != "no crash predicted"]
    works = [r for r in pred if r["outcome"] == "verified fix works"]
    fails = [r for r in pred if r["outcome"].startswith("verified fix fails")]
    print("\nby exception kind (works / predicted):")
    for kind in sorted({r["exception"] for r in pred}):
        k = [r for r in pred if r["exception"] == kind]
        print("  %-24s %d / %d" % (kind, sum(1 for r in k if r in works), len(k)))
    print("cases %d (measured %d); crashes predicted %d; verified fix that works %d (%.0f%% of predicted); "
          "verified fix that fails %d; no verified fix %d" % (
              len(rows), len(measured), len(pred), len(works), 100.0 * len(works) / max(1, len(pred)), len(fails),
              len(pred) - len(works) - len(fails)))


if __name__ == "__main__":
    main()
