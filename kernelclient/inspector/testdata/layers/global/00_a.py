def a():
    return STATE
