# expect: refused Forbidden access to frame object
# imports: inspect
# inspect.stack() answers the run's __main__ frame inside FrameInfo tuples: taking it out, by
# attribute or by index, is checked as a value.
import inspect
info = inspect.stack()[0]
try:
    f = info[0]
except Exception as e:
    print('index refused:', e)
f = info.frame
