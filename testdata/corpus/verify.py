"""Checks that every corpus notebook behaves as cases.json claims: the run cells (those with
an execution count, in execution-count order) then the target cell are executed with exec in
a fresh forked process; the crash notebook's target must raise the recorded exception at the
recorded line, the fixed (and negative) notebook's target must not raise.

Usage: /usr/bin/python3 verify.py [ID...]     (exit 0 when every case behaves as claimed)
"""
import json
import os
import sys
import traceback

os.environ.setdefault("MPLBACKEND", "Agg")
HERE = os.path.dirname(os.path.abspath(__file__))

# Import the heavy libraries once in the parent; each notebook runs in a forked child.
import warnings  # noqa: E402

import matplotlib  # noqa: E402,F401
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401
import sklearn  # noqa: E402,F401
import torch  # noqa: E402

torch.set_num_threads(1)
warnings.simplefilter("ignore")


def run_notebook(path, target):
    """Returns (exception class name or None, 1-based line in the target or 0, message)."""
    with open(path) as f:
        nb = json.load(f)
    cells = nb["cells"]
    ran = sorted((c for c in cells if c["cell_type"] == "code" and c.get("execution_count")),
                 key=lambda c: c["execution_count"])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        result = {"exception": None, "line": 0, "message": ""}
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.chdir(os.path.dirname(os.path.abspath(path)))
            ns = {"__name__": "__main__"}
            for c in ran:
                exec(compile("".join(c["source"]), "<cell %d>" % c["execution_count"], "exec"), ns)
            src = "".join(cells[target]["source"])
            try:
                exec(compile(src, "<target>", "exec"), ns)
            except BaseException as e:  # noqa: BLE001 - we record whatever the cell raises
                line = 0
                for fr in traceback.extract_tb(e.__traceback__):
                    if fr.filename == "<target>":
                        line = fr.lineno
                result = {"exception": type(e).__name__, "line": line, "message": str(e)[:200]}
        except BaseException as e:  # noqa: BLE001
            result = {"exception": "SETUP:" + type(e).__name__, "line": 0, "message": str(e)[:300]}
        os.write(w, json.dumps(result).encode())
        os.close(w)
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    res = json.loads(data)
    return res["exception"], res["line"], res["message"]


def main(ids):
    with open(os.path.join(HERE, "cases.json")) as f:
        cases = json.load(f)
    bad = 0
    for c in cases:
        if ids and c["id"] not in ids:
            continue
        if c["crash_notebook"]:
            exc, line, msg = run_notebook(os.path.join(HERE, c["crash_notebook"]), c["cell"])
            ok = exc == c["exception"] and line == c["line"]
            bad += not ok
            print("%-4s %-28s crash: %s line %d (want %s line %d) %s" % (
                "ok" if ok else "FAIL", c["id"], exc, line, c["exception"], c["line"], msg[:90].replace("\n", " ")))
        exc, line, msg = run_notebook(os.path.join(HERE, c["fixed_notebook"]), c["cell"])
        ok = exc is None
        bad += not ok
        print("%-4s %-28s fixed: %s %s" % ("ok" if ok else "FAIL", c["id"], exc or "no exception", msg[:90].replace("\n", " ")))
    print("%d failure(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(set(sys.argv[1:])))
