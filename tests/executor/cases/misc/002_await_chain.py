# expect: refused InterpreterError: async def is not supported
async def inner():
    return 'inner'
async def outer():
    v = await inner()
    return v + '+outer'
c = outer()
try:
    c.send(None)
except StopIteration as e:
    r = e.value
r
