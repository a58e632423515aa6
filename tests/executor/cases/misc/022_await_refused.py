# expect: refused InterpreterError: await is not supported
x = 1
y = await x
