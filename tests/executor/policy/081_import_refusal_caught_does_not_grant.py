# expect: refused The variable `os` is not defined
try:
    import os
except Exception:
    pass
os.getcwd()
