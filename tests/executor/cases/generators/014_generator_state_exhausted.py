def g():
    yield 1
it = g()
print(list(it), list(it))
'exhausted'
