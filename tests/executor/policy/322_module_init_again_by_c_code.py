# imports: json, operator
# expect: refused Forbidden: calling module.__init__ again on a module object
# 321 through C code: methodcaller looks __init__ up for its caller.
import json, operator
operator.methodcaller('__init__', 'os')(json)
print(json.__name__)
