# expect: native
d = dict(a=1, b={'c': 2})
e = d['b']
(d, e, dict(builtins=1), {'__builtins__': 1}['__builtins__'])
