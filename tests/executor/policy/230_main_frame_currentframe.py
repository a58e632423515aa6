# expect: refused Forbidden access to frame object
# imports: inspect
# A run stands on a Python frame whose globals say __main__ (main_frame.c), so that library code
# naming a class after its caller's module (enum, namedtuple, typing) sees the snippet's. Library
# code may read it; the snippet may not hold it: inspect.currentframe() answers it.
import inspect
f = inspect.currentframe()
