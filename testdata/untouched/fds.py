# Prints the kernel's open descriptors, one "fd target" a line. The descriptor listdir
# itself opens is closed by the time readlink runs, so it is not listed.
def _untouched_fds():
    import os
    out = []
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            out.append("%s %s" % (n, os.readlink("/proc/self/fd/" + n)))
        except OSError:
            pass
    return "\n".join(out)


print(_untouched_fds(), end="")
