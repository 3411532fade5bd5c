"""Converts a sphinx-gallery example script (.py) into the notebook its gallery publishes.

Used to build testdata/realnb/sklearn from Debian's python-sklearn-doc, whose examples ship
as scripts only: the module docstring and the comment block that opens each '# %%' section
(or a section marked by a line of 20 or more '#') become markdown cells, the code between
becomes code cells, saved without outputs or execution counts.

usage: /usr/bin/python3 scripts/gallery2ipynb.py EXAMPLE.py OUT.ipynb
"""
import ast
import json
import re
import sys

SEPARATOR = re.compile(r"^(# ?%%|#{20,}\s*$)")


def cells(src):
    """Returns (kind, text) pairs in page order."""
    tree = ast.parse(src)
    lines = src.splitlines()
    out = []
    start = 0
    doc = ast.get_docstring(tree, clean=False)
    if doc is not None:
        out.append(("markdown", doc.strip("\n")))
        start = tree.body[0].end_lineno
    sections, cur = [], []
    for line in lines[start:]:
        if SEPARATOR.match(line):
            sections.append(cur)
            cur = []
        else:
            cur.append(line)
    sections.append(cur)
    for i, sec in enumerate(sections):
        if i > 0:
            # The section's leading comment lines are its prose (blank lines at its top too).
            k = 0
            while k < len(sec) and (sec[k].startswith("#") or not sec[k].strip()):
                k += 1
            prose = [re.sub(r"^# ?", "", l) for l in sec[:k] if l.startswith("#")]
            if prose:
                out.append(("markdown", "\n".join(prose).strip("\n")))
            sec = sec[k:]
        code = "\n".join(sec).strip("\n")
        if code.strip():
            out.append(("code", code))
    return out


def notebook(pairs):
    """Returns an nbformat 4 notebook of the cells, without outputs."""
    nb_cells = []
    for kind, text in pairs:
        c = {"cell_type": kind, "metadata": {}, "source": text.splitlines(True)}
        if kind == "code":
            c.update(execution_count=None, outputs=[])
        nb_cells.append(c)
    return {
        "cells": nb_cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        nb = notebook(cells(f.read()))
    with open(sys.argv[2], "w") as f:
        json.dump(nb, f, indent=1)
