# expect: refused InterpreterError: async for is not supported
def f(items):
    out = []
    async for v in items:
        out.append(v)
    return out
f([1, 2])
