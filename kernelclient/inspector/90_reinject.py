# A re-injected module replaces this one: stop the old one's children so none is orphaned.
_previous = sys.modules.get(__name__)
if _previous is not None and _previous is not sys.modules.get("__main__"):
    _old_kill = getattr(_previous, "_kill_running", None)
    if callable(_old_kill):
        try:
            _old_kill("cancelled: the inspector was re-injected")
        except BaseException:
            pass
del _previous
