# expect: refused Forbidden access to a module's namespace
# CPython hands values to executor functions (key=, dunders, library callbacks): the
# arguments are checked on the way in.
sorted([{'__builtins__': {}}, {}], key=lambda d: len(d))
