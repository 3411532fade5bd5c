def a():
    return b()  # resolves at run time, but 00 is then no layer below 10
