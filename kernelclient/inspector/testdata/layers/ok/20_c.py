late = b(None)
