# expect: refused Forbidden access to reflection function: inspect.getattr_static
# imports: inspect
# The value route of 313 and 314: from inspect import ... names no attribute, so the function
# is refused as a value (getattr_static reads any one attribute, __globals__ included).
from inspect import signature, getattr_static
getattr_static(signature, '__globals__')
