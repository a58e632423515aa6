# expect: error RuntimeError
# (wording differs: CPython says "super(): no arguments", the executor "__class__ cell not found")
def f():
    return super()
f()
