# skip: not implemented yet: async def / await / async for (AsyncFunctionDef)
async def add(a, b):
    return a + b
coro = add(2, 3)
try:
    coro.send(None)
except StopIteration as e:
    result = e.value
result
