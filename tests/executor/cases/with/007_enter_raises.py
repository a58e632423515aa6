# expect: native
class Bad:
    def __enter__(self):
        raise RuntimeError('cannot enter')
    def __exit__(self, *a):
        print('exit should not run')
with Bad():
    print('body')
