# skip: SECURITY GAP (when `string` is allowed): string.Formatter().get_field/vformat resolve dotted fields with the real getattr, so '0.__func__.__globals__' reaches random's globals, then __builtins__['eval'] runs arbitrary CPython code; guard string.Formatter like str.format
# imports: string
# expect: refused Forbidden access to dunder attribute: __func__
import string
import random
g = string.Formatter().get_field('0.__func__.__globals__', [random.randint], {})[0]
b = g['__builtins__']
b['eval']("__import__('os').getcwd()", {'__builtins__': b})
