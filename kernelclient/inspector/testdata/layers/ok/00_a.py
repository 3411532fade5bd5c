A = 1


def a():
    return len([A])
