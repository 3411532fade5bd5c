# Prints what changed in the kernel since setup.py ran: "" when nothing did. It reads the
# state without calling any hook of Counted (no repr, len or attribute of ds).
def _untouched_diff():
    import os, torch
    b = _untouched_before
    out = []
    if calls:
        out.append("calls %s" % sorted(calls.items()))
    if gen.bit_generator.state != b["gen"]:
        out.append("numpy Generator state changed")
    if not torch.equal(tgen.get_state(), b["tgen"]):
        out.append("torch Generator state changed")
    if rr.getstate() != b["rr"]:
        out.append("random.Random state changed")
    off = os.lseek(fh.fileno(), 0, os.SEEK_CUR)
    if off != b["offset"] or fh.tell() != b["tell"]:
        out.append("file offset %d (tell %d), was %d (tell %d)" % (off, fh.tell(), b["offset"], b["tell"]))
    return "; ".join(out)


print(_untouched_diff(), end="")
