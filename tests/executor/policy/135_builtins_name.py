# expect: refused The variable `__builtins__` is not defined
__builtins__['eval']('1')
