# expect: refused Forbidden access to introspection attribute: tb_frame
# __exit__ receives None for the traceback: no traceback object ever reaches a snippet.
class CM:
    def __enter__(self):
        return self
    def __exit__(self, et, ev, tb):
        self.tb = tb
        return True
cm = CM()
with cm:
    1 / 0
cm.tb.tb_frame
