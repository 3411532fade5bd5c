# ---------------------------------------------------------------------------------------------
# Shadow runs: the cell as both sides see it (limits, magics, the transform, the line map)

CELL_FILENAME = "<premortem-cell>"
_DEFAULT_MAX_MEMORY = 2 << 30
_OUT_LIMIT = 8192
_TRACE_LINES = 200
_TRACE_NAMES = 20


def _meminfo_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except BaseException:
        return None
    return None


def _scratch_size(max_memory):
    """Bytes of the namespace sandbox's tmpfs: a quarter of the run's memory cap (the rest is
    the cell's address space, see 45_child's _limits), at most a quarter of the memory the
    machine has available, at least 32 MiB."""
    cap = max_memory or _DEFAULT_MAX_MEMORY
    avail = _meminfo_available() or (4 << 30)
    return max(32 << 20, min(cap // 4, avail // 4))


def _statm():
    """(virtual size, rss) of this process in bytes, or (None, None)."""
    try:
        with open("/proc/self/statm") as f:
            parts = f.read().split()
        page = os.sysconf("SC_PAGE_SIZE")
        return int(parts[0]) * page, int(parts[1]) * page
    except BaseException:
        return None, None


# Cell magics handled before IPython's transformer (so line numbers stay those of the cell).
_CELL_MAGIC_RUN = frozenset(["time", "timeit", "capture", "prun"])
_CELL_MAGIC_DISPLAY = frozenset(["html", "HTML", "markdown", "latex", "svg", "javascript", "js", "md"])
# Line magics the child runs (or ignores as harmless); anything else is refused.
_LINE_MAGIC_NOOP = frozenset(["matplotlib", "autoreload", "aimport", "xmode", "pdb", "config_inline",
                              "colors", "autocall", "automagic", "precision", "doctest_mode",
                              "notebook", "qtconsole", "pprint", "autosave"])
_LINE_MAGIC_RUN = frozenset(["config", "load_ext", "reload_ext", "env", "who", "whos", "who_ls",
                             "pwd", "cd", "reset", "reset_selective", "history", "lsmagic",
                             "pinfo", "pinfo2", "psearch", "pdoc", "pdef", "psource", "pfile",
                             "magic", "page", "pylab", "xdel", "dhist", "set_env", "unalias",
                             "alias_magic", "tb", "run"])
_LINE_MAGIC_ONCE = frozenset(["time", "timeit", "prun"])


def _prepare(code):
    """Split off a cell magic; returns (body, status_dict_or_None).

    The magic line is replaced by an empty line (or the %%timeit setup statement) so the body's
    line numbers are the cell's.
    """
    lines = code.split("\n")
    k = 0
    while k < len(lines) - 1 and not lines[k].strip():
        k += 1  # IPython drops leading blank lines before looking for a cell magic
    first = lines[k].strip() if lines else ""
    if not first.startswith("%%"):
        return code, None
    parts = first[2:].split(None, 1)
    magic = parts[0] if parts else ""
    rest = parts[1] if len(parts) > 1 else ""
    if magic in _CELL_MAGIC_DISPLAY:
        return None, {"status": "ok", "reason": "%%%%%s cell only displays" % magic}
    if magic in _CELL_MAGIC_RUN:
        setup = ""
        if magic == "timeit":
            toks = rest.split()
            i = 0
            while i < len(toks) and toks[i].startswith("-"):
                if toks[i] in ("-n", "-r", "-p") and i + 1 < len(toks):
                    i += 1
                i += 1
            setup = " ".join(toks[i:])
        return "\n".join(lines[:k] + [setup] + lines[k + 1:]), None
    return None, {"status": "refused", "refused": "%%%%%s cell magic" % magic,
                  "reason": "the %%%%%s cell magic is not run in a shadow run; outcome unknown" % magic}


_CHEAP_TRANSFORM = 32 << 10  # a cell larger than this skips IPython's token pass when it has no IPython syntax


def _transform(sh, body):
    """IPython's transform of the cell, in the kernel's main thread. Its token pass
    tokenizes the whole cell in Python (1.3 s for 16,000 lines, the user's next request
    waits): a large cell with no line IPython's token transforms could rewrite (escapes
    %, !, ?, `x = %magic`, `x = !cmd`, a trailing `?`) gets only the cleanup and line
    transforms, which is what the token pass would have left."""
    if sh is None or not hasattr(sh, "transform_cell"):
        return body
    mgr = getattr(sh, "input_transformer_manager", None)
    if len(body) <= _CHEAP_TRANSFORM or mgr is None or _IPY_SYNTAX.search(body):
        return sh.transform_cell(body)
    try:
        lines = (body if body.endswith("\n") else body + "\n").splitlines(keepends=True)
        for t in list(mgr.cleanup_transforms) + list(mgr.line_transforms):
            lines = t(lines)
        cell = "".join(lines)
        for t in getattr(sh, "input_transformers_post", ()):
            cell = t(cell)
        return cell
    except AttributeError:
        return sh.transform_cell(body)  # another IPython's manager: the full transform


# A line IPython's token transforms may rewrite (a superset: a match means the full pass).
import re as _re  # noqa: E402

_IPY_SYNTAX = _re.compile(r"^[ \t]*[%!?,;/]|=[ \t]*[%!]|\?[ \t]*$|^[ \t]*(>>>|In \[)", _re.M)

_LINE_MAP_DIFF = 1 << 20  # lines x lines of the part that differs, above which the map is linear


def _line_map(orig, transformed):
    """Maps 1-based lines of the transformed cell to lines of the original cell.

    Runs in the kernel's main thread, so it is linear in the cell's size: the lines both
    share at the start and at the end map one to one, and only what differs in between is
    diffed (difflib, which is quadratic) when it is small, as it is for every cell IPython
    rewrites a few lines of (magics, `!cmd`, a leading blank line dropped). A large
    differing middle is matched line by line instead (_line_map_linear)."""
    a = orig.split("\n")
    b = transformed.rstrip("\n").split("\n")
    while a and not a[-1].strip():
        a.pop()
    while b and not b[-1].strip():
        b.pop()
    if len(a) == len(b):
        return None
    p = 0
    n = min(len(a), len(b))
    while p < n and a[p] == b[p]:
        p += 1
    q = 0
    while q < n - p and a[-1 - q] == b[-1 - q]:
        q += 1
    ma, mb = a[p:len(a) - q], b[p:len(b) - q]
    m = {}
    for j in range(p):
        m[j + 1] = j + 1
    if len(ma) * len(mb) <= _LINE_MAP_DIFF:
        import difflib

        ops = difflib.SequenceMatcher(None, ma, mb, autojunk=False).get_opcodes()
    else:
        ops = _line_map_linear(ma, mb)
    for tag, i1, i2, j1, j2 in ops:
        for j in range(j1, j2):
            m[p + j + 1] = p + min(i1 + (j - j1), max(i1, i2 - 1)) + 1
    for k in range(q):
        m[len(b) - q + k + 1] = len(a) - q + k + 1
    return m


def _line_map_linear(a, b):
    """Opcodes (as difflib's) pairing each line of b with the next equal line of a at or
    after the last match (a bisect over each text's positions): O(n log n). Lines of b with
    no such match (rewritten magics) map to the current line of a."""
    import bisect

    where = {}
    for i, line in enumerate(a):
        where.setdefault(line, []).append(i)
    ops, i = [], 0
    for j, line in enumerate(b):
        pos = where.get(line)
        k = bisect.bisect_left(pos, i) if pos else 0
        if pos and k < len(pos):
            ops.append(("equal", pos[k], pos[k] + 1, j, j + 1))
            i = pos[k] + 1
        else:
            at = min(i, max(len(a) - 1, 0))
            ops.append(("replace", at, at + 1, j, j + 1))
    return ops


def _map(lmap, line):
    if not line:
        return 0
    if lmap is None:
        return line
    return lmap.get(line, line)


def _orig_line(code, line):
    lines = _src_lines(code)
    if 1 <= line <= len(lines):
        return lines[line - 1].strip()[:300]
    return ""
