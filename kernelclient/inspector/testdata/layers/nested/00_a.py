class Box(object):
    def get(self):
        return [late(x) for x in (1, 2)]
