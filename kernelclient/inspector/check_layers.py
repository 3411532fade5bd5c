"""Checks that the inspector's parts (NN_*.py, joined in name order into one module) are
layers: no part uses a module-level name that only a later part defines.

Joined into one module, a function of part 20 may call one of part 36, since the call
resolves when it runs; it works, but then part 20 can no longer be read, tested or changed
knowing only the parts before it. So every use counts, in a function body as at module
level: a name a scope reads from the module's globals must be defined (bound at module
level, or assigned under `global` in a function) by the same part or an earlier one. Names
no part defines (builtins) are not checked.

    /usr/bin/python3 kernelclient/inspector/check_layers.py [DIR]

prints one line per use of a later part's name and exits 1 when there is any; DIR defaults
to this file's folder. `go test ./kernelclient/inspector/ -run TestPartsAreLayers` runs it.
"""

import glob
import os
import symtable
import sys


def _defined(table):
    """Module-level names a part binds: at its top level, or under `global` in a scope."""
    names = set()
    for sym in table.get_symbols():
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            names.add(sym.get_name())
    stack = list(table.get_children())
    while stack:
        t = stack.pop()
        for sym in t.get_symbols():
            if sym.is_declared_global() and sym.is_assigned():
                names.add(sym.get_name())
        stack.extend(t.get_children())
    return names


def _uses(table):
    """(scope, name) for every module-level name a part reads, in any of its scopes."""
    out = []
    for sym in table.get_symbols():
        if sym.is_referenced():
            out.append(("module level", sym.get_name()))
    stack = [(c, c.get_name()) for c in table.get_children()]
    while stack:
        t, where = stack.pop()
        for sym in t.get_symbols():
            if sym.is_global() and sym.is_referenced():
                out.append((where, sym.get_name()))
        stack.extend((c, where + "." + c.get_name()) for c in t.get_children())
    return out


def violations(folder):
    """Lines naming each use of a name that only a later part defines, in part order."""
    parts = sorted(glob.glob(os.path.join(folder, "[0-9][0-9]_*.py")))
    tables = []
    first = {}  # name -> index of the first part that defines it
    for i, path in enumerate(parts):
        with open(path, encoding="utf-8") as f:
            table = symtable.symtable(f.read(), path, "exec")
        tables.append(table)
        for name in _defined(table):
            first.setdefault(name, i)
    out = []
    for i, table in enumerate(tables):
        seen = set()
        for where, name in sorted(_uses(table)):
            j = first.get(name)
            if j is not None and j > i and (where, name) not in seen:
                seen.add((where, name))
                out.append("%s: %s uses %s, first defined in the later part %s" % (
                    os.path.basename(parts[i]), where, name, os.path.basename(parts[j])))
    return out


def main(argv):
    folder = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    if not glob.glob(os.path.join(folder, "[0-9][0-9]_*.py")):
        print("no parts (NN_*.py) in %s" % folder)
        return 2
    bad = violations(folder)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
