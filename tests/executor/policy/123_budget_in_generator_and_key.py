# expect: refused Reached the max number of operations
def gen():
    for i in range(10 ** 12):
        yield i
try:
    sorted(range(10), key=lambda x: sum(1 for _ in zip(range(10 ** 9), gen())))
except BaseException:
    print('swallowed')
