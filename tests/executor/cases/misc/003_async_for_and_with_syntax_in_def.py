# expect: refused InterpreterError: async def is not supported
class AIter:
    def __init__(self):
        self.n = 0
    def __aiter__(self):
        return self
    async def __anext__(self):
        if self.n >= 3:
            raise StopAsyncIteration
        self.n += 1
        return self.n
async def collect():
    out = []
    async for v in AIter():
        out.append(v)
    return out
c = collect()
try:
    c.send(None)
except StopIteration as e:
    r = e.value
r
