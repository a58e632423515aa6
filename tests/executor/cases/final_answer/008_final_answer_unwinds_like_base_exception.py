# final_answer raises a BaseException (smolagents' FinalAnswerException): with exits and
# finally blocks run, `except Exception` lets it pass, CPython code in between propagates it.
class CM:
    def __enter__(self):
        print('enter')
    def __exit__(self, *exc):
        print('exit', exc[0] is not None)
def key(x):
    if x == 3:
        final_answer(['from a key function', x])
    return -x
def solve():
    try:
        with CM():
            try:
                sorted([1, 2, 3, 4], key=key)
            except Exception as e:
                print('swallowed', e)
    finally:
        print('outer finally')
solve()
'unreached'
