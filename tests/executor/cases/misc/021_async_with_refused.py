# expect: refused InterpreterError: async with is not supported
print('before')
async with open('x') as f:
    pass
