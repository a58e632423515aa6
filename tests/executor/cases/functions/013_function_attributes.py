def f():
    return f.calls
f.calls = 0
f.calls += 1
print(f(), f.__name__)
def g():
    'doc'
g.__doc__
