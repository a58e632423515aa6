# expect: native
class CM:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        print('exit ran')
def f():
    try:
        with CM():
            raise KeyError('deep')
    finally:
        print('finally ran')
f()
