# expect: refused Forbidden access to _functools.reduce: module _functools is not allowed
# statistics imports reduce from functools, which this profile does not allow: a function of a
# module the profile does not allow is refused as a value, whatever route reaches it (the real
# open is _io.open, os.listdir is posix.listdir).
import statistics
statistics.reduce(lambda a, b: a + b, [1, 2])
