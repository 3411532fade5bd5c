def b():
    return 1
