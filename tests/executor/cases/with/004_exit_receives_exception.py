seen = {}
class Spy:
    def __enter__(self):
        return self
    def __exit__(self, et, ev, tb):
        seen['type'] = et.__name__ if et else None
        seen['msg'] = str(ev)
        return True
with Spy():
    raise ValueError('inside with')
seen['type'], seen['msg']
