"""Judges the first-answer development set with a premortem binary and prints the figures.

usage: python3 run.py PREMORTEM [CASE.txtar...]

Each CASE.txtar holds ran.py (run first), crash.py (a cell whose full run crashes) and
clean.py (its twin, whose full run is clean). One notebook per case with both targets,
checked with --shadow-timeout 3s --shadow-full-timeout 3s: the answer the editor shows
within its budget. Prints per cell the verdict and the check's wall time, then detection,
false alarms, the share of unknown and the mean wall time per cell.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(path):
    parts = re.split(r"^-- (\S+) --\n", open(path).read(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def cell(src, n):
    return {"cell_type": "code", "execution_count": n, "metadata": {}, "outputs": [], "source": src.rstrip("\n")}


def main():
    binary = sys.argv[1]
    cases = sys.argv[2:] or sorted(glob.glob(os.path.join(HERE, "*.txtar")))
    rows = []
    for case in cases:
        d = parse(case)
        with tempfile.TemporaryDirectory() as tmp:
            nb = {"cells": [cell(d["ran.py"], 1), cell(d["crash.py"], None), cell(d["clean.py"], None)],
                  "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                  "nbformat": 4, "nbformat_minor": 5}
            p = os.path.join(tmp, "case.ipynb")
            json.dump(nb, open(p, "w"))
            for idx, kind in ((1, "crash"), (2, "clean")):
                t0 = time.monotonic()
                out = subprocess.run([binary, "check", "--format", "json", "--quiet", "--cell", str(idx),
                                      "--shadow-timeout", "3s", "--shadow-full-timeout", "3s", p],
                                     capture_output=True, text=True, timeout=300)
                wall = time.monotonic() - t0
                try:
                    c = json.loads(out.stdout)["cells"][0]
                    verdict = c["verdict"]
                    sev = [f.get("severity") for f in c.get("findings", [])]
                    why = c.get("reason") or "; ".join(f.get("message", "")[:100] for f in c.get("findings", [])[:1])
                except Exception:  # noqa: BLE001
                    verdict, sev, why = "error", [], out.stderr.strip()[:200]
                alarm = any(s in ("error", "warning") for s in sev)
                rows.append((os.path.basename(case)[:-6], kind, verdict, alarm, wall, why))
                print("%-22s %-5s %-7s alarm=%-5s %5.1fs  %s" % (rows[-1][0], kind, verdict, alarm, wall, why[:150]),
                      flush=True)
    crash = [r for r in rows if r[1] == "crash"]
    clean = [r for r in rows if r[1] == "clean"]
    found = sum(1 for r in crash if r[2] == "crash")
    false = sum(1 for r in clean if r[2] == "crash" or r[3])
    unknown = sum(1 for r in rows if r[2] == "unknown")
    print("crashes found %d/%d; false alarms %d/%d; unknown %d/%d (%.0f%%); mean wall time per check %.1fs" % (
        found, len(crash), false, len(clean), unknown, len(rows), 100.0 * unknown / max(1, len(rows)),
        sum(r[4] for r in rows) / max(1, len(rows))))


if __name__ == "__main__":
    main()
