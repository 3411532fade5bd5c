"""Builds the corpus notebooks (nb/<id>.crash.ipynb, nb/<id>.fixed.ipynb, nb/<id>.ok.ipynb for
negatives) and cases.json from cases.py. Run with /usr/bin/python3 from this folder."""
import json
import os

from cases import CASES

HERE = os.path.dirname(os.path.abspath(__file__))
NB = os.path.join(HERE, "nb")

TITLES = {"pandas": "# Data cleaning and exploration", "sklearn": "# Baseline model",
          "numpy": "# Sensor features", "torch": "# Small network on sensor data",
          "notebook": "# Analysis", "negative": "# Analysis"}


def lines(src):
    parts = src.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def notebook(case, setup, target):
    cells = [{"cell_type": "markdown", "id": "title", "metadata": {}, "source": lines(TITLES[case["family"]])}]

    def code(src, ec, n):
        cells.append({"cell_type": "code", "execution_count": ec, "id": "c%02d" % n,
                      "metadata": {}, "outputs": [], "source": lines(src)})

    n = 0
    for i, src in enumerate(setup):
        n += 1
        code(src, i + 1, n)
    for src in case.get("unrun", []):
        n += 1
        code(src, None, n)
    n += 1
    target_index = len(cells)
    code(target, None, n)
    for src in case.get("after", []):
        n += 1
        code(src, None, n)
    nb = {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11"}}, "nbformat": 4, "nbformat_minor": 5}
    return nb, target_index


def write(name, nb):
    with open(os.path.join(NB, name), "w") as f:
        json.dump(nb, f, indent=1)
        f.write("\n")


def main():
    os.makedirs(NB, exist_ok=True)
    out = []
    ids = set()
    for c in CASES:
        assert c["id"] not in ids, c["id"]
        ids.add(c["id"])
        entry = {"id": c["id"], "family": c["family"], "exception": c["exception"],
                 "accept": c.get("accept", []), "line": c.get("line", 0), "description": c["desc"]}
        if c["exception"] is None:
            nb, idx = notebook(c, c["setup"], c["target"])
            write(c["id"] + ".ok.ipynb", nb)
            entry.update(crash_notebook="", fixed_notebook="nb/%s.ok.ipynb" % c["id"], cell=idx)
        else:
            nb, idx = notebook(c, c["setup"], c["target"])
            write(c["id"] + ".crash.ipynb", nb)
            fnb, fidx = notebook(c, c.get("fixed_setup", c["setup"]), c["fixed"])
            assert fidx == idx, c["id"]
            write(c["id"] + ".fixed.ipynb", fnb)
            entry.update(crash_notebook="nb/%s.crash.ipynb" % c["id"],
                         fixed_notebook="nb/%s.fixed.ipynb" % c["id"], cell=idx)
        out.append(entry)
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(len(out), "cases")


if __name__ == "__main__":
    main()
