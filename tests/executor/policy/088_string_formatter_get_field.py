# imports: string
# expect: refused Forbidden access to dunder attribute: __func__
# Was an escape before string.Formatter was guarded: the real getattr reached random's globals, then __builtins__["eval"].
import string
import random
g = string.Formatter().get_field('0.__func__.__globals__', [random.randint], {})[0]
b = g['__builtins__']
b['eval']("__import__('os').getcwd()", {'__builtins__': b})
