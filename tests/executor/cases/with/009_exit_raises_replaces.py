class CM:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        raise KeyError('from exit')
try:
    with CM():
        raise ValueError('from body')
except Exception as e:
    print(type(e).__name__, e)
'ok'
