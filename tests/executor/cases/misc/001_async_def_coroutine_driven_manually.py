# expect: refused InterpreterError: async def is not supported
async def add(a, b):
    return a + b
coro = add(2, 3)
try:
    coro.send(None)
except StopIteration as e:
    result = e.value
result
