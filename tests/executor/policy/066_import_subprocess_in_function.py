# expect: refused Import of subprocess is not allowed
def f():
    import subprocess
    return subprocess
f()
