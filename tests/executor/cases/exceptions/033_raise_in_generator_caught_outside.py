def g():
    yield 1
    raise ValueError('from gen')
out = []
try:
    for v in g():
        out.append(v)
except ValueError as e:
    out.append(str(e))
out
