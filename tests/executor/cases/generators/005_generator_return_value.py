def g():
    yield 1
    return 'ret'
it = g()
next(it)
try:
    next(it)
except StopIteration as e:
    print('value:', e.value)
e_val = None
'done'
