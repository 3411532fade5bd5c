def a(n=LIMIT):
    return n
