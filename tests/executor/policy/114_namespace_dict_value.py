# expect: refused Forbidden access to a module's namespace
# A dict holding __builtins__ is a module's globals (every escape so far went through one):
# refused wherever a value is checked, so no future leak of one can be used. A snippet's own
# dict with that key is refused alike when it comes back from a call (built from pairs:
# dict(__builtins__=1) is refused sooner, as a keyword argument, eval_call.c).
d = dict([('__builtins__', 1)])
